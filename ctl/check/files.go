// files.go: the manifests whole, for the modes that rewrite them
// (--inject): each file's bytes as read, what --check would say of it as a
// file, and its pod templates with what --check knows of each, paired
// again with their nodes when the file is rewritten.

package check

import (
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"go.yaml.in/yaml/v3"
)

// File is a file of manifests as --check reads it.
type File struct {
	Name string
	Data []byte // nil when it could not be read
	// Findings are what --check says of the file as a file: why it cannot
	// be read or parsed (rule input), or that a document is no Kubernetes
	// object (rule skipped).
	Findings []rules.Finding
	// NotObject is the line of its first document that is no Kubernetes
	// object (it has no kind), 0 when there is none.
	NotObject int
	// Chart says that it is a Helm chart's own file, beside its Chart.yaml
	// (values.yaml), which --check passes over without a word: the chart's
	// templates get the finding that says to render them.
	Chart bool
	// Pods are its pod templates, in the order of its documents.
	Pods []*PodAnalysis

	file *manifest.File
}

// PodAnalysis is a pod template with what --check knows of it: the containers that
// run proxy-await, the sidecars it shows and whether each is native.
type PodAnalysis struct {
	a *rules.Pod
}

// Kind and Name are those of the object that holds the template.
func (p *PodAnalysis) Kind() string { return p.a.Kind }
func (p *PodAnalysis) Name() string { return p.a.Name }

// Line is the line of the object that holds the template.
func (p *PodAnalysis) Line() int { return p.a.Line }

// Read reads manifests as --check does (the same sources, bounds and
// findings about files) and keeps each file whole, with its pod templates
// judged as --check judges them, their Namespaces, ConfigMaps and Secrets
// read from the whole input.
func Read(paths []string, opt Options) []*File {
	in := read(paths, opt, true)
	var out []*File
	for _, mf := range in.Files {
		f := &File{Name: mf.Name, Data: mf.Data, NotObject: mf.NotObject, Chart: mf.Chart, file: mf}
		for _, p := range mf.Problems {
			f.Findings = append(f.Findings, rules.Problem(p))
		}
		for _, p := range mf.Pods {
			in.Link(p)
			f.Pods = append(f.Pods, &PodAnalysis{analyse(p, opt)})
		}
		out = append(out, f)
	}
	return out
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
	Pod  *PodAnalysis
}

// Documents parses f again, with the bounds it was read with, and pairs
// each pod template with what Read found of it. It is for a file without
// findings of rule input: one that was parsed whole.
func (f *File) Documents() []Document {
	var out []Document
	next := 0
	for _, d := range f.file.Documents() {
		doc := Document{Start: d.Start, End: d.End, Root: d.Root}
		for _, t := range d.Templates {
			doc.Templates = append(doc.Templates, Template{Node: t.Node, Pod: f.Pods[next]})
			next++
		}
		out = append(out, doc)
	}
	return out
}
