package manifest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
	"go.yaml.in/yaml/v3"
)

// bomb is a "billion laughs": levels of ten aliases of the level below, so
// that expanding it takes 10^levels nodes. Its last line puts it where a
// pod's containers go.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("kind: Pod\nmetadata: {name: bomb}\nl0: &l0 [{name: x, command: [proxy-await, --, x]}]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s*l%d]\n", i, i, strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), i-1)
	}
	fmt.Fprintf(&b, "spec:\n  containers: *l%d\n  initContainers: {<<: [*l%d, *l%d]}\n", levels, levels, levels)
	return b.String()
}

// A YAML bomb is refused unexpanded: its problem costs what its text does.
func TestBombCostsItsSize(t *testing.T) {
	data := []byte(bomb(12)) // 10^12 nodes expanded
	in := newInput(Options{})
	alloc := testutil.Allocated(func() { in.parseFile("bomb.yaml", data, false) })
	assert.Empty(t, in.Pods)
	assert.Equal(t, []string{"bomb.yaml:1: its aliases expand it by more than 1000000 nodes: refused unread"}, messages(in.Problems))
	assert.Less(t, alloc, uint64(4<<20), "bytes allocated for a %d-byte bomb", len(data))

	// Four levels expand to some 10^5 nodes: read, its containers the
	// ten lists of the last level, none of them a container.
	in = newInput(Options{})
	in.parseFile("small.yaml", []byte(bomb(4)), false)
	assert.Empty(t, in.Problems)
	require.Len(t, in.Pods, 1)
	assert.Len(t, in.Pods[0].Containers, 10)
	for _, c := range in.Pods[0].Containers {
		assert.Empty(t, c.Command)
	}
}

// FuzzRead feeds the reader anything: it never panics, a problem always
// has a message, and what is parsed stays within its bounds.
func FuzzRead(f *testing.F) {
	archives, err := filepath.Glob("../check/testdata/*/*.txtar")
	require.NoError(f, err)
	rules, err := filepath.Glob("../rules/testdata/*.txtar")
	require.NoError(f, err)
	injected, err := filepath.Glob("../inject/testdata/*.txtar")
	require.NoError(f, err)
	for _, name := range append(append(archives, rules...), injected...) {
		ar, err := txtar.ParseFile(name)
		require.NoError(f, err)
		for _, file := range ar.Files {
			if !strings.HasPrefix(file.Name, "want") && file.Name != "lines" {
				f.Add(file.Data)
			}
		}
	}
	f.Add([]byte(bomb(3)))
	f.Add([]byte(bomb(9)))
	f.Add([]byte("kind: List\nitems: &i [{kind: List, items: *i}]\n"))
	f.Add([]byte("%YAML 1.2\n---\nkind: Pod\n...\n--- |\n  text\n"))
	f.Add([]byte("kind: ConfigMap\ndata:\n  a: |\n    1,2,3\n  b: \"x\n c: |\n  y\"\n"))
	// A core Service's spec.template is no pod template (holdsPods); a
	// Knative Service's is.
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: a}]\n---\n" +
		"apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: a}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return // the bounds are tested above; keep each input quick
		}
		for _, p := range splitDocuments(data) {
			var n yaml.Node
			if yaml.Unmarshal(p.text, &n) != nil {
				continue
			}
			// nodesAtMost is an upper bound: a parsed document never has more.
			assert.LessOrEqual(t, countNodes(&n), nodesAtMost(p.text), "%q", p.text)
			// What shrinking block scalars admits has as many nodes as the
			// shrunk text can hold.
			if shrunk, bodies := shrinkBlockScalars(p.text); len(bodies) > 0 {
				var s yaml.Node
				if yaml.Unmarshal(shrunk, &s) == nil && verified(&s, bodies) {
					assert.LessOrEqual(t, countNodes(&n), nodesAtMost(shrunk), "%q", p.text)
				}
			}
		}
		in := newInput(Options{})
		in.parseFile("fuzz.yaml", data, false)
		for _, p := range in.Problems {
			assert.NotEmpty(t, p.Message)
		}
		if len(in.Problems) == 0 {
			assertReadAgain(t, &File{Name: "fuzz.yaml", Data: data, Pods: in.Pods, bounds: in.opt.Bounds})
		}
	})
}

// assertReadAgain holds that EachDocument reads each pod template of f
// again as the file's first reading read it, one for one: inject lets go
// of the first reading's pods once it has what it needs of the whole
// input, and plans each pod from the second reading's.
func assertReadAgain(t *testing.T, f *File) {
	t.Helper()
	var again []*Pod
	f.EachDocument(func(d Document) {
		for _, tpl := range d.Templates {
			again = append(again, tpl.Pod)
		}
	})
	assert.Equal(t, f.Pods, again, "the pod templates read again")
}

// countNodes counts the nodes of a parsed document, each once: aliases
// are nodes of their own, not what they name.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}
