package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// kubectlList is a List as `kubectl get -o yaml` prints one: its items'
// dashes at column 0, its kind and metadata after them.
const kubectlList = `apiVersion: v1
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: api
    namespace: shop
  spec:
    template:
      spec:
        containers:
        - name: api
          image: registry.example.com/api:1
          args: ["--port", "8080"]
          env:
          - name: NOTE
            value: |
              a block scalar
              - that holds a dash
- apiVersion: v1
  kind: Service
  metadata: {name: api, namespace: shop}
# a comment between items
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: migrate
  spec:
    template:
      spec:
        containers: [{name: m, image: "registry.example.com/m:1", command: ["/m"]}]
kind: List
metadata:
  resourceVersion: ""
`

// The Lists read item by item: as kubectl prints them, indented under
// items, with CRLF line ends, with items as the last key.
var lists = map[string]string{
	"kubectl":  kubectlList,
	"indented": "kind: List\napiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: b\n",
	"crlf":     strings.ReplaceAll(kubectlList, "\n", "\r\n"),
	"one item": "apiVersion: v1\nkind: PodList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n",
}

// describe is what a document's objects are, node by node, with their
// lines and columns.
func describe(docs []*yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d:%d %d %s %q\n", strings.Repeat(" ", depth), n.Line, n.Column, n.Kind, n.ShortTag(), n.Value)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	for _, root := range docs {
		for _, o := range objects("f.yaml", root) {
			fmt.Fprintf(&b, "%s %s/%s line %d namespace line %d\n", o.kind, o.namespace, o.name, o.line, o.nsLine)
			walk(o.node, 1)
		}
	}
	return b.String()
}

// whole is the objects of text read as one document, as before.
func whole(t testing.TB, text string) (string, bool) {
	root, f := parseDocument("f.yaml", piece{text: []byte(text), line: 3, off: 100}, DefaultBounds)
	if f != nil || root == nil {
		return "", false
	}
	return describe([]*yaml.Node{root}), true
}

// byItem is the objects of text read item by item, and the pieces passed.
func byItem(t testing.TB, text string) (string, []piece, bool) {
	var docs []*yaml.Node
	var pieces []piece
	ok := readList("f.yaml", piece{text: []byte(text), line: 3, off: 100}, DefaultBounds, func(n *yaml.Node, p piece) {
		docs = append(docs, n)
		pieces = append(pieces, p)
	})
	return describe(docs), pieces, ok
}

// A List read item by item holds what it holds read whole: the same
// objects, node for node, on the same lines; its header first, then each
// item, whose text runs from its dash's line to the next item's and
// whose offsets are the file's.
func TestReadsAListItemByItem(t *testing.T) {
	for name, text := range lists {
		t.Run(name, func(t *testing.T) {
			want, ok := whole(t, text)
			require.True(t, ok)
			got, pieces, ok := byItem(t, text)
			require.True(t, ok, "read item by item")
			assert.Equal(t, want, got)
			require.NotEmpty(t, pieces)
			assert.False(t, pieces[0].item, "the header first")
			assert.Equal(t, strings.Count(text, "\n"), strings.Count(string(pieces[0].text), "\n"), "the header keeps every line")
			assert.Less(t, len(pieces[0].text), len(text)/2, "the header holds little of the items' text")
			for _, p := range pieces[1:] {
				assert.True(t, p.item)
				assert.Equal(t, string(p.text), text[p.off-100:p.off-100+len(p.text)])
				assert.Regexp(t, `^ *- `, string(p.text))
			}
		})
	}
	_, pieces, _ := byItem(t, kubectlList)
	require.Len(t, pieces, 4)
	assert.True(t, strings.HasPrefix(string(pieces[3].text), "- apiVersion: batch/v1\n"))
	assert.True(t, strings.HasSuffix(string(pieces[3].text), `command: ["/m"]}]`+"\n"), "the last item ends before the List's kind")
	assert.True(t, strings.HasSuffix(string(pieces[2].text), "# a comment between items\n"))
}

// What is not a List whose items each parse alone, hold no alias and
// nothing that reading the List whole refuses, is read whole, as before:
// nothing of it is passed item by item.
func TestReadsWholeWhatItemsCannotShow(t *testing.T) {
	for name, text := range map[string]string{
		"an alias":             "kind: List\nitems:\n- &a {kind: Pod, metadata: {name: a}}\n- *a\n",
		"no List":              "kind: Pod\nitems:\n- a\n- b\n",
		"flow items":           "kind: List\nitems: [{kind: Pod}, {kind: Pod}]\n",
		"items below":          "kind: List\nitems:\n  [{kind: Pod}]\n",
		"quote over an item":   "kind: List\nitems:\n- kind: Pod\n  metadata: {name: \"a\n- b\"}\n",
		"flow over a key":      "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a,\nb: c}\n",
		"a line less indented": "kind: List\nitems:\n  - kind: Pod\n metadata: {}\n",
		"no items":             "kind: List\nitems:\nmetadata: {}\n",
		"items in a quote":     "kind: List\nnote: \"x\nitems:\n- {kind: Pod, metadata: {name: ghost}}\nz: \"\n",
		"items twice":          "kind: List\nitems:\n- {kind: Pod}\nitems:\n- {kind: Pod}\n",
		"a key twice":          "kind: List\nitems:\n- {kind: Thing, a: 1, a: 2}\n- {kind: Pod}\n",
		"a header key twice":   "kind: List\nkind: List\nitems:\n- {kind: Pod}\n",
		"a mapping as a key":   "kind: List\nitems:\n- kind: Pod\n  {a: b}: c\n",
		"an alias in an item":  "kind: List\nitems:\n- {kind: Pod, metadata: {name: &a a, labels: {x: *a}}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, pieces, ok := byItem(t, text)
			assert.False(t, ok)
			assert.Empty(t, pieces)
		})
	}
	// Both quoted and flow text over an item's line parse whole: they
	// stay one item there, as read whole.
	for _, text := range []string{"kind: List\nitems:\n- kind: Pod\n  metadata: {name: \"a\n- b\"}\n", "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a,\nb: c}\n"} {
		got, ok := whole(t, text)
		require.True(t, ok)
		assert.Equal(t, 1, strings.Count(got, "Pod /"), "one object: %s", got)
	}
}

// FuzzReadsAListItemByItem: whatever a List is, read item by item it
// holds what it holds read whole.
func FuzzReadsAListItemByItem(f *testing.F) {
	for _, text := range lists {
		f.Add(text)
	}
	f.Add("kind: List\nitems:\n- kind: Pod\n  metadata: {name: \"a\n- b\"}\n")
	f.Add("kind: List\nitems:\n- a: |\n    - x\n  kind: Pod\n- kind: Pod\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, _, ok := byItem(t, text)
		if !ok {
			return
		}
		want, ok := whole(t, text)
		require.True(t, ok, "read item by item, but not whole")
		assert.Equal(t, want, got)
	})
}
