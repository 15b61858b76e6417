// splice.go: edits of a document as text, at the positions of its nodes,
// so that everything else keeps its bytes: comments, key order, quoting,
// indentation, blank lines. Each edit inserts or replaces text at a node
// and makes the same change to the node tree; once every edit of a
// document is made, the new text is parsed again and must hold exactly the
// changed tree (verify), so that a layout the splice does not foresee is
// refused rather than written wrong.
//
// YAML's block style gets block entries, indented as the document indents
// its own; a flow collection gets flow entries; a JSON document gets JSON,
// on lines of its own where the document puts its entries on lines of
// their own.

package inject

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// doc is a document being edited.
type doc struct {
	data   []byte // the whole file
	starts []int  // the offset of each line's start, line 1 first
	json   bool   // the document is JSON
	indent int    // how much a block mapping's entries are indented below their key
	dash   int    // how much a block sequence's dashes are indented below their key
	unit   int    // JSON: how much each level is indented, 0 for none
	tight  bool   // JSON without a space after its colons and commas
	crlf   bool   // its lines end in CR LF, and so do those it gets
	edits  []edit
	ends   map[*yaml.Node]int // where nodes end, as first found: before their edits
	w      *writer            // the run's: how YAML writes a node
}

// edit replaces data[at:end] with text; edits at one offset are made in
// the order they were asked for.
type edit struct {
	at, end int
	text    string
}

// errLayout is an edit that the document's layout does not allow: a
// multi-line plain scalar to replace, an alias to follow.
var errLayout = errors.New("written in a way inject does not edit")

func newDoc(w *writer, data []byte, starts []int, root *yaml.Node, start, end int) *doc {
	text := data[start:end] // only this document's: a file may hold thousands
	d := &doc{data: data, starts: starts, indent: 2, dash: 2, ends: map[*yaml.Node]int{}, w: w, crlf: bytes.Contains(text, []byte("\r\n"))}
	d.json = bytes.HasPrefix(bytes.TrimLeft(skipComments(text), " \t\r\n"), []byte("{"))
	d.learnIndent(root)
	d.tight = d.json && d.unit == 0 && !bytes.Contains(text, []byte(": ")) && !bytes.Contains(text, []byte(", "))
	return d
}

// skipComments is data without the comment lines and directives it
// starts with.
func skipComments(data []byte) []byte {
	for {
		t := bytes.TrimLeft(data, " \t\r\n")
		if len(t) == 0 || t[0] != '#' && t[0] != '%' && !bytes.HasPrefix(t, []byte("---")) {
			return t
		}
		i := bytes.IndexByte(t, '\n')
		if i < 0 {
			return nil
		}
		data = t[i+1:]
	}
}

// learnIndent finds how the document indents (learn); for JSON, the
// first entry on a line of its own.
func (d *doc) learnIndent(root *yaml.Node) {
	var st indents
	d.learn(&st, root, true, -1)
	d.use(st)
	if d.json && len(root.Content) > 0 && d.beginsLine(root.Content[0]) {
		d.unit = d.lineIndent(root.Content[0]) - d.lineIndent(root)
	}
}

// indents is how a document indents, as learnt from its nodes: the first
// block mapping inside a block mapping gives the mapping's step, the first
// block sequence under a key the dashes'.
type indents struct {
	indent, dash       int
	foundMap, foundSeq bool
}

// learn learns what st has not found yet from root: its own keys first,
// then (deep) each of its nodes in turn. itemsDash, when not negative, is
// the column of the dashes of a List's items read item by item, whose key
// in root has no value here.
func (d *doc) learn(st *indents, root *yaml.Node, deep bool, itemsDash int) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				switch {
				case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && !st.foundMap && v.Line > k.Line:
					st.indent, st.foundMap = v.Column-k.Column, true
				case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && !st.foundSeq && len(v.Content) > 0:
					if col, ok := d.dashColumn(v.Content[0]); ok && v.Content[0].Line > k.Line {
						st.dash, st.foundSeq = col-d.column(k), true
					}
				case n == root && itemsDash >= 0 && k.Value == "items" && v.ShortTag() == "!!null" && !st.foundSeq:
					st.dash, st.foundSeq = itemsDash-d.column(k), true
				}
			}
		}
		if !deep && n == root {
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
}

