package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rule is its file and its golden cases: NAME.go registers it, and
// testdata/NAME.txtar has true positives and near misses both: at least one
// finding of the rule in a want section, and at least one case, marked
// "near miss" in a comment, that gets none. (Package check runs the golden
// files.) No file of testdata is left without its rule.
func TestEveryRuleIsAFileAndItsCases(t *testing.T) {
	require.NotEmpty(t, All())
	for _, r := range All() {
		assert.FileExists(t, r.Name+".go", "rule %s has no file of its own", r.Name)
		assert.Contains(t, []string{Error, Warning}, r.Level, r.Name)
		assert.NotEmpty(t, r.Summary, r.Name)
		assert.NotEmpty(t, r.Fix, r.Name)
		data, err := os.ReadFile(filepath.Join("testdata", r.Name+".txtar"))
		if !assert.NoError(t, err, "rule %s has no golden file", r.Name) {
			continue
		}
		ar := txtar.Parse(data)
		found, nearMiss := false, false
		for _, f := range ar.Files {
			if f.Name == "want" || strings.HasPrefix(f.Name, "want ") {
				found = found || bytes.Contains(f.Data, []byte(": "+r.Level+": "+r.Name+": "))
			} else {
				nearMiss = nearMiss || bytes.Contains(bytes.ToLower(f.Data), []byte("near miss"))
			}
		}
		assert.True(t, found, "%s.txtar: no finding of the rule", r.Name)
		assert.True(t, nearMiss, "%s.txtar: no near miss", r.Name)
	}
	names, err := filepath.Glob("testdata/*.txtar")
	require.NoError(t, err)
	for _, n := range names {
		name := strings.TrimSuffix(filepath.Base(n), ".txtar")
		i := -1
		for j, r := range All() {
			if r.Name == name {
				i = j
			}
		}
		assert.GreaterOrEqual(t, i, 0, "%s is no rule's", n)
	}
}

// Every error rule says whether the admission policy judges it, and why
// not when it does not; a warning is not the policy's.
func TestEveryErrorSaysWhetherThePolicyJudgesIt(t *testing.T) {
	for _, r := range All() {
		switch {
		case r.Policy:
			assert.Equal(t, Error, r.Level, "%s: the policy refuses errors only", r.Name)
			assert.Empty(t, r.PolicyOmits, r.Name)
		case r.Level == Error:
			assert.NotEmpty(t, r.PolicyOmits, "%s: an error rule that the policy leaves out says why", r.Name)
		}
	}
}

// The registry is in the order of the names, whatever the order in which
// the files registered their rules: the order the rules are judged in, and
// in which docs/check.md lists them.
func TestRegistryIsInNameOrder(t *testing.T) {
	all := All()
	for i := 1; i < len(all); i++ {
		assert.Less(t, all[i-1].Name, all[i].Name)
	}
	assert.Panics(t, func() { register(Rule{Name: all[0].Name}) }, "a name twice")
}
