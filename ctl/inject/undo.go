// undo.go: taking back what inject changed in a pod template, as its
// record says (record.go): for --undo, and before a later inject works the
// pod out again. Each change is taken back in the text, at its nodes'
// positions, and the document parsed again must hold exactly the tree the
// record gives back; when it does not, the pod is left as it is.

package inject

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// undoneFile is what was taken back of a file.
type undoneFile struct {
	orig  []byte // the file's text
	data  []byte // the text with inject's changes taken back
	edits []edit // that made data of the file's text
	pods  []undonePod
}

// undonePod is a pod template whose record was read.
type undonePod struct {
	pod        *manifest.Pod
	index      int      // among the file's pod templates
	containers []string // those that ran proxy-await, as inject had adopted them
	images     map[string]imageconfig.Config
	err        error // why the changes could not be taken back
}

// injected says whether p holds inject's record.
func injected(p *manifest.Pod) bool {
	_, ok := p.Annotations.Get(recordKey)
	return ok
}

// undoFile takes inject's changes back out of each pod template of f that
// has its record.
func (r *Result) undoFile(f *manifest.File) undoneFile {
	out := undoneFile{orig: f.Data, data: f.Data}
	if !slices.ContainsFunc(f.Pods, injected) || len(f.Problems) > 0 {
		return out
	}
	starts := lineStarts(f.Data)
	type pending struct {
		text  []byte
		want  [sha256.Size]byte
		item  bool
		edits []edit
		pods  []int // in out.pods
	}
	var docs []pending
	var lists listIndents
	index := 0 // of the next pod template in f
	f.EachDocument(func(dc manifest.Document) {
		d := newDoc(r.w, f.Data, starts, dc.Root, dc.Start, dc.End)
		if dc.Item {
			lists.learn(d, dc.Root, dc.List)
		}
		var taken []int
		var undos []*templateUndo
		for _, t := range dc.Templates {
			index++
			if !injected(t.Pod) {
				continue
			}
			u, err := d.undoTemplate(t.Node)
			out.pods = append(out.pods, undonePod{pod: t.Pod, index: index - 1, err: err})
			if err != nil {
				continue
			}
			up := &out.pods[len(out.pods)-1]
			up.containers, up.images = u.containers, u.images
			taken = append(taken, len(out.pods)-1)
			undos = append(undos, u)
		}
		if len(d.edits) == 0 {
			return
		}
		// The tree is changed once every text edit is known: the edits
		// are found by the nodes' positions.
		for _, u := range undos {
			u.apply()
		}
		docs = append(docs, pending{d.apply(dc.Start, dc.End), sum(dc.Root), dc.Item, d.edits, taken})
	})
	for _, p := range docs {
		if err := verify(p.text, p.want, p.item); err != nil {
			for _, i := range p.pods {
				out.pods[i].err = err
			}
			continue
		}
		out.edits = append(out.edits, p.edits...)
	}
	slices.SortStableFunc(out.edits, func(a, b edit) int { return a.at - b.at })
	d := &doc{data: f.Data, edits: out.edits}
	out.data = d.apply(0, len(f.Data))
	return out
}

// templateUndo is the undoing of one pod template: the changes to its
// tree, made once every text edit of the document is known, and what the
// record says of its containers.
type templateUndo struct {
	tree       []func()
	containers []string
	images     map[string]imageconfig.Config
	// gone are the entries to take out, by the mapping or list that holds
	// them: entries side by side are taken out as one, so that the commas
	// between them go once.
	gone    map[*yaml.Node][]int
	parents []*yaml.Node // in the order first met
}

// take notes that entry i of n goes.
func (u *templateUndo) take(n *yaml.Node, i int) {
	if _, ok := u.gone[n]; !ok {
		u.parents = append(u.parents, n)
	}
	if !slices.Contains(u.gone[n], i) {
		u.gone[n] = append(u.gone[n], i)
	}
}

// takeOut makes the edits that take out the entries noted, each run of
// entries side by side at once.
func (d *doc) takeOut(u *templateUndo) error {
	for _, n := range u.parents {
		idx := slices.Sorted(slices.Values(u.gone[n]))
		step := 1
		if n.Kind == yaml.MappingNode {
			step = 2
		}
		var entries []*yaml.Node
		for _, i := range idx {
			entries = append(entries, n.Content[step*i])
		}
		for start := 0; start < len(idx); {
			end := start + 1
			for end < len(idx) && idx[end] == idx[end-1]+1 {
				end++
			}
			from, to, err := d.entrySpan(n, idx[start], end-start)
			if err != nil {
				return err
			}
			d.add(from, to, "")
			start = end
		}
		u.tree = append(u.tree, func() {
			for _, e := range entries {
				remove(n, e)
			}
		})
	}
	return nil
}