// use takes st's indentation, or YAML's usual where it found none.
func (d *doc) use(st indents) {
	d.indent, d.dash = st.indent, st.dash
	if d.indent <= 0 {
		d.indent = 2
	}
	if d.dash < 0 {
		d.dash = 0
	}
}

// listIndents is how a List read item by item indents, learnt as reading
// it whole would learn it: from its header's keys, its items' dashes
// among them, then from each item in turn.
type listIndents struct {
	header *yaml.Node
	st     indents
}

// learn gives d, an item of a List read item by item, the List's
// indentation.
func (l *listIndents) learn(d *doc, item, header *yaml.Node) {
	if header != l.header {
		l.header, l.st = header, indents{}
		dash := -1
		if col, first := d.dashColumn(item); first {
			dash = col
		}
		d.learn(&l.st, header, false, dash)
	}
	d.learn(&l.st, item, true, -1)
	d.use(l.st)
}

// offset is where a node starts in the file: its line and its column,
// which yaml counts in characters.
func (d *doc) offset(n *yaml.Node) int {
	return d.at(n.Line, n.Column)
}

func (d *doc) at(line, column int) int {
	off := d.starts[line-1]
	for i := 1; i < column && off < len(d.data); i++ {
		_, size := utf8.DecodeRune(d.data[off:])
		off += size
	}
	return off
}

// lineStart is the offset of the start of the line off is on.
func (d *doc) lineStart(off int) int {
	return bytes.LastIndexByte(d.data[:off], '\n') + 1
}

// lineEnd is the offset of the line break that ends the line off is on.
func (d *doc) lineEnd(off int) int {
	if i := bytes.IndexByte(d.data[off:], '\n'); i >= 0 {
		end := off + i
		if end > 0 && d.data[end-1] == '\r' {
			end--
		}
		return end
	}
	return len(d.data)
}

// beginsLine says whether n is the first thing on its line.
func (d *doc) beginsLine(n *yaml.Node) bool {
	off := d.offset(n)
	return len(bytes.Trim(d.data[d.lineStart(off):off], " \t")) == 0
}

// lineIndent is the indentation of n's line, in bytes.
func (d *doc) lineIndent(n *yaml.Node) int {
	off := d.offset(n)
	s := d.lineStart(off)
	return len(d.data[s:off]) - len(bytes.TrimLeft(d.data[s:off], " "))
}

// column is n's column, counted from 0, in bytes of its line.
func (d *doc) column(n *yaml.Node) int {
	off := d.offset(n)
	return off - d.lineStart(off)
}

// dashColumn is the column of the dash before a block sequence's item,
// and whether the dash is the first thing on its line.
func (d *doc) dashColumn(item *yaml.Node) (int, bool) {
	off := d.offset(item)
	i := off - 1
	for i >= 0 && (d.data[i] == ' ' || d.data[i] == '\t') {
		i--
	}
	if i < 0 || d.data[i] != '-' {
		return 0, false
	}
	s := d.lineStart(i)
	return i - s, len(bytes.Trim(d.data[s:i], " \t")) == 0
}

// add records an edit.
func (d *doc) add(at, end int, text string) {
	if d.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	d.edits = append(d.edits, edit{at, end, text})
}

// flow says whether entries of n go in flow style: n is a flow collection,
// or the document is JSON.
func (d *doc) flow(n *yaml.Node) bool {
	return d.json || n.Style&yaml.FlowStyle != 0
}

// prependItems puts items first in the sequence seq.
func (d *doc) prependItems(seq *yaml.Node, items ...*yaml.Node) error {
	if len(seq.Content) == 0 {
		return d.fillEmpty(seq, items)
	}
	first := seq.Content[0]
	items = quotedAs(first, items)
	if d.flow(seq) {
		sep := d.comma()
		if d.beginsLine(first) {
			sep = ",\n" + strings.Repeat(" ", d.lineIndent(first))
		}
		var parts []string
		for _, it := range items {
			parts = append(parts, d.flowText(it, d.lineIndent(first)))
		}
		d.add(d.offset(first), d.offset(first), strings.Join(parts, sep)+sep)
	} else {
		col, alone := d.dashColumn(first)
		if !alone {
			return errLayout
		}
		var b strings.Builder
		for _, it := range items {
			b.WriteString(d.blockItem(it, col))
		}
		at := d.commentsBefore(d.lineStart(d.offset(first)), col)
		d.add(at, at, b.String())
	}
	seq.Content = append(slices.Clone(items), seq.Content...)
	return nil
}

