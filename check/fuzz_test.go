package check

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A YAML bomb is refused unexpanded: its findings cost what its text does.
func TestBombCostsItsSize(t *testing.T) {
	data := []byte(bomb(12)) // 10^12 nodes expanded
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	in := newInput(Options{})
	in.parseFile("bomb.yaml", data, false)
	runtime.ReadMemStats(&after)
	assert.Empty(t, in.pods)
	require.Len(t, in.findings, 1)
	assert.Equal(t, "bomb.yaml:1: error: input: its aliases expand it by more than 1000000 nodes: refused unread", in.findings[0].String())
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated for a %d-byte bomb", len(data))

	// Four levels expand to some 10^5 nodes: read, and its pod checked.
	in = newInput(Options{})
	in.parseFile("small.yaml", []byte(bomb(4)), false)
	assert.Empty(t, in.findings)
	require.Len(t, in.pods, 1)
	assert.Len(t, in.pods[0].containers, 10)
	findings, n := checkPod(in.pods[0], in.stores, newFlagTable(), Options{})
	assert.Empty(t, findings)
	assert.Zero(t, n, "the entries are lists, not containers")
}

// FuzzManifest feeds the manifest reader and the rules anything: they
// never panic, a finding always has a rule and a message, and what is
// parsed stays within its bounds.
func FuzzManifest(f *testing.F) {
	archives, err := filepath.Glob("testdata/*/*.txtar")
	require.NoError(f, err)
	for _, name := range archives {
		ar, err := txtar.ParseFile(name)
		require.NoError(f, err)
		for _, file := range ar.Files {
			if !isWant(file.Name) {
				f.Add(file.Data)
			}
		}
	}
	f.Add([]byte(bomb(3)))
	f.Add([]byte(bomb(9)))
	f.Add([]byte("kind: Pod\nspec: &s {containers: [{command: [sh, -c, 'exec proxy-await \"$@\" $(x)']}], initContainers: *s}\n"))
	f.Add([]byte("kind: List\nitems: &i [{kind: List, items: *i}]\n"))
	f.Add([]byte("%YAML 1.2\n---\nkind: Pod\n...\n--- |\n  text\n"))
	f.Add([]byte("kind: ConfigMap\ndata:\n  a: |\n    1,2,3\n  b: \"x\n c: |\n  y\"\n"))
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
		for _, b := range in.findings {
			assert.Equal(t, "input", b.Rule)
			assert.NotEmpty(t, b.Message)
		}
		flags := newFlagTable()
		for _, p := range in.pods {
			findings, _ := checkPod(p, in.stores, flags, Options{})
			for _, fd := range findings {
				assert.NotEmpty(t, fd.Rule)
				assert.NotEmpty(t, fd.Message)
				assert.NotContains(t, fd.String(), "\n")
			}
		}
	})
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