func (u *templateUndo) apply() {
	for _, f := range u.tree {
		f()
	}
}

// undoTemplate takes back, in d's text, the changes that tpl's record
// names; the changes to its tree are for later (templateUndo.apply).
func (d *doc) undoTemplate(tpl *yaml.Node) (*templateUndo, error) {
	raw := value(value(value(tpl, "metadata"), "annotations"), recordKey)
	if raw == nil || raw.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("its %s annotation is not one inject wrote", recordKey)
	}
	rec, err := parseRecord(raw.Value)
	if err != nil {
		return nil, err
	}
	u := &templateUndo{images: map[string]imageconfig.Config{}, gone: map[*yaml.Node][]int{}}
	before := len(d.edits)
	// A change below a key or entry that was added goes with it.
	var added []nodePath
	for _, c := range rec.Changes {
		if c.Op == opAdded {
			added = append(added, c.Path)
		}
	}
	for _, c := range rec.Changes {
		if slices.ContainsFunc(added, func(p nodePath) bool { return len(c.Path) > len(p) && c.Path.under(p) }) {
			continue
		}
		if err := d.undoChange(tpl, c, u); err != nil {
			d.edits = d.edits[:before]
			return nil, fmt.Errorf("%s of its %s annotation: %w", c.Path, recordKey, err)
		}
	}
	if err := d.takeOut(u); err != nil {
		d.edits = d.edits[:before]
		return nil, fmt.Errorf("its %s annotation: %w", recordKey, err)
	}
	return u, nil
}

// undoChange takes back one change, in the text now and in the tree later.
func (d *doc) undoChange(tpl *yaml.Node, c change, u *templateUndo) error {
	at, err := locate(tpl, c.Path)
	if err != nil {
		return err
	}
	if len(c.Path) == 4 && c.Path[0] == "spec" && c.Path[1] == "containers" && (c.Path[3] == "command" || c.Path[3] == "args") {
		d.notePrior(tpl, c, at, u)
	}
	switch c.Op {
	case opAdded:
		u.take(at.parent, at.i)
	case opPrepended:
		if at.node.Kind != yaml.SequenceNode || len(at.node.Content) < c.N || c.N < 1 {
			return errMissing
		}
		for i := range c.N {
			u.take(at.node, i)
		}
	case opSet, opRenamed:
		// A value set, or a key renamed: the scalar is written back as it was.
		n := at.node
		if c.Op == opRenamed {
			if at.key == nil {
				return errMissing
			}
			n = at.key
		}
		end, err := d.end(n)
		if err != nil {
			return err
		}
		was, err := parseScalar(c.Was)
		if err != nil {
			return err
		}
		d.addRaw(d.offset(n), end, c.Was)
		u.tree = append(u.tree, func() { *n = *was })
	case opValue:
		if at.key == nil {
			return errMissing
		}
		start, err := d.colonEnd(at.key)
		if err != nil {
			return err
		}
		end, err := d.end(at.node)
		if err != nil {
			return err
		}
		var m yaml.Node
		if err := yaml.Unmarshal([]byte("x:"+c.Was), &m); err != nil || len(m.Content) == 0 || len(m.Content[0].Content) != 2 {
			return fmt.Errorf("its former value %q does not parse", c.Was)
		}
		was := m.Content[0].Content[1]
		d.addRaw(start, end, c.Was)
		parent, key := at.parent, at.key
		u.tree = append(u.tree, func() {
			if i := slices.Index(parent.Content, key); i >= 0 {
				parent.Content[i+1] = was
			}
		})
	default:
		return fmt.Errorf("a change %q this inject does not know", c.Op)
	}
	return nil
}

// notePrior keeps, of a container whose command inject wrote from its
// image, what the image ran as inject wrote it, for a later inject whose
// registry does not answer; and of every container whose command inject
// changed, its name.
func (d *doc) notePrior(tpl *yaml.Node, c change, at located, u *templateUndo) {
	name := strings.TrimPrefix(c.Path[2], "=")
	ctr := at.parent
	image := value(ctr, "image")
	if c.Path[3] == "command" && !slices.Contains(u.containers, name) {
		u.containers = append(u.containers, name)
	}
	if c.Op != opAdded || image == nil {
		return
	}
	cfg := u.images[image.Value]
	cfg.Image = image.Value
	words := func(n *yaml.Node) []string {
		var out []string
		for _, w := range n.Content {
			out = append(out, strings.ReplaceAll(w.Value, "$$", "$"))
		}
		return out
	}
	switch c.Path[3] {
	case "command":
		cmd := words(at.node)
		if i := slices.Index(cmd, "--"); i >= 0 {
			cfg.Entrypoint = cmd[i+1:]
		}
		digest := value(value(value(tpl, "metadata"), "annotations"), entrypointKey+name)
		if digest != nil && strings.HasPrefix(digest.Value, "sha256:") {
			cfg.Digest = digest.Value
		}
	case "args":
		cfg.Cmd = words(at.node)
	}
	u.images[image.Value] = cfg
}

