// yaml.go: reading a document's node tree: values by key (aliases and
// merge keys followed), scalars with their lines, and the lines inside a
// multi-line scalar.

package manifest

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get is the value of key in the mapping m, following aliases and merge
// keys ("<<: *defaults"); nil when m is not a mapping or has no such key.
func get(m *yaml.Node, key string) *yaml.Node {
	k, _ := getKey(m, key)
	return k
}

// getKey is get, with the key's own node (for its line).
func getKey(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := deref(m.Content[i])
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, m.Content[i+1])
		case k.Value == key:
			return m.Content[i+1], k
		}
	}
	for _, src := range merges {
		src = deref(src)
		if src.Kind == yaml.SequenceNode {
			for _, s := range src.Content {
				if v, k := getKey(s, key); v != nil {
					return v, k
				}
			}
		} else if v, k := getKey(src, key); v != nil {
			return v, k
		}
	}
	return nil, nil
}

// path is get along a chain of keys.
func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = get(n, k)
	}
	return n
}

// str is a scalar's text: "" for a null, a missing node or a collection.
func str(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// items is a sequence's elements: nil for anything else.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// Scalar is a value of the manifest and the line it is on. A scalar over
// several lines (a block scalar, a folded script) also knows where each of
// its lines starts, so that a word in it has a line of its own.
type Scalar struct {
	Text   string
	Line   int
	Breaks []int // offsets in Text at which the next line of the file starts
	Folded bool  // a folded block scalar (>), which joins its lines with spaces
}

// LineAt is the line of the file on which the text at offset off of Text
// is.
func (v Scalar) LineAt(off int) int {
	n := 0
	for n < len(v.Breaks) && v.Breaks[n] <= off {
		n++
	}
	return v.Line + n
}

// lineOf is the line of a node, 0 for none.
func lineOf(n *yaml.Node) int {
	if n = deref(n); n == nil {
		return 0
	}
	return n.Line
}

// scalarOf is a node's text and line, without the lines inside it.
func scalarOf(n *yaml.Node) Scalar {
	return Scalar{Text: str(n), Line: lineOf(n)}
}

// Meta is a mapping of scalars, as labels and annotations are, each value
// at its key's line: a few entries, kept as a slice, which costs a pod far
// less than a map.
type Meta []MetaEntry

// MetaEntry is a key of a Meta and its value.
type MetaEntry struct {
	Key   string
	Value Scalar
}

// metaOf reads a mapping of scalars; the last of a key wins, as it does
// for the API server.
func metaOf(n *yaml.Node) Meta {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make(Meta, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, MetaEntry{str(n.Content[i]), Scalar{Text: str(n.Content[i+1]), Line: lineOf(n.Content[i])}})
	}
	return out
}

// Get is the value of key, if m has it.
func (m Meta) Get(key string) (Scalar, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Key == key {
			return m[i].Value, true
		}
	}
	return Scalar{}, false
}

// At is the value of key, or none.
func (m Meta) At(key string) Scalar {
	v, _ := m.Get(key)
	return v
}

// Keys are m's keys, sorted.
func (m Meta) Keys() []string {
	var out []string
	for _, e := range m {
		if !slices.Contains(out, e.Key) {
			out = append(out, e.Key)
		}
	}
	slices.Sort(out)
	return out
}

// SameAs says whether two mappings hold the same values.
func (m Meta) SameAs(o Meta) bool {
	if len(m.Keys()) != len(o.Keys()) {
		return false
	}
	for _, k := range m.Keys() {
		if v, ok := o.Get(k); !ok || v.Text != m.At(k).Text {
			return false
		}
	}
	return true
}

// fileLines is a file's text, for the lines inside a multi-line scalar.
type fileLines struct {
	data   []byte
	starts []int // the offset of each line, from line 1; made when first needed
}

// text is line n of the file (from 1), without its line break.
func (f *fileLines) text(n int) string {
	if f.starts == nil {
		f.starts = append(f.starts, 0)
		for i, c := range f.data {
			if c == '\n' {
				f.starts = append(f.starts, i+1)
			}
		}
	}
	if n < 1 || n > len(f.starts) {
		return ""
	}
	end := len(f.data)
	if n < len(f.starts) {
		end = f.starts[n] - 1
	}
	return strings.TrimRight(string(f.data[f.starts[n-1]:end]), "\r")
}

// scalar is a node's text with the line of each of its lines: a literal
// block keeps the file's lines; a folded block or a flow scalar over
// several lines joins them, and each of its lines is found again from the
// file's text.
func (f *fileLines) scalar(n *yaml.Node) Scalar {
	v := scalarOf(n)
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || f == nil {
		return v
	}
	switch n.Style {
	case yaml.LiteralStyle:
		v.Line++
		for i := 0; i < len(v.Text)-1; i++ {
			if v.Text[i] == '\n' {
				v.Breaks = append(v.Breaks, i+1)
			}
		}
		return v
	case yaml.FoldedStyle:
		v.Line++
		v.Folded = true
	default:
		if !strings.ContainsAny(v.Text, " \t\n") {
			return v // one word: on one line
		}
	}
	// Each line of the file gives the value its text, without the white
	// space around it, and one character that joins it to the next.
	at, empty := 0, false
	for ln := v.Line; at < len(v.Text); ln++ {
		raw := f.text(ln)
		if ln == v.Line && n.Style != yaml.FoldedStyle && n.Column-1 <= len(raw) {
			raw = raw[n.Column-1:]
			if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
				raw = raw[min(1, len(raw)):]
			}
		}
		if ln > v.Line {
			if ln > len(f.starts) {
				break
			}
			v.Breaks = append(v.Breaks, at)
		}
		switch t := strings.TrimSpace(raw); {
		case t != "":
			at += len(t) + 1
			empty = false
		case empty || ln == v.Line:
			at++
		default:
			empty = true // a first empty line turns the join into a line break
		}
	}
	return v
}
