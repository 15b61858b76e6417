package inject

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
)

var update = flag.Bool("update", false, "rewrite the golden files' want and lines sections with what --inject writes")

// Each case is a txtar archive: manifests, then "want", what --inject
// writes for them (every file, in order), and "lines", what it says on
// stderr of the containers it skipped and the files it refused. A line
// "inject: FLAG..." in the archive's comment gives --inject's other flags
// (--versions, --container, --image; registry.example.com/proxy-await:1.2.3
// unless it says otherwise); "check: PATH..." names what to read
// (default: every manifest, in order). go test -run Golden -update
// rewrites want and lines, which are then read line by line.
func TestGolden(t *testing.T) {
	archives, err := filepath.Glob("testdata/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, archives)
	for _, name := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(name)
			require.NoError(t, err)
			dir := t.TempDir()
			var paths []string
			args := []string{"--image", "registry.example.com/proxy-await:1.2.3"}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if rest, ok := strings.CutPrefix(line, "inject: "); ok {
					args = append(args, strings.Fields(rest)...)
				}
			}
			for _, f := range ar.Files {
				if f.Name == "want" || f.Name == "lines" {
					continue
				}
				p := filepath.Join(dir, f.Name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, f.Data, 0o644))
				paths = append(paths, p)
			}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if rest, ok := strings.CutPrefix(line, "check: "); ok {
					paths = nil
					for _, p := range strings.Fields(rest) {
						paths = append(paths, filepath.Join(dir, p))
					}
				}
			}
			opt := options(t, args)
			r := Paths(paths, opt)
			var lines bytes.Buffer
			for _, l := range r.Lines {
				lines.WriteString(strings.ReplaceAll(l.String(), dir+string(filepath.Separator), "") + "\n")
			}
			got := map[string][]byte{"want": r.Output, "lines": lines.Bytes()}
			changed := false
			for _, section := range []string{"want", "lines"} {
				i := fileIndex(ar, section)
				switch {
				case *update && i < 0 && len(got[section]) > 0:
					ar.Files, changed = append(ar.Files, txtar.File{Name: section, Data: got[section]}), true
				case *update && i >= 0 && !bytes.Equal(ar.Files[i].Data, got[section]):
					ar.Files[i].Data, changed = got[section], true
				case *update:
				case i >= 0:
					assert.Equal(t, string(ar.Files[i].Data), string(got[section]), "%s, section %s", name, section)
				default:
					assert.Empty(t, string(got[section]), "%s has no section %s", name, section)
				}
			}
			if changed {
				require.NoError(t, os.WriteFile(name, txtar.Format(ar), 0o644))
			}

			// What --inject writes, it writes again byte for byte.
			again := filepath.Join(t.TempDir(), "injected")
			require.NoError(t, os.WriteFile(again, r.Output, 0o644))
			twice := Paths([]string{again}, opt)
			assert.Equal(t, string(r.Output), string(twice.Output), "injected twice")
		})
	}
}

func fileIndex(ar *txtar.Archive, name string) int {
	for i, f := range ar.Files {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// options are --inject's, as config parses them from args.
func options(t *testing.T, args []string) Options {
	t.Helper()
	cfg, err := config.ParseTool(append(append([]string{"inject"}, args...), "x"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	c := cfg.Inject
	return Options{Versions: c.Versions, Native: c.Native, Image: c.Image, Containers: c.Containers}
}

// Adopting one container, then the others, adds the volume and the init
// container once: a second --inject finds them by name.
func TestAdoptsTheRestOnce(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/choose.txtar")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(p, ar.Files[0].Data, 0o644))
	first := Paths([]string{p}, options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3", "--container", "worker"}))
	require.Equal(t, 1, first.Adopted)
	require.NoError(t, os.WriteFile(p, first.Output, 0o644))
	second := Paths([]string{p}, options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3"}))
	require.Equal(t, 1, second.Adopted, "web, the one left")
	out := string(second.Output)
	assert.Equal(t, 1, strings.Count(out, "- name: proxy-await-install"), "%s", out)
	assert.Equal(t, 1, strings.Count(out, "emptyDir:"), "%s", out)
	assert.Equal(t, 2, strings.Count(out, "readOnly: true"), "%s", out)
	assert.Equal(t, 2, strings.Count(out, "/proxy-await/proxy-await,"), "%s", out)
}
