package policy

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/check.md's table of what the policy covers is Covered and
// NotCovered, and every error rule of --check is in one of them.
func TestDocsListCoverage(t *testing.T) {
	data, err := os.ReadFile("../../docs/check.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(data), "<!-- policy coverage: a test holds this table to policy.Covered and policy.NotCovered -->\n")
	require.True(t, ok, "docs/check.md has no table of the policy's coverage")
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, " | ")
		require.GreaterOrEqual(t, len(cells), 3, line)
		rows[strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")] = cells[1]
	}
	for _, r := range Covered {
		assert.Equal(t, "yes", rows[r], "%s is covered", r)
	}
	for _, u := range NotCovered {
		assert.Equal(t, "no", rows[u.Rule], "%s is not covered", u.Rule)
	}
	assert.Len(t, rows, len(Covered)+len(NotCovered))
	for _, r := range rules.All() {
		if r.Level == rules.Error {
			not := slices.ContainsFunc(NotCovered, func(u Uncovered) bool { return u.Rule == r.Name })
			assert.True(t, not || slices.Contains(Covered, r.Name), "the error rule %s is neither covered nor said not to be", r.Name)
		}
	}
}
