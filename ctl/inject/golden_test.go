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
			r := run(t.Context(), paths, opt)
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

			// --undo of what inject wrote gives back each file as it was,
			// byte for byte.
			undo := opt
			undo.Undo = true
			back := run(t.Context(), outs, undo)
			require.Len(t, back.Written, len(r.Written))
			for i, w := range back.Written {
				orig, err := os.ReadFile(r.Written[i].Name)
				require.NoError(t, err)
				assert.Equal(t, string(orig), string(w.Data), "--undo of what inject wrote of %s", filepath.Base(w.Name))
			}
			assert.False(t, back.Failed, "--undo: %v", back.Lines)
			findings, _ := check.Paths(outs, check.Options{Versions: opt.Versions, Native: opt.Native})
			for _, f := range findings {
				if f.Level == "error" && !failed[filepath.Join(dir, filepath.Base(f.File))+" "+f.Kind+"/"+f.Name] {
					t.Errorf("check of what inject wrote: %s", f)
				}
			}

			// What --inject writes, it writes again byte for byte.
			again := filepath.Join(t.TempDir(), "injected")
			require.NoError(t, os.WriteFile(again, r.Output, 0o644))
			twice := run(t.Context(), []string{again}, opt)
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
	return Options{Versions: c.Versions, Native: c.Native, Image: c.Image, Containers: c.Containers, Images: res}
}

// Adopting one container, then injecting again without --container,
// adopts the others too, with one volume and one init container; a
// container adopted before stays adopted whatever --container says now.
func TestAdoptsTheRestOnce(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/choose.txtar")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(p, ar.Files[0].Data, 0o644))
	first := run(t.Context(), []string{p}, options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3", "--container", "worker"}, ""))
	require.Equal(t, 1, first.Adopted)
	require.NoError(t, os.WriteFile(p, first.Output, 0o644))
	for _, args := range [][]string{nil, {"--container", "web"}} {
		second := run(t.Context(), []string{p}, options(t, append([]string{"--image", "registry.example.com/proxy-await:1.2.3"}, args...), ""))
		require.Equal(t, 2, second.Adopted, "worker again, and web")
		out := string(second.Output)
		assert.Equal(t, 1, strings.Count(out, "- name: proxy-await-install"), "%s", out)
		assert.Equal(t, 1, strings.Count(out, "emptyDir:"), "%s", out)
		assert.Equal(t, 2, strings.Count(out, "readOnly: true"), "%s", out)
		assert.Equal(t, 2, strings.Count(out, "[/proxy-await/proxy-await,"), "%s", out)
	}
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

// After a mesh upgrade, injecting again works the pods out from the new
// releases: Linkerd 2.20 on Kubernetes 1.33 runs a native proxy, so the
// Job's -S and what it asked of the proxy go, and what is written is what
// inject writes of the manifest as it was before it; --undo gives that
// back, byte for byte.
func TestInjectAfterAMeshUpgrade(t *testing.T) {
	before := []byte(`apiVersion: batch/v1
kind: Job
metadata:
  name: reindex   # nightly
  namespace: search
spec:
  template:
    metadata:
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/proxy-admin-shutdown: disabled
    spec:
      restartPolicy: Never
      containers:
        - name: reindex
          image: registry.example.com/search:5
          command: ["/app/reindex", "--all"]
          ports:
            - containerPort: 8080
          readinessProbe:
            tcpSocket: {port: 8080}
`)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	inject := func(data []byte, versions ...string) *collected {
		args := []string{"--image", "registry.example.com/proxy-await:1.2.3"}
		if len(versions) > 0 {
			args = append(args, "--versions", strings.Join(versions, ","))
		}
		return run(t.Context(), []string{write("job.yaml", data)}, options(t, args, dir))
	}
	old := inject(before, "linkerd=2.19")
	require.Equal(t, 1, old.Adopted)
	require.Contains(t, string(old.Output), "-S")
	require.Contains(t, string(old.Output), "config.linkerd.io/proxy-admin-shutdown: enabled")

	upgraded := inject(old.Output, "linkerd=2.20", "kubernetes=1.33")
	fresh := inject(before, "linkerd=2.20", "kubernetes=1.33")
	assert.Equal(t, string(fresh.Output), string(upgraded.Output), "injected after the upgrade, as if for the first time")
	assert.NotContains(t, string(upgraded.Output), "-S", "a native proxy needs no shutdown")
	assert.Contains(t, string(upgraded.Output), "config.linkerd.io/proxy-admin-shutdown: disabled", "the pod's own setting, as it was")
	container := 1 + slices.Index(strings.Split(string(old.Output), "\n"), "        - name: reindex")
	assert.Equal(t, container, upgraded.Lines[len(upgraded.Lines)-1].Line, "lines are those of the file read: %s", upgraded.Lines[len(upgraded.Lines)-1])

	undo := options(t, []string{"--image", "registry.example.com/proxy-await:1.2.3"}, dir)
	undo.Undo = true
	back := run(t.Context(), []string{write("job.yaml", upgraded.Output)}, undo)
	assert.Equal(t, string(before), string(back.Output))
	require.Len(t, back.Lines, 1)
	assert.Equal(t, "job.yaml:1: undone: Job/reindex: what inject changed is taken back: reindex no longer runs proxy-await", strings.TrimPrefix(back.Lines[0].String(), dir+string(filepath.Separator)))
}

// Files are told apart by their place among the paths, not their names:
// stdin given twice is read once, and the second "-" holds nothing, so an
// injected input read from it is written once, injected again or taken
// back, and after it only the marker of the second, empty file.
func TestStdinTwiceIsReadOnce(t *testing.T) {
	pod := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web, annotations: {linkerd.io/inject: enabled}}\nspec:\n  containers:\n    - name: web\n      image: registry.example.com/web:1\n      command: [/web]\n      ports: [{containerPort: 8080}]\n")
	opt := Options{Image: "registry.example.com/proxy-await:1"}
	injected := run(t.Context(), []string{"-"}, Options{Image: opt.Image, Stdin: bytes.NewReader(pod)})
	require.Equal(t, 1, injected.Adopted)

	opt.Stdin = bytes.NewReader(injected.Output)
	again := run(t.Context(), []string{"-", "-"}, opt)
	assert.Equal(t, string(injected.Output)+"---\n", string(again.Output), "injected again, once")
	assert.Equal(t, 1, again.Adopted)

	opt.Stdin, opt.Undo = bytes.NewReader(injected.Output), true
	back := run(t.Context(), []string{"-", "-"}, opt)
	assert.Equal(t, string(pod)+"---\n", string(back.Output), "taken back, once")
}