// appendItem puts item last in the sequence seq.
func (d *doc) appendItem(seq *yaml.Node, item *yaml.Node) error {
	if len(seq.Content) == 0 {
		return d.fillEmpty(seq, []*yaml.Node{item})
	}
	last := original(seq.Content, 1)
	if last == nil {
		return errLayout
	}
	item = quotedAs(last, []*yaml.Node{item})[0]
	end, err := d.end(last)
	if err != nil {
		return err
	}
	if d.flow(seq) {
		sep := d.comma()
		if d.beginsLine(last) {
			sep = ",\n" + strings.Repeat(" ", d.lineIndent(last))
		}
		d.add(end, end, sep+d.flowText(item, d.lineIndent(last)))
	} else {
		col, alone := d.dashColumn(last)
		if !alone {
			return errLayout
		}
		at := d.lineEnd(end)
		d.add(at, at, "\n"+strings.TrimSuffix(d.blockItem(item, col), "\n"))
	}
	seq.Content = append(seq.Content, item)
	return nil
}

// fillEmpty puts items in an empty flow collection, [] or {}.
func (d *doc) fillEmpty(n *yaml.Node, items []*yaml.Node) error {
	off := d.offset(n)
	if off >= len(d.data) || d.data[off] != '[' && d.data[off] != '{' {
		return errLayout
	}
	var parts []string
	for _, it := range items {
		parts = append(parts, d.flowText(it, d.lineIndent(n)))
	}
	d.add(off+1, off+1, strings.Join(parts, d.comma()))
	n.Content = append(n.Content, items...)
	return nil
}

// appendKey puts key: value last in the mapping m.
func (d *doc) appendKey(m *yaml.Node, key string, value *yaml.Node) error {
	k := str(key)
	if len(m.Content) == 0 {
		return d.fillEmpty(m, []*yaml.Node{k, value})
	}
	last := original(m.Content, 2)
	if last == nil {
		return errLayout
	}
	lastKey := m.Content[slices.Index(m.Content, last)-1]
	end, err := d.end(last)
	if err != nil {
		return err
	}
	if d.flow(m) {
		sep := d.comma()
		if d.beginsLine(lastKey) {
			sep = ",\n" + strings.Repeat(" ", d.lineIndent(lastKey))
		}
		d.add(end, end, sep+d.flowPair(k, value, d.lineIndent(lastKey)))
	} else {
		at := d.lineEnd(end)
		d.add(at, at, "\n"+strings.TrimSuffix(d.blockPair(key, value, d.column(lastKey)), "\n"))
	}
	m.Content = append(m.Content, k, value)
	return nil
}

// insertKey puts key: value in the mapping m before its pair i.
func (d *doc) insertKey(m *yaml.Node, i int, key string, value *yaml.Node) error {
	k := str(key)
	before := m.Content[2*i]
	if d.flow(m) {
		sep := d.comma()
		if d.beginsLine(before) {
			sep = ",\n" + strings.Repeat(" ", d.lineIndent(before))
		}
		d.add(d.offset(before), d.offset(before), d.flowPair(k, value, d.lineIndent(before))+sep)
	} else {
		col := d.column(before)
		if d.beginsLine(before) {
			at := d.commentsBefore(d.lineStart(d.offset(before)), col)
			d.add(at, at, d.blockPair(key, value, col))
		} else {
			text := d.blockPair(key, value, col)
			d.add(d.offset(before), d.offset(before), text+strings.Repeat(" ", col))
		}
	}
	m.Content = slices.Insert(m.Content, 2*i, k, value)
	return nil
}

