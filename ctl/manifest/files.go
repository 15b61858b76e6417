// files.go: the manifests whole, for a command that writes them again
// (inject): each file's bytes as read, the problems met reading it, and
// its pod templates, read again with their nodes when the file is
// rewritten.

package manifest

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// File is a file of manifests as it was read.
type File struct {
	Name     string
	Data     []byte    // nil when it could not be read
	Problems []Problem // what was met reading it
	// NotObject is the line of its first document that is no Kubernetes
	// object (it has no kind), 0 when there is none.
	NotObject int
	// Chart says that it is a Helm chart's own file, beside its Chart.yaml
	// (values.yaml), which is passed over without a word: the chart's
	// templates get the problem that says to render them.
	Chart bool
	// Pods are its pod templates, in the order of its documents, as
	// first read. A command may let go of them once it has what it needs
	// of the whole input: EachDocument reads each again.
	Pods []*Pod

	bounds Bounds
	src    source
}

// keepFile keeps what was read of a file, with Options.Keep: its data,
// the problems met, and the pods it added to the input from the index pods
// on.
func (in *Input) keepFile(src source, data []byte, problems []Problem, notObject, pods int) {
	if !in.opt.Keep {
		return
	}
	in.Files = append(in.Files, &File{Name: src.name, Data: data, Problems: slices.Clone(problems), NotObject: notObject,
		Chart: src.own, Pods: slices.Clone(in.Pods[pods:]), bounds: in.opt.Bounds, src: src})
}

// Document is a document of a file: where its text is (Start and End,
// offsets in the file's data), its root node, and the pod templates it
// holds, each paired with its node.
type Document struct {
	Start, End int
	Root       *yaml.Node
	// Item: Root is an item of a List, read item by item (lists.go), whose
	// text (Start to End) is the entry of a block sequence; List is the
	// List's header then, its root without its items.
	Item      bool
	List      *yaml.Node
	Templates []Template
}

// Template is a pod template's node and what is read of it.
type Template struct {
	Node *yaml.Node // the template: the mapping that has spec.containers
	Pod  *Pod       // read again, as f.Pods holds it: linked to nothing yet (Input.Link)
}

// EachDocument parses f again, with the bounds it was read with, and gives
// each document to fn in turn, each pod template with its node and what is
// read of it, anew: the same as the pod of f.Pods at its index, so that a
// command that made what it needs of f.Pods can let go of them before it
// writes the file. One document's tree is alive at a time, as when the
// file was read. It is for a file without problems of the input: one that
// was parsed whole.
func (f *File) EachDocument(fn func(Document)) {
	lines := &fileLines{data: f.Data}
	documents(f.Name, f.Data, f.bounds, func(root *yaml.Node, p piece) {
		d := Document{Start: p.off, End: p.off + len(p.text), Root: root, Item: p.item, List: p.list}
		for _, o := range objects(f.Name, root) {
			if !holdsPods(o) {
				continue
			}
			for _, t := range templates(o) {
				d.Templates = append(d.Templates, Template{Node: deref(t.node), Pod: podOf(o, t, lines, f.bounds)})
			}
		}
		fn(d)
	}, func(Problem) {})
}
