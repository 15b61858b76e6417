// files.go: the manifests whole, for the modes that rewrite them
// (--inject): each file's bytes as read, what --check would say of it as a
// file, and its pod templates with what --check knows of each, paired
// again with their nodes when the file is rewritten.

package check

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// File is a file of manifests as --check reads it.
type File struct {
	Name string
	Data []byte // nil when it could not be read
	// Findings are what --check says of the file as a file: why it cannot
	// be read or parsed (rule input), or that a document is no Kubernetes
	// object (rule skipped).
	Findings []Finding
	// NotObject is the line of its first document that is no Kubernetes
	// object (it has no kind), 0 when there is none.
	NotObject int
	// Chart says that it is a Helm chart's own file, beside its Chart.yaml
	// (values.yaml), which --check passes over without a word: the chart's
	// templates get the finding that says to render them.
	Chart bool
	// Pods are its pod templates, in the order of its documents.
	Pods []*Pod
}

// Pod is a pod template with what --check knows of it: the containers that
// run proxy-await, the sidecars it shows and whether each is native.
type Pod struct {
	a *analysis
}

// Kind and Name are those of the object that holds the template.
func (p *Pod) Kind() string { return p.a.p.kind }
func (p *Pod) Name() string { return p.a.p.name }

// Line is the line of the object that holds the template.
func (p *Pod) Line() int { return p.a.p.line }

// Read reads manifests as --check does (the same sources, bounds and
// findings about files) and keeps each file whole, with its pod templates
// judged as --check judges them, their Namespaces, ConfigMaps and Secrets
// read from the whole input.
func Read(paths []string, opt Options) []*File {
	in := newInput(opt)
	in.keepFiles = true
	in.readSources(paths)
	for _, f := range in.files {
		for _, p := range f.Pods {
			in.namespaceOf(p.a.p)
			p.a = analyse(p.a.p, in.stores, opt)
		}
	}
	return in.files
}

// keepFile keeps what was read of a file, for Read: its data, the findings
// about it, and the pods it added to the input from the index pods on.
func (in *input) keepFile(src source, data []byte, findings []Finding, notObject, pods int) {
	if !in.keepFiles {
		return
	}
	f := &File{Name: src.name, Data: data, Findings: slices.Clone(findings), NotObject: notObject, Chart: src.own}
	for _, p := range in.pods[pods:] {
		f.Pods = append(f.Pods, &Pod{&analysis{p: p}})
	}
	in.files = append(in.files, f)
}

// Document is a document of a file: where its text is (Start and End,
// offsets in the file's data), its root node, and the pod templates it
// holds, each paired with its node.
type Document struct {
	Start, End int
	Root       *yaml.Node
	Templates  []Template
}

// Template is a pod template's node and what --check knows of it.
type Template struct {
	Node *yaml.Node // the template: the mapping that has spec.containers
	Pod  *Pod
}

// Documents parses f again, with the bounds it was read with, and pairs
// each pod template with what Read found of it. It is for a file without
// findings of rule input: one that was parsed whole.
func (f *File) Documents() []Document {
	var out []Document
	next := 0
	documents(f.Name, f.Data, func(root *yaml.Node, p piece) {
		d := Document{Start: p.off, End: p.off + len(p.text), Root: root}
		for _, o := range objects(f.Name, root) {
			if o.kind == "Namespace" || o.kind == "ConfigMap" || o.kind == "Secret" {
				continue
			}
			for _, t := range templates(o) {
				if next < len(f.Pods) {
					d.Templates = append(d.Templates, Template{Node: deref(t.node), Pod: f.Pods[next]})
				}
				next++
			}
		}
		out = append(out, d)
	}, func(Finding) {})
	return out
}
