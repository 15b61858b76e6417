package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/check.md's table of what the policy covers is the rules' own word:
// a row "yes" for each rule the policy judges, "no" with the rule's
// PolicyOmits for each it leaves out, and no other row.
func TestDocsListCoverage(t *testing.T) {
	data, err := os.ReadFile("../../docs/check.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(data), "<!-- policy coverage: a test holds this table to the rules' Policy and PolicyOmits -->\n")
	require.True(t, ok, "docs/check.md has no table of the policy's coverage")
	table, _, _ = strings.Cut(table, "\n\n")
	type row struct{ covered, why string }
	rows := map[string]row{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		require.Len(t, cells, 3, line)
		rows[strings.Trim(cells[0], "`")] = row{cells[1], cells[2]}
	}
	for _, r := range Covered() {
		assert.Equal(t, "yes", rows[r.Name].covered, "%s is covered", r.Name)
	}
	for _, r := range Omitted() {
		assert.Equal(t, row{"no", r.PolicyOmits}, rows[r.Name], "%s is not covered", r.Name)
	}
	assert.Len(t, rows, len(Covered())+len(Omitted()))
}

// Each rule that says the policy judges it has its validation, and there
// is no validation of another rule.
func TestEveryCoveredRuleHasAValidation(t *testing.T) {
	var covered []string
	for _, r := range Covered() {
		covered = append(covered, r.Name)
		assert.Contains(t, validationWriters, r.Name)
	}
	for name := range validationWriters {
		assert.Contains(t, covered, name, "a validation of %s, which says the policy does not judge it", name)
	}
}
