package check

import (
	"os"
	"strings"
	"testing"

	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rulesTableHead starts docs/check.md's table of rules.
const rulesTableHead = "| rule | level | when | fix |\n|---|---|---|---|\n"

// rulesTable is the table of Rules as docs/check.md shows it.
func rulesTable() string {
	var b strings.Builder
	b.WriteString(rulesTableHead)
	for _, r := range rules.All() {
		b.WriteString("| `" + r.Name + "` | " + r.Level + " | " + r.Summary + " | " + r.Fix + " |\n")
	}
	return b.String()
}

// docs/check.md's table of rules is the code's table, row for row:
// go test -run DocsRules -update rewrites it.
func TestDocsRulesTable(t *testing.T) {
	const page = "../../docs/check.md"
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(data), rulesTableHead)
	require.True(t, ok, "docs/check.md has no table of rules")
	table := rulesTableHead
	for _, line := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		table += line
	}
	if *update {
		after := strings.TrimPrefix(rest, strings.TrimPrefix(table, rulesTableHead))
		require.NoError(t, os.WriteFile(page, []byte(before+rulesTable()+after), 0o644))
		return
	}
	assert.Equal(t, rulesTable(), table, "docs/check.md's table of rules: go test ./check -run DocsRules -update")
}
