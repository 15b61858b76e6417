// lists.go: a List as kubectl prints one (`kubectl get -o yaml`: a whole
// namespace, or a cluster, in one document) is read item by item, so that
// one item's tree is alive at a time rather than the List's, some 20 times
// its text.

package manifest

import (
	"bytes"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// listKey is a line that begins a key of a List in block style, after its
// items (kubectl prints kind and metadata there).
var listKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*:( |$)`)

// listPieces cuts a document that is a List in block style into its
// header (the document with its items' lines left blank, so that every
// line keeps its number) and its items, each an entry of a block sequence:
// from its dash's line to the next one's. ok is false when p is not such a
// List, as its text shows: no "items:" line at the start of a line, items
// that are not dashes in one column each at the start of its line, or a
// line of the items less indented than their dashes that is no key of the
// List.
func listPieces(p piece) (header piece, items []piece, itemsLine int, ok bool) {
	type line struct{ start, end int } // end: before its line break
	var lines []line
	for off := 0; off < len(p.text); {
		end, next := len(p.text), len(p.text)
		if i := bytes.IndexByte(p.text[off:], '\n'); i >= 0 {
			end, next = off+i, off+i+1
		}
		lines = append(lines, line{off, end})
		off = next
	}
	text := func(l line) []byte { return bytes.TrimRight(p.text[l.start:l.end], "\r") }
	first := -1 // the line after "items:"
	for i, l := range lines {
		if t := text(l); bytes.HasPrefix(t, []byte("items:")) {
			rest := strings.TrimSpace(string(t[len("items:"):]))
			if rest != "" && !strings.HasPrefix(rest, "#") {
				return piece{}, nil, 0, false // items: [] or a value on its line
			}
			first = i + 1
			break
		}
	}
	if first < 0 {
		return piece{}, nil, 0, false
	}
	column := -1
	dash := func(t []byte) bool {
		return len(t) > column && string(t[:column]) == strings.Repeat(" ", column) && t[column] == '-' &&
			(len(t) == column+1 || t[column+1] == ' ')
	}
	var starts []int // the lines that begin items
	last := len(lines)
	for i := first; i < len(lines); i++ {
		t := text(lines[i])
		indent := len(t) - len(bytes.TrimLeft(t, " "))
		switch {
		case indent == len(t) || t[indent] == '#':
			continue // blank or a comment
		case column < 0:
			column = indent
			if !dash(t) {
				return piece{}, nil, 0, false
			}
			starts = append(starts, i)
		case dash(t):
			starts = append(starts, i)
		case indent == 0 && listKey.Match(t):
			last = i // the List's next key
		case indent <= column:
			return piece{}, nil, 0, false // in no item, and no key of the List
		}
		if last < len(lines) {
			break
		}
	}
	if len(starts) == 0 {
		return piece{}, nil, 0, false
	}
	// The header: every line of the items empty, so that the header holds
	// as many lines as the List and little more text than its keys.
	endOf := func(i int) int { // the offset where line i starts, or the end
		if i < len(lines) {
			return lines[i].start
		}
		return len(p.text)
	}
	from, to := lines[starts[0]].start, endOf(last)
	keys := make([]byte, 0, from+(last-starts[0])+len(p.text)-to)
	keys = append(keys, p.text[:from]...)
	keys = append(keys, bytes.Repeat([]byte{'\n'}, bytes.Count(p.text[from:to], []byte{'\n'}))...)
	header = piece{text: append(keys, p.text[to:]...), line: p.line, off: p.off}
	for k, s := range starts {
		e := last
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		items = append(items, piece{text: p.text[lines[s].start:endOf(e)], line: p.line + s, off: p.off + lines[s].start, item: true})
	}
	return header, items, p.line + first, true
}

// listItem is the item that an item's piece parsed alone holds: its one
// entry; nil when it holds other than one.
func listItem(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) != 1 {
		return nil
	}
	return n.Content[0]
}

// readList reads a List piece item by item (listPieces): its header, then
// each item, each passed to doc; false, having passed nothing, when p is
// no List to read so, and is to be read whole as before: its header is
// not a List's whose one items key is on the line cut at, with its items
// left out; an item does not parse alone, or holds an alias (whose anchor
// may be another item's, and whose expansion is bounded per document), or
// what reading the List whole refuses (a key twice in a mapping, a
// mapping as a key). A quoted string or a flow collection that runs on to
// a line beginning like an item shows too: the item before that line ends
// inside it, and does not parse. So each item is parsed twice, first to
// know all that before any is passed on.
func readList(name string, p piece, b Bounds, doc func(*yaml.Node, piece)) bool {
	if admit(p.text, b) != nil {
		return false
	}
	header, list, line, ok := listPieces(p)
	if !ok {
		return false
	}
	root, f := parseDocument(name, header, b)
	if f != nil || root == nil || root.Kind != yaml.MappingNode || !strings.HasSuffix(str(get(root, "kind")), "List") {
		return false
	}
	keys := 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "items" {
			if keys++; k.Line != line || k.Column != 1 || v.ShortTag() != "!!null" || v.Value != "" {
				return false
			}
		}
	}
	if key, _, _ := duplicateKey(root); keys != 1 || key != "" || collectionKey(root) > 0 {
		return false
	}
	for _, it := range list {
		n, f := parseDocument(name, it, b)
		if n = listItem(n); f != nil || n == nil || hasAlias(n) || collectionKey(n) > 0 {
			return false
		}
		if key, _, _ := duplicateKey(n); key != "" {
			return false
		}
	}
	doc(root, header)
	for _, it := range list {
		n, _ := parseDocument(name, it, b)
		it.list = root
		doc(listItem(n), it)
	}
	return true
}

// hasAlias says whether n holds an alias.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// maybeList says whether a document's text has an "items:" line, as a
// List in block style has: worth listPieces' look.
func maybeList(text []byte) bool {
	return bytes.HasPrefix(text, []byte("items:")) || bytes.Contains(text, []byte("\nitems:"))
}
