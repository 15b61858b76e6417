package inject

import (
	"crypto/sha256"
	"errors"

	"go.yaml.in/yaml/v3"
)

// A large document is mostly a List, as `kubectl get -o yaml` prints a
// namespace's or a cluster's objects: its tree is some 20 times its text,
// and its text grows some four times with inject. Parsed again whole to
// verify it, that tree would be the run's largest by far, so a List's
// edited items are verified each on its own: an item's text, from its dash
// to the next item's, is a block sequence of one item, and the items that
// no edit touched keep their bytes and their place. Whatever this cannot
// show (an edit outside the items, an item that does not parse alone) is
// left to verifying the whole document.

// item is one item of a List, in the original text: a block sequence's
// from the start of its dash's line to the start of the next item's (or of
// the List's next key, or the document's end); a flow sequence's (JSON's)
// from its opening brace to its closing one.
type item struct {
	start, end int // in the file
	from, to   int // in the document's edited text
	edited     bool
	want       [sha256.Size]byte // what the edited item holds, when edited
}

// items are the stretches of a List document (from start to end of the
// file) to verify each on its own, once its edits are made (root is the
// edited tree), and whether each is a sequence of one item (block) or the
// item itself (flow); none when root's items are not a sequence whose
// items begin lines of their own, with one column for every dash, or when
// an edit does not fall inside one item.
func (d *doc) items(root *yaml.Node, start, end int) ([]item, bool) {
	if root.Kind != yaml.MappingNode {
		return nil, false
	}
	var seq *yaml.Node
	next := end
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" && root.Content[i].Line > 0 {
			seq = root.Content[i+1]
			if i+2 < len(root.Content) && root.Content[i+2].Line > 0 {
				next = d.lineStart(d.offset(root.Content[i+2]))
			}
			break
		}
	}
	if seq == nil || seq.Kind != yaml.SequenceNode || seq.Line == 0 || len(seq.Content) < 2 {
		return nil, false
	}
	block := !d.flow(seq)
	out := make([]item, len(seq.Content))
	column := -1
	for i, it := range seq.Content {
		if it.Line == 0 {
			return nil, false
		}
		if !block {
			e, err := d.end(it)
			if err != nil || it.Kind != yaml.MappingNode {
				return nil, false
			}
			out[i].start, out[i].end = d.offset(it), e
			continue
		}
		c, first := d.dashColumn(it)
		if !first || column >= 0 && c != column {
			return nil, false
		}
		column = c
		out[i].start = d.lineStart(d.offset(it))
		if i > 0 {
			out[i-1].end = out[i].start
		}
	}
	if block {
		out[len(out)-1].end = next
		if out[len(out)-1].end <= out[len(out)-1].start {
			return nil, false
		}
	}
	// The edits, in order (apply sorts them), each inside one item: an
	// insertion at an item's start is at the end of the item before it.
	i := 0
	for _, e := range d.edits {
		for i < len(out) && e.end > out[i].end {
			i++
		}
		if i == len(out) || e.at < out[i].start || e.at == out[i].start && e.end == e.at {
			return nil, false
		}
		out[i].edited = true
	}
	// Where each item is in the edited text: past the edits that end at
	// its start or before.
	j, delta := 0, 0
	moved := func(o int) int {
		for ; j < len(d.edits) && d.edits[j].end <= o; j++ {
			delta += len(d.edits[j].text) - (d.edits[j].end - d.edits[j].at)
		}
		return o - start + delta
	}
	for i := range out {
		out[i].from, out[i].to = moved(out[i].start), moved(out[i].end)
		if out[i].edited {
			out[i].want = sum(seq.Content[i])
		}
	}
	return out, block
}

// verifyItems says whether text, a List document's edited text, holds
// each edited item: its text parsed alone holds what the edited item does
// (as a sequence of one when block says so).
func verifyItems(text []byte, items []item, block bool) error {
	for _, it := range items {
		if !it.edited {
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal(text[it.from:it.to], &n); err != nil {
			return err
		}
		if len(n.Content) != 1 {
			return errors.New("an edited item is not one node")
		}
		got := n.Content[0]
		if block {
			if got.Kind != yaml.SequenceNode || len(got.Content) != 1 {
				return errors.New("an edited item is not one item")
			}
			got = got.Content[0]
		}
		if sum(got) != it.want {
			return errors.New("an edited item does not hold the edited object")
		}
	}
	return nil
}