// parseScalar is the scalar whose text is text.
func parseScalar(text string) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil || len(n.Content) != 1 || n.Content[0].Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("its former text %q is no scalar", text)
	}
	c := *n.Content[0]
	return &c, nil
}

// remove takes the entry e out of a list, or the pair whose key is e out
// of a mapping.
func remove(n *yaml.Node, e *yaml.Node) {
	i := slices.Index(n.Content, e)
	switch {
	case i < 0:
	case n.Kind == yaml.MappingNode:
		n.Content = slices.Delete(n.Content, i, i+2)
	default:
		n.Content = slices.Delete(n.Content, i, i+1)
	}
}

// addRaw records an edit whose text is the file's own, which keeps its
// line ends.
func (d *doc) addRaw(at, end int, text string) {
	d.edits = append(d.edits, edit{at, end, text})
}

// entrySpan is the text of count entries of a mapping or list from its
// entry i on, so that taking it out leaves the rest as it would be had
// they never been there: in a flow collection (and JSON) with the comma
// and space after them (before them, for the last), in block style their
// whole lines.
func (d *doc) entrySpan(n *yaml.Node, i, count int) (int, int, error) {
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	entries := len(n.Content) / step
	if i < 0 || count < 1 || i+count > entries {
		return 0, 0, errMissing
	}
	first := func(j int) *yaml.Node { return n.Content[step*j] }
	last := func(j int) *yaml.Node { return n.Content[step*j+step-1] }
	endOf := func(j int) (int, error) { return d.end(last(j)) }
	if d.flow(n) {
		switch {
		case i+count < entries:
			return d.offset(first(i)), d.offset(first(i + count)), nil
		case i > 0:
			start, err := endOf(i - 1)
			if err != nil {
				return 0, 0, err
			}
			end, err := endOf(i + count - 1)
			return start, end, err
		}
		end, err := endOf(i + count - 1)
		return d.offset(first(i)), end, err
	}
	var start int
	if n.Kind == yaml.SequenceNode {
		if _, alone := d.dashColumn(first(i)); !alone {
			return 0, 0, errLayout
		}
		start = d.lineStart(d.offset(first(i)))
	} else {
		if !d.beginsLine(first(i)) {
			return 0, 0, errLayout
		}
		start = d.lineStart(d.offset(first(i)))
	}
	last0, err := endOf(i + count - 1)
	if err != nil {
		return 0, 0, err
	}
	end := d.lineEnd(last0)
	switch {
	case end < len(d.data) && d.data[end] == '\r':
		end += 2
	case end < len(d.data):
		end++
	case start > 0:
		// The last line of the file, without a line break: the one
		// before it goes instead.
		start--
		if start > 0 && d.data[start-1] == '\r' {
			start--
		}
	}
	return start, end, nil
}

// lineMap tells the line of a file's text that a line of the same text
// with some edits made stands for.
type lineMap struct {
	edits        []edit // in the order of their offsets
	from, edited []int  // the lines' starts, in the text and in the edited text
}

func newLineMap(data []byte, edits []edit) lineMap {
	d := &doc{data: data, edits: slices.Clone(edits)}
	return lineMap{edits: d.edits, from: lineStarts(data), edited: lineStarts(d.apply(0, len(data)))}
}

// line is the line of the text that the edited text's line n stands for;
// a line that an edit wrote stands for the edit's own.
func (m lineMap) line(n int) int {
	if n < 1 || n > len(m.edited) {
		return n
	}
	off, delta := m.edited[n-1], 0 // delta: the edited offset less the text's, past the edits so far
	orig := -1
	for _, e := range m.edits {
		at := e.at + delta
		if off < at {
			break
		}
		if off < at+len(e.text) {
			orig = e.at
			break
		}
		delta += len(e.text) - (e.end - e.at)
	}
	if orig < 0 {
		orig = off - delta
	}
	i, found := slices.BinarySearch(m.from, orig)
	if !found {
		i--
	}
	return i + 1
}
