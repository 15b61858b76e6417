package check

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzManifest feeds the whole check anything, read from stdin: it never
// panics, a finding always has a rule and a message on one line.
// (manifest's FuzzRead holds the reading to its bounds.)
func FuzzManifest(f *testing.F) {
	archives, err := filepath.Glob("testdata/*/*.txtar")
	require.NoError(f, err)
	rules, err := filepath.Glob("../rules/testdata/*.txtar")
	require.NoError(f, err)
	archives = append(archives, rules...)
	for _, name := range archives {
		ar, err := txtar.ParseFile(name)
		require.NoError(f, err)
		for _, file := range ar.Files {
			if !isWant(file.Name) {
				f.Add(file.Data)
			}
		}
	}
	f.Add([]byte("kind: Pod\nspec: &s {containers: [{command: [sh, -c, 'exec proxy-await \"$@\" $(x)']}], initContainers: *s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return // keep each input quick
		}
		findings, _ := Paths([]string{"-"}, Options{Stdin: bytes.NewReader(data)})
		for _, fd := range findings {
			assert.NotEmpty(t, fd.Rule)
			assert.NotEmpty(t, fd.Message)
			assert.NotContains(t, fd.String(), "\n")
		}
	})
}