// commentsBefore moves an insertion at the start of a line up over the
// comment lines right above it, indented at least col or less, which say
// something of the line it was before.
func (d *doc) commentsBefore(at, col int) int {
	for at > 0 {
		s := d.lineStart(at - 1)
		line := bytes.TrimRight(d.data[s:at-1], "\r")
		t := bytes.TrimLeft(line, " ")
		if len(t) == 0 || t[0] != '#' || len(line)-len(t) > col {
			return at
		}
		at = s
	}
	return at
}

// setScalar replaces the scalar n with value, tagged tag.
func (d *doc) setScalar(rec *record, at nodePath, op string, n *yaml.Node, tag, value string) error {
	end, err := d.end(n)
	if err != nil {
		return err
	}
	if rec != nil {
		rec.add(change{Op: op, Path: at, Was: string(d.data[d.offset(n):end])})
	}
	nn := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
	text := d.flowText(nn, 0)
	if !d.json && n.Style&(yaml.FlowStyle) == 0 && !d.inFlow(n) {
		text = d.w.scalar(nn)
	}
	d.add(d.offset(n), end, text)
	n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, tag, value, 0
	return nil
}

// text is n's text as it was before the edits.
func (d *doc) text(n *yaml.Node) (string, error) {
	end, err := d.end(n)
	if err != nil {
		return "", err
	}
	return string(d.data[d.offset(n):end]), nil
}

// afterColon is the text of the mapping m's pair i after its key's colon,
// up to the end of its value, as it was before the edits.
func (d *doc) afterColon(m *yaml.Node, i int) (string, error) {
	at, err := d.colonEnd(m.Content[2*i])
	if err != nil {
		return "", err
	}
	v := m.Content[2*i+1]
	end, err := d.end(v) // an empty null ends where it starts
	if err != nil || end < at {
		return "", errLayout
	}
	return string(d.data[at:end]), nil
}

// colonEnd is where the text after a key's colon starts.
func (d *doc) colonEnd(k *yaml.Node) (int, error) {
	at, err := d.end(k)
	if err != nil {
		return 0, err
	}
	for at < len(d.data) && (d.data[at] == ' ' || d.data[at] == '\t') {
		at++
	}
	if at >= len(d.data) || d.data[at] != ':' {
		return 0, errLayout
	}
	return at + 1, nil
}

// setValue replaces the null value of the mapping m's pair i (key: with
// nothing after it, or null) with value.
func (d *doc) setValue(m *yaml.Node, i int, value *yaml.Node) error {
	k, v := m.Content[2*i], m.Content[2*i+1]
	if v.Kind != yaml.ScalarNode || v.Tag != "!!null" {
		return errLayout
	}
	at, end := d.offset(v), d.offset(v)
	if v.Value != "" {
		var err error
		if end, err = d.end(v); err != nil {
			return err
		}
	}
	text := d.flowText(value, d.lineIndent(k))
	if !d.json && !d.inFlow(k) && (len(value.Content) > 0) {
		text = strings.TrimSuffix(d.blockPair("x", value, d.column(k)), "\n")
		text = text[strings.IndexByte(text, ':')+1:]
		if v.Value == "" {
			text = strings.TrimLeft(text, " ")
			if !strings.HasPrefix(text, "\n") {
				text = " " + text
			}
		}
	} else if v.Value == "" {
		text = " " + text
	}
	d.add(at, end, text)
	m.Content[2*i+1] = value
	return nil
}

// inFlow says whether n sits inside a flow collection: a character before
// it on its line opens one that is not closed.
func (d *doc) inFlow(n *yaml.Node) bool {
	off := d.offset(n)
	depth := 0
	for _, c := range d.data[d.lineStart(off):off] {
		switch c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
	}
	return depth > 0
}

// original is the last node of a collection's content that was there
// before the edits (step 2: the last value of a mapping), nil for none.
func original(content []*yaml.Node, step int) *yaml.Node {
	for i := len(content) - 1; i >= 0; i -= step {
		if content[i].Line > 0 {
			return content[i]
		}
	}
	return nil
}

// end is where the node n ends in the file: after its last character, as
// it was before the edits.
func (d *doc) end(n *yaml.Node) (int, error) {
	if e, ok := d.ends[n]; ok {
		return e, nil
	}
	e, err := d.findEnd(n)
	if err == nil {
		d.ends[n] = e
	}
	return e, err
}

