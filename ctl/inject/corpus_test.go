package inject

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/proxies"
)

// The releases the corpus is injected and checked with: none stated,
// classic sidecars, native ones.
var releases = []string{"", "linkerd=2.19,istio=1.26,kubernetes=1.32", "linkerd=2.20,istio=1.27,kubernetes=1.33"}

func versions(t *testing.T, s string) map[string]proxies.Version {
	t.Helper()
	if s == "" {
		return nil
	}
	cfg, err := config.ParseTool([]string{"check", "--versions", s, "x"}, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	return cfg.Check.Versions
}

// corpus is every manifest of --check's corpus and of examples/, each
// archive or directory as a set of files that go together (a Namespace
// beside its pods), stripped of proxy-await, in a directory of its own.
func corpus(t *testing.T) map[string]string {
	t.Helper()
	sets := map[string]string{}
	archives, err := filepath.Glob("../check/testdata/corpus/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, archives)
	for _, name := range archives {
		ar, err := txtar.ParseFile(name)
		require.NoError(t, err)
		dir := t.TempDir()
		for _, f := range ar.Files {
			if f.Name == "want" || strings.HasPrefix(f.Name, "want ") {
				continue
			}
			p := filepath.Join(dir, f.Name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			data := f.Data
			if manifestName(f.Name) && !strings.Contains(f.Name, "templates/") {
				data = strip(t, data, nil)
			}
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
		sets[strings.TrimSuffix(filepath.Base(name), ".txtar")] = dir
	}
	dir := t.TempDir()
	examples, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	examples = append(examples, "../../examples/distroless/deployment.yaml")
	for _, name := range examples {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		var entrypoint []string
		if strings.Contains(name, "distroless") {
			entrypoint = []string{"/proxy-await"} // its Dockerfile's ENTRYPOINT
		}
		rel, _ := filepath.Rel("../../examples", name)
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, strip(t, data, entrypoint), 0o644))
	}
	sets["examples"] = dir
	return sets
}

func manifestName(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// The property --inject is for: every manifest of the corpus and of
// examples/, stripped of proxy-await, comes out of --inject with no error
// that --check finds, with the same releases, and injecting that again
// changes no byte. Only what --inject says it skipped or refused is left
// as it was.
func TestCorpusInjected(t *testing.T) {
	adopted := 0
	t.Cleanup(func() { assert.Greater(t, adopted, 100, "containers adopted in all") })
	for name, dir := range corpus(t) {
		for _, rel := range releases {
			t.Run(name+"/"+rel, func(t *testing.T) {
				v := versions(t, rel)
				r := run(t.Context(), []string{dir}, Options{Versions: v, Image: "registry.example.com/proxy-await:1"})
				skipped := map[string]bool{}
				for _, l := range r.Lines {
					t.Logf("%s", l)
					assert.NotContains(t, l.Message, "not changed", "every layout of the corpus is edited")
					skipped[l.File+" "+l.Kind+"/"+l.Name] = true
				}
				adopted += r.Adopted
				out := t.TempDir()
				paths := writeUnder(t, out, dir, r.Written)
				findings, _ := check.Paths(paths, check.Options{Versions: v})
				for _, f := range findings {
					rel, _ := filepath.Rel(out, f.File)
					if f.Level == rules.Warning {
						t.Logf("%s", f)
					}
					if f.Rule == "proxy-loss-hangs" && !skipped[filepath.Join(dir, rel)+" "+f.Kind+"/"+f.Name] {
						t.Errorf("--inject left a Job that hangs when its proxy dies: %s", f)
					}
					if f.Level == rules.Error && !skipped[filepath.Join(dir, rel)+" "+f.Kind+"/"+f.Name] {
						t.Errorf("%s", f)
					}
				}
				again := run(t.Context(), paths, Options{Versions: v, Image: "registry.example.com/proxy-await:1"})
				require.Len(t, again.Written, len(r.Written))
				for i, w := range again.Written {
					assert.Equal(t, string(r.Written[i].Data), string(w.Data), "%s injected twice", w.Name)
				}
			})
		}
	}
}

// writeUnder writes each file as inject wrote it into out, at its path
// relative to from, and gives their paths.
func writeUnder(t *testing.T, out, from string, written []file) []string {
	var paths []string
	for _, w := range written {
		rel, err := filepath.Rel(from, w.Name)
		require.NoError(t, err)
		p := filepath.Join(out, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, w.Data, 0o644))
		paths = append(paths, p)
	}
	return paths
}
