package check

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/proxies"
)

var update = flag.Bool("update", false, "rewrite the golden files' want sections with what --check finds")

// Each rule's cases, and a corpus of manifests as teams write them, are
// golden files: a txtar archive of manifests and, in each section named
// "want [PATH...] [--versions NAME=V,...]", the exact findings --check
// prints for those paths with those releases. The archive's comment says
// what the cases are; a line "check: PATH..." in it names what to check
// when a section names no path (default: every file of the archive, in
// order). Findings name files relative to the archive. go test -run Golden
// -update rewrites the want sections.
func TestGolden(t *testing.T) {
	archives, err := filepath.Glob("../rules/testdata/*.txtar")
	require.NoError(t, err)
	corpus, err := filepath.Glob("testdata/corpus/*.txtar")
	require.NoError(t, err)
	cases, err := filepath.Glob("testdata/cases/*.txtar")
	require.NoError(t, err)
	archives = append(append(archives, cases...), corpus...)
	require.NotEmpty(t, archives)
	for _, name := range archives {
		t.Run(goldenName(name), func(t *testing.T) {
			ar, err := txtar.ParseFile(name)
			require.NoError(t, err)
			dir := t.TempDir()
			var paths []string
			wants := 0
			for _, f := range ar.Files {
				if isWant(f.Name) {
					wants++
					continue
				}
				p := filepath.Join(dir, f.Name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, f.Data, 0o644))
				paths = append(paths, p)
			}
			require.NotZero(t, wants, "%s has no want section", name)
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if rest, ok := strings.CutPrefix(line, "check: "); ok {
					paths = nil
					for _, p := range strings.Fields(rest) {
						paths = append(paths, filepath.Join(dir, p))
					}
				}
			}
			changed := false
			for i, f := range ar.Files {
				if !isWant(f.Name) {
					continue
				}
				names, versions, _ := strings.Cut(strings.TrimPrefix(f.Name, "want"), "--versions")
				these := paths
				if fields := strings.Fields(names); len(fields) > 0 {
					these = nil
					for _, p := range fields {
						these = append(these, filepath.Join(dir, p))
					}
				}
				got := checkOutput(t, dir, strings.TrimSpace(versions), these)
				if *update {
					if !bytes.Equal(got, f.Data) {
						ar.Files[i].Data, changed = got, true
					}
					continue
				}
				assert.Equal(t, string(f.Data), string(got), "%s, section %q", name, f.Name)
			}
			if changed {
				require.NoError(t, os.WriteFile(name, txtar.Format(ar), 0o644))
			}
		})
	}
}

// goldenName is a golden file's test name: rules/NAME (a rule's, in
// package rules' testdata), cases/NAME, corpus/NAME.
func goldenName(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "testdata" {
		dir = filepath.Dir(dir)
	}
	return filepath.Base(dir) + "/" + strings.TrimSuffix(filepath.Base(path), ".txtar")
}

func isWant(name string) bool { return name == "want" || strings.HasPrefix(name, "want ") }

// checkOutput is what --check prints for paths with those releases, with
// file names relative to dir.
func checkOutput(t *testing.T, dir, versions string, paths []string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines(t, versions, paths...) {
		b.WriteString(strings.ReplaceAll(l, dir+string(filepath.Separator), ""))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// lines checks paths and returns every finding as --check prints it.
func lines(t *testing.T, versions string, paths ...string) []string {
	t.Helper()
	opt := Options{Versions: map[string]proxies.Version{}}
	if versions != "" {
		cfg, err := config.ParseTool([]string{"check", "--versions", versions, "x"}, func(string) (string, bool) { return "", false })
		require.NoError(t, err)
		opt.Versions, opt.Native = cfg.Check.Versions, cfg.Check.Native
	}
	findings, _ := Paths(paths, opt)
	var out []string
	for _, f := range findings {
		out = append(out, f.String())
	}
	return out
}