func (d *doc) findEnd(n *yaml.Node) (int, error) {
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	switch {
	case n.Line == 0:
		return 0, errLayout
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		return 0, errLayout
	case n.Kind == yaml.ScalarNode:
		return d.scalarEnd(n)
	case d.flow(n) || n.Style&yaml.FlowStyle != 0:
		return d.flowEnd(n)
	case original(n.Content, step) == nil:
		return 0, errLayout
	}
	return d.end(original(n.Content, step))
}

// scalarEnd is where a scalar ends: after its closing quote, the last
// line of a block scalar, or a plain scalar's one line.
func (d *doc) scalarEnd(n *yaml.Node) (int, error) {
	start := d.offset(n)
	data := d.data
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(data); i++ {
			if data[i] == '\'' {
				if i+1 < len(data) && data[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return d.blockScalarEnd(start), nil
	case n.Tag == "!!null" && n.Value == "":
		return start, nil
	case !strings.Contains(n.Value, "\n") && bytes.HasPrefix(data[start:], []byte(n.Value)):
		return start + len(n.Value), nil
	}
	return 0, errLayout
}

// blockScalarEnd is where the block scalar whose header is at start ends:
// after its last line that is not blank, its body being the lines after
// the header indented more than the header's line.
func (d *doc) blockScalarEnd(start int) int {
	header := d.lineIndent0(start)
	end := d.lineEnd(start)
	for off := end + 1; off < len(d.data); {
		le := d.lineEnd(off)
		line := d.data[off:le]
		next := le + 1
		if le < len(d.data) && d.data[le] == '\r' {
			next++
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if len(line)-len(bytes.TrimLeft(line, " ")) <= header {
				break
			}
			end = le
		}
		off = next
	}
	return end
}

// lineIndent0 is the indentation of the line that off is on.
func (d *doc) lineIndent0(off int) int {
	s := d.lineStart(off)
	line := d.data[s:d.lineEnd(s)]
	return len(line) - len(bytes.TrimLeft(line, " "))
}

// flowEnd is where a flow collection ends: after its closing bracket.
func (d *doc) flowEnd(n *yaml.Node) (int, error) {
	off := d.offset(n)
	if off >= len(d.data) || d.data[off] != '[' && d.data[off] != '{' {
		return 0, errLayout
	}
	i := off + 1
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	if last := original(n.Content, step); last != nil {
		var err error
		if i, err = d.end(last); err != nil {
			return 0, err
		}
	}
	for ; i < len(d.data); i++ {
		switch c := d.data[i]; c {
		case ' ', '\t', '\r', '\n', ',':
		case '#':
			i = d.lineEnd(i)
		case ']', '}':
			return i + 1, nil
		default:
			return 0, errLayout
		}
	}
	return 0, errLayout
}

// apply makes the edits, last first, and returns the document's new text.
func (d *doc) apply(start, end int) []byte {
	slices.SortStableFunc(d.edits, func(a, b edit) int { return a.at - b.at })
	var b bytes.Buffer
	at := start
	for _, e := range d.edits {
		b.Write(d.data[at:e.at])
		b.WriteString(e.text)
		at = e.end
	}
	b.Write(d.data[at:end])
	return b.Bytes()
}

// verify says whether text, parsed, holds what the edited tree whose sum
// is want does: the same nodes, of the same kinds and tags, with the same
// values, in the same order, whatever their style and position. The text
// of an item of a List read item by item holds a sequence of one: that
// entry.
func verify(text []byte, want [sha256.Size]byte, item bool) error {
	var n yaml.Node
	if err := yaml.Unmarshal(text, &n); err != nil {
		return err
	}
	if item && len(n.Content) == 1 && n.Content[0].Kind == yaml.SequenceNode && len(n.Content[0].Content) == 1 {
		n.Content[0] = n.Content[0].Content[0]
	}
	if len(n.Content) == 0 || sum(n.Content[0]) != want {
		return errors.New("the edited text does not hold the edited object")
	}
	return nil
}

// sum is a digest of what a tree holds: each node's kind, tag and value,
// in order, whatever its style and position.
func sum(root *yaml.Node) [sha256.Size]byte {
	h := sha256.New()
	var buf []byte
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		v := ""
		if n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode {
			v = n.Value
		}
		buf = strconv.AppendInt(buf[:0], int64(n.Kind), 10)
		buf = append(append(append(buf, ' '), n.ShortTag()...), ' ')
		buf = strconv.AppendInt(buf, int64(len(n.Content)), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(len(v)), 10)
		buf = append(append(append(buf, ':'), v...), '\n')
		h.Write(buf)
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// quotedAs gives string scalars among items the quotes of the scalar ref
// beside which they go: a list of words written in double quotes gets
// more of them.
func quotedAs(ref *yaml.Node, items []*yaml.Node) []*yaml.Node {
	style := ref.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
	if ref.Kind != yaml.ScalarNode || style == 0 {
		return items
	}
	out := make([]*yaml.Node, len(items))
	for i, it := range items {
		c := *it
		if c.Kind == yaml.ScalarNode && c.Tag == "!!str" {
			c.Style = style
		}
		out[i] = &c
	}
	return out
}

// str is a string scalar.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// writer writes nodes as the YAML library does, with one encoder for the
// whole run: a new encoder for each scalar cost some 15 KB of buffers, which
// for a few megabytes of manifests made gigabytes of garbage. A scalar's
// text is kept, so that the words written in every pod (the install
// container's, the flags) are encoded once.
type writer struct {
	buf   bytes.Buffer
	enc   *yaml.Encoder
	memo  map[scalarKey]string
	nodes map[string]*yaml.Node // what every pod gets alike, made once
}

// scalarKey is what a scalar's text depends on.
type scalarKey struct {
	tag, value string
	style      yaml.Style
	flow       bool
}

func newWriter() *writer {
	w := &writer{memo: map[scalarKey]string{}, nodes: map[string]*yaml.Node{}}
	w.enc = yaml.NewEncoder(&w.buf)
	return w
}

// shared is the node called name, made by make the first time: a subtree
// that the edited trees of many pods hold alike, and that no edit changes.
func (w *writer) shared(name string, make func() *yaml.Node) *yaml.Node {
	n, ok := w.nodes[name]
	if !ok {
		n = make()
		w.nodes[name] = n
	}
	return n
}

// encode is n as the YAML library writes it, a document of its own,
// without the marker that starts every document after the first.
func (w *writer) encode(n *yaml.Node) (string, error) {
	w.buf.Reset()
	if err := w.enc.Encode(n); err != nil {
		w.enc = yaml.NewEncoder(&w.buf) // its state is not known after an error
		return "", err
	}
	out := strings.TrimPrefix(w.buf.String(), "---\n")
	return strings.TrimSuffix(out, "\n"), nil
}

// scalar is a scalar as YAML writes it where a block value goes.
func (w *writer) scalar(n *yaml.Node) string {
	k := scalarKey{n.Tag, n.Value, n.Style, false}
	if t, ok := w.memo[k]; ok {
		return t
	}
	t, err := w.encode(n)
	if err != nil {
		t = fmt.Sprintf("%q", n.Value)
	}
	w.memo[k] = t
	return t
}

// flow is n as an entry of a flow collection.
func (w *writer) flow(n *yaml.Node) string {
	k := scalarKey{n.Tag, n.Value, n.Style, true}
	if n.Kind == yaml.ScalarNode {
		if t, ok := w.memo[k]; ok {
			return t
		}
	}
	t, err := w.encode(&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{flowStyled(n)}})
	if err != nil {
		return ""
	}
	t = t[1 : len(t)-1]
	if n.Kind == yaml.ScalarNode {
		w.memo[k] = t
	}
	return t
}

// flowText is n in flow style (JSON in a JSON document); indent is the
// indentation of the line it starts on, which a JSON document's entries
// on lines of their own follow.
func (d *doc) flowText(n *yaml.Node, indent int) string {
	if d.json {
		var b strings.Builder
		d.writeJSON(&b, n, indent)
		return b.String()
	}
	return d.w.flow(n)
}

// flowPair is key: value in flow style.
func (d *doc) flowPair(k, v *yaml.Node, indent int) string {
	return d.flowText(k, indent) + d.colon() + d.flowText(v, indent)
}

// colon and comma are how the document separates a key from its value
// and one entry from the next, on one line.
func (d *doc) colon() string {
	if d.tight {
		return ":"
	}
	return ": "
}

func (d *doc) comma() string {
	if d.tight {
		return ","
	}
	return ", "
}

// flowStyled is a copy of n whose collections are all in flow style.
func flowStyled(n *yaml.Node) *yaml.Node {
	c := *n
	if c.Kind != yaml.ScalarNode {
		c.Style = yaml.FlowStyle
		c.Content = nil
		for _, e := range n.Content {
			c.Content = append(c.Content, flowStyled(e))
		}
	}
	return &c
}

// writeJSON writes n as JSON, its entries on lines of their own, indented
// by d.unit a level from indent, when the document puts its own so.
func (d *doc) writeJSON(b *strings.Builder, n *yaml.Node, indent int) {
	open, close := "[", "]"
	if n.Kind == yaml.MappingNode {
		open, close = "{", "}"
	}
	switch {
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!bool" || n.Tag == "!!float"):
		b.WriteString(n.Value)
		return
	case n.Kind == yaml.ScalarNode:
		out, _ := json.Marshal(n.Value)
		b.Write(out)
		return
	case len(n.Content) == 0:
		b.WriteString(open + close)
		return
	}
	b.WriteString(open)
	inner := indent + d.unit
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	for i := 0; i < len(n.Content); i += step {
		if i > 0 {
			b.WriteString(",")
			if d.unit == 0 && !d.tight {
				b.WriteString(" ")
			}
		}
		if d.unit > 0 {
			b.WriteString("\n" + strings.Repeat(" ", inner))
		}
		if step == 2 {
			d.writeJSON(b, n.Content[i], inner)
			b.WriteString(d.colon())
			d.writeJSON(b, n.Content[i+1], inner)
		} else {
			d.writeJSON(b, n.Content[i], inner)
		}
	}
	if d.unit > 0 {
		b.WriteString("\n" + strings.Repeat(" ", indent))
	}
	b.WriteString(close)
}

// blockItem is item as a block sequence's entry whose dash is at column
// col: "- " and the item, its lines indented under it, ending in a line
// break.
func (d *doc) blockItem(item *yaml.Node, col int) string {
	lines := d.blockLines(item, col+2)
	lines[0] = strings.Repeat(" ", col) + "- " + strings.TrimLeft(lines[0], " ")
	return strings.Join(lines, "\n") + "\n"
}

// blockPair is key: value as a block mapping's entry at column col, ending
// in a line break.
func (d *doc) blockPair(key string, v *yaml.Node, col int) string {
	pad := strings.Repeat(" ", col)
	k := d.w.scalar(str(key))
	switch {
	case v.Kind == yaml.ScalarNode || len(v.Content) == 0:
		return pad + k + ": " + d.blockValue(v) + "\n"
	case v.Kind == yaml.SequenceNode:
		var b strings.Builder
		for _, it := range v.Content {
			b.WriteString(d.blockItem(it, col+d.dash))
		}
		return pad + k + ":\n" + b.String()
	}
	return pad + k + ":\n" + strings.Join(d.blockLines(v, col+d.indent), "\n") + "\n"
}

// blockValue is a scalar, or an empty collection, as a block value.
func (d *doc) blockValue(v *yaml.Node) string {
	if v.Kind == yaml.ScalarNode {
		return d.w.scalar(v)
	}
	if v.Kind == yaml.MappingNode {
		return "{}"
	}
	return "[]"
}

// blockLines are n's lines in block style, at column col.
func (d *doc) blockLines(n *yaml.Node, col int) []string {
	switch {
	case n.Kind == yaml.MappingNode && len(n.Content) > 0:
		var b strings.Builder
		for i := 0; i+1 < len(n.Content); i += 2 {
			b.WriteString(d.blockPair(n.Content[i].Value, n.Content[i+1], col))
		}
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		var b strings.Builder
		for _, it := range n.Content {
			b.WriteString(d.blockItem(it, col))
		}
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}
	return []string{strings.Repeat(" ", col) + d.blockValue(n)}
}
