package inject

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/internal/registrytest"
)

// fleet is the repository's fleet of upstream manifests, most of whose
// containers set no command (testdata/fleet/README.md), and the record of
// their images' ENTRYPOINT and CMD, with the source of each.
const fleet = "../../testdata/fleet"

// fleetDoc is the page that holds the fleet's table, between its markers.
const (
	fleetDoc   = "../../docs/inject.md"
	fleetBegin = "<!-- fleet: the table TestFleet in ctl/inject writes (go test ./ctl/inject -run Fleet -update) -->\n"
	fleetEnd   = "<!-- end of the fleet's table -->\n"
)

// fleetFiles are the fleet's manifests, in order.
func fleetFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(fleet, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".yaml" && d.Name() != "entrypoints.yaml" {
			files = append(files, path)
		}
		return err
	}))
	require.GreaterOrEqual(t, len(files), 40)
	return files
}

// fleetRegistry serves every image of the fleet from registries in this
// process, under the images' own names: a multi-platform index whose
// linux/amd64 image runs what entrypoints.yaml records, beside a
// linux/arm64 one that runs something else. An image pinned by digest
// names content no test can make again, so those few come from an
// entrypoints file written from the record, as an air-gapped cluster's
// would be; it gives the resolver and how many images each serves.
func fleetRegistry(t *testing.T) (*imageconfig.Resolver, int, int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fleet, "entrypoints.yaml"))
	require.NoError(t, err)
	recorded, err := imageconfig.ParseEntrypoints(data)
	require.NoError(t, err)
	_, tr := registrytest.World(t)
	pinned := map[string]any{}
	served := 0
	for full, c := range recorded {
		ref, err := name.ParseReference(full)
		require.NoError(t, err)
		if _, ok := ref.(name.Digest); ok {
			pinned[full] = map[string][]string{"entrypoint": c.Entrypoint, "cmd": c.Cmd}
			continue
		}
		amd := registrytest.Image(t, "linux/amd64", c.Entrypoint, c.Cmd)
		arm := registrytest.Image(t, "linux/arm64", []string{"/not-this-platform"}, nil)
		registrytest.Push(t, full, registrytest.Index(t, arm, amd), tr)
		served++
	}
	file := filepath.Join(t.TempDir(), "pinned.yaml")
	out, err := yaml.Marshal(pinned)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, out, 0o644))
	res, err := imageconfig.New(imageconfig.Options{File: file, Transport: tr})
	require.NoError(t, err)
	return res, served, len(pinned)
}

