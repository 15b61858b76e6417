package inject

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/imageconfig"
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
				if !slices.Contains(args, f.Name) { // an --entrypoints file is no manifest
					paths = append(paths, p)
				}
			}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if rest, ok := strings.CutPrefix(line, "check: "); ok {
					paths = nil
					for _, p := range strings.Fields(rest) {
						paths = append(paths, filepath.Join(dir, p))
					}
				}
			}
			opt := options(t, args, dir)
			r := Paths(t.Context(), paths, opt)
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

			// check of what inject wrote, with the same --versions, finds no
			// error in a pod whose containers were not skipped as failures.
			failed := map[string]bool{}
			for _, l := range r.Lines {
				if l.failure {
					failed[l.File+" "+l.Kind+"/"+l.Name] = true
				}
			}
			outDir := t.TempDir()
			var outs []string
			for _, w := range r.Written {
				out := filepath.Join(outDir, filepath.Base(w.Name))
				require.NoError(t, os.WriteFile(out, w.Data, 0o644))
				outs = append(outs, out)
			}
			findings, _ := check.Paths(outs, check.Options{Versions: opt.Versions})
			for _, f := range findings {
				if f.Level == "error" && !failed[filepath.Join(dir, filepath.Base(f.File))+" "+f.Kind+"/"+f.Name] {
					t.Errorf("check of what inject wrote: %s", f)
				}
			}

			// What --inject writes, it writes again byte for byte.
			again := filepath.Join(t.TempDir(), "injected")
			require.NoError(t, os.WriteFile(again, r.Output, 0o644))
			twice := Paths(t.Context(), []string{again}, opt)
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

// options are inject's, as config parses them from args, with an
// --entrypoints file in dir. No test asks a registry but its own: the
// images of the containers that set no command are those of the file.
func options(t *testing.T, args []string, dir string) Options {
	t.Helper()
	cfg, err := config.ParseTool(append(append([]string{"inject"}, args...), "x"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	c := cfg.Inject
	file := ""
	if c.Entrypoints != "" {
		file = filepath.Join(dir, c.Entrypoints)
	}
	res, err := imageconfig.New(imageconfig.Options{Platform: c.Platform, File: file, NoRegistry: true})
	require.NoError(t, err)
	return Options{Versions: c.Versions, Image: c.Image, Containers: c.Containers, Images: res}
}

// Adopting one container, then the others, adds the volume and the init
// container once: a second --inject finds them by name.
func TestAdoptsTheRestOnce(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/choose.txtar")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(p, ar.Files[0].Data, 0o644))
	first := Paths(t.Context(), []string{p}, options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3", "--container", "worker"}, ""))
	require.Equal(t, 1, first.Adopted)
	require.NoError(t, os.WriteFile(p, first.Output, 0o644))
	second := Paths(t.Context(), []string{p}, options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3"}, ""))
	require.Equal(t, 1, second.Adopted, "web, the one left")
	out := string(second.Output)
	assert.Equal(t, 1, strings.Count(out, "- name: proxy-await-install"), "%s", out)
	assert.Equal(t, 1, strings.Count(out, "emptyDir:"), "%s", out)
	assert.Equal(t, 2, strings.Count(out, "readOnly: true"), "%s", out)
	assert.Equal(t, 2, strings.Count(out, "/proxy-await/proxy-await,"), "%s", out)
}

// inject writes the --proxy-lost that check's proxy-loss-hangs suggests:
// the two commands give one advice.
func TestProxyLostAsCheckSuggests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    metadata: {annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-admin-shutdown: enabled}}
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: registry.example.com/export:1
          command: [/usr/local/bin/proxy-await, --proxy, linkerd, -S, --, /export]
`), 0o644))
	findings, _ := check.Paths([]string{path}, check.Options{})
	var suggested string
	for _, f := range findings {
		if f.Rule == "proxy-loss-hangs" {
			_, rest, ok := strings.Cut(f.Message, "add --proxy-lost ")
			require.True(t, ok, "%s", f)
			suggested, _, _ = strings.Cut(rest, ",")
		}
	}
	require.NotEmpty(t, suggested, "check suggests a --proxy-lost for %s", path)
	assert.Equal(t, suggested, proxyLost.String())
}
