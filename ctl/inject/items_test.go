package inject

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// listDoc is text parsed, as a document being edited, and its root.
func listDoc(t *testing.T, text string) (*doc, *yaml.Node) {
	t.Helper()
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(text), &n))
	root := n.Content[0]
	return newDoc(newWriter(), []byte(text), lineStarts([]byte(text)), root, 0, len(text)), root
}

// A List's items are verified each on its own: an edit in an item marks
// it, an insertion at an item's end (at the next item's line) is the
// item's, and each edited item's text parsed alone holds the edited item.
// An edit that writes other text than the tree got is caught.
func TestVerifiesAListItemByItem(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		block      bool
	}{
		{"kubectl", "apiVersion: v1\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Pod\n  metadata: {name: b}\n- kind: Pod\n  metadata: {name: c}\nkind: List\nmetadata: {}\n", true},
		{"indented", "apiVersion: v1\nkind: List\nitems:\n  - kind: Pod\n    metadata:\n      name: a\n  # between\n  - kind: Pod\n    metadata:\n      name: b\n  - kind: Pod\n    metadata:\n      name: c\n", true},
		{"json", "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\n      \"kind\": \"Pod\",\n      \"metadata\": {\"name\": \"a\"}\n    },\n    {\n      \"kind\": \"Pod\",\n      \"metadata\": {\"name\": \"b\"}\n    },\n    {\"kind\": \"Pod\", \"metadata\": {\"name\": \"c\"}}\n  ],\n  \"kind\": \"List\"\n}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, root := listDoc(t, tc.text)
			items := root.Content[3]
			if root.Content[2].Value != "items" {
				items = root.Content[5]
			}
			require.NoError(t, d.appendKey(items.Content[0], "spec", str("x")))
			require.NoError(t, d.appendKey(items.Content[2].Content[3], "namespace", str("shop")))
			text := d.apply(0, len(tc.text))
			got, block := d.items(root, 0, len(tc.text))
			require.Len(t, got, 3)
			assert.Equal(t, tc.block, block)
			assert.Equal(t, []bool{true, false, true}, []bool{got[0].edited, got[1].edited, got[2].edited})
			require.NoError(t, verifyItems(text, got, block))
			require.NoError(t, verify(text, sum(root), false), "the whole says the same")

			// The text of the first edit, not what its node holds.
			require.Contains(t, d.edits[0].text, "x")
			d.edits[0].text = strings.Replace(d.edits[0].text, "x", "y", 1)
			wrong := d.apply(0, len(tc.text))
			require.Error(t, verify(wrong, sum(root), false))
			assert.Error(t, verifyItems(wrong, got, block))
		})
	}
}

// What verifying item by item cannot show is left to verifying the
// whole: an edit outside the items, an item that begins on the line after
// its dash, a document that is no List.
func TestVerifiesWholeWhatItemsCannotShow(t *testing.T) {
	d, root := listDoc(t, "apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n- kind: Pod\n- kind: Pod\n")
	require.NoError(t, d.appendKey(root.Content[5], "name", str("l")))
	got, _ := d.items(root, 0, len(d.data))
	assert.Nil(t, got, "an edit of the List's metadata")

	d, root = listDoc(t, "kind: List\nitems:\n- kind: Pod\n-\n  kind: Pod\n")
	require.NoError(t, d.appendKey(root.Content[3].Content[0], "spec", str("x")))
	got, _ = d.items(root, 0, len(d.data))
	assert.Empty(t, got, "an item below its dash")

	d, root = listDoc(t, "kind: Pod\nspec: {}\n")
	got, _ = d.items(root, 0, len(d.data))
	assert.Empty(t, got, "no items")
}