// The fleet, read through its images' registries: with each set of
// releases, every application container beside a sidecar is adopted, and
// no container that needs proxy-await is left without it; check of what
// inject wrote finds no error; injecting that again gives the same bytes,
// and --undo the fleet as it was. docs/inject.md holds the table of what
// became of each file, with classic sidecars.
func TestFleet(t *testing.T) {
	files := fleetFiles(t)
	res, served, pinned := fleetRegistry(t)
	t.Logf("%d images from the registry, %d pinned by digest from a file", served, pinned)
	for i, rel := range releases {
		t.Run(cmpOr(rel, "none stated"), func(t *testing.T) {
			opt := Options{Versions: versions(t, rel), Image: "registry.example.com/proxy-await:1", Images: res}
			r := run(t.Context(), files, opt)
			for _, l := range r.Lines {
				if l.failure {
					t.Errorf("%s", l)
				}
			}
			assert.False(t, r.Failed)
			require.Len(t, r.Written, len(files))

			// Every application container beside a sidecar is adopted.
			adopted := map[string]bool{}
			for _, l := range r.Lines {
				if l.Event == "adopted" && l.Container != "" {
					adopted[l.File+" "+l.Kind+"/"+l.Name+" "+l.Container] = true
				}
			}
			in := manifest.Read(files, manifest.Options{})
			beside := 0
			for _, p := range in.Pods {
				in.Link(p)
				a := rules.Analyse(p, rules.Options{Versions: opt.Versions})
				if len(a.Sidecars.Sidecars) == 0 || leftOut(p) != "" {
					continue
				}
				for _, c := range p.Containers {
					if !c.Init && sidecar.ProxyOf(c) == nil {
						beside++
						assert.True(t, adopted[p.File+" "+p.Kind+"/"+p.Name+" "+c.Name], "%s %s/%s container %s, beside a sidecar", p.File, p.Kind, p.Name, c.Name)
					}
				}
			}
			assert.GreaterOrEqual(t, beside, 20, "application containers beside a sidecar")

			// check of what inject wrote, and inject and --undo of it.
			dir := t.TempDir()
			out := writeUnder(t, dir, fleet, r.Written)
			findings, _ := check.Paths(out, check.Options{Versions: opt.Versions})
			for _, f := range findings {
				if f.Level == rules.Error {
					t.Errorf("check of what inject wrote: %s", f)
				}
			}
			again := run(t.Context(), out, opt)
			require.Len(t, again.Written, len(r.Written))
			for i, w := range again.Written {
				assert.Equal(t, string(r.Written[i].Data), string(w.Data), "%s injected twice", w.Name)
			}
			undo := opt
			undo.Undo = true
			back := run(t.Context(), out, undo)
			require.Len(t, back.Written, len(files))
			for i, w := range back.Written {
				orig, err := os.ReadFile(files[i])
				require.NoError(t, err)
				assert.Equal(t, string(orig), string(w.Data), "--undo of what inject wrote of %s", files[i])
			}

			if i == 1 {
				fleetTable(t, files, r)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// fleetTable writes, or compares with docs/inject.md, the table of what
// inject made of each file of the fleet.
func fleetTable(t *testing.T, files []string, r *collected) {
	t.Helper()
	rows := map[string]*fleetRow{}
	in := manifest.Read(files, manifest.Options{})
	for _, f := range files {
		rows[f] = &fleetRow{}
	}
	for _, p := range in.Pods {
		for _, c := range p.Containers {
			if !c.Init && sidecar.ProxyOf(c) == nil {
				rows[p.File].containers++
			}
		}
	}
	for _, l := range r.Lines {
		rw := rows[l.File]
		switch {
		case l.Event == "adopted" && l.Container != "":
			rw.adopted++
		case l.Event == "skipped":
			rw.skipped = append(rw.skipped, fmt.Sprintf("%s: %s", cmpOr(l.Container, l.Kind+"/"+l.Name), short(l)))
		case l.Event == "warning":
			if w := short(l); !slices.Contains(rw.warnings, w) {
				rw.warnings = append(rw.warnings, w)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(fleetBegin)
	b.WriteString("\n| file | app containers | adopted | skipped, and why | warnings |\n|---|---|---|---|---|\n")
	var total fleetRow
	for _, f := range files {
		rw := rows[f]
		rel, _ := filepath.Rel(fleet, f)
		fmt.Fprintf(&b, "| `%s` | %d | %d | %s | %s |\n", rel, rw.containers, rw.adopted, cell(rw.skipped), cell(rw.warnings))
		total.containers += rw.containers
		total.adopted += rw.adopted
		total.skipped = append(total.skipped, rw.skipped...)
		total.warnings = append(total.warnings, rw.warnings...)
	}
	fmt.Fprintf(&b, "| all %d files | %d | %d | %d | %d files |\n\n", len(files), total.containers, total.adopted, len(total.skipped), countFiles(rows))
	b.WriteString(fleetEnd)

	page, err := os.ReadFile(fleetDoc)
	require.NoError(t, err)
	before, rest, ok := bytes.Cut(page, []byte(fleetBegin))
	require.True(t, ok, "%s has no fleet table: %q", fleetDoc, fleetBegin)
	_, after, ok := bytes.Cut(rest, []byte(fleetEnd))
	require.True(t, ok, "%s: the fleet table has no end: %q", fleetDoc, fleetEnd)
	want := append(append(slices.Clone(before), b.Bytes()...), after...)
	if *update {
		require.NoError(t, os.WriteFile(fleetDoc, want, 0o644))
		return
	}
	assert.Equal(t, string(want), string(page), "docs/inject.md's fleet table: go test ./ctl/inject -run Fleet -update")
}

// fleetRow is what became of one file of the fleet.
type fleetRow struct {
	containers, adopted int
	skipped, warnings   []string
}

// countFiles is how many rows have warnings.
func countFiles(rows map[string]*fleetRow) int {
	n := 0
	for _, r := range rows {
		if len(r.warnings) > 0 {
			n++
		}
	}
	return n
}

// cell is a table cell of a list.
func cell(items []string) string {
	if len(items) == 0 {
		return "—"
	}
	sort.Strings(items)
	return strings.Join(items, "; ")
}

// short is a line's message as the table gives it.
func short(l Line) string {
	msg := l.Message
	switch {
	case strings.Contains(msg, "is not in the input, whose injector"):
		if ns, _, ok := strings.Cut(strings.TrimPrefix(msg[strings.Index(msg, "and ")+4:], "namespace "), " is not"); ok && !strings.Contains(ns, " ") {
			return "namespace " + ns + " not in the input"
		}
		return "no namespace named, none in the input"
	case strings.Contains(msg, "has no gRPC check"):
		kind, _, _ := strings.Cut(strings.TrimPrefix(msg, "its "), " ")
		return "gRPC " + kind + " stays"
	case strings.Contains(msg, "the readiness check, so that moved there"):
		return "livenessProbe checks a path of its own: stays"
	case strings.HasPrefix(msg, "it needs nothing of proxy-await"):
		return "needs nothing: serves no port, no sidecar"
	case strings.Contains(msg, "the workload itself"):
		who, _, _ := strings.Cut(strings.TrimPrefix(msg, "it is "), ",")
		return who + ", a gateway: left whole"
	}
	return strings.ReplaceAll(msg, "|", "\\|")
}
