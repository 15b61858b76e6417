// objects.go: the Kubernetes objects of a document, and of them the
// Namespaces, ConfigMaps and Secrets that pod templates read.

package manifest

import (
	"encoding/base64"
	"strings"

	"go.yaml.in/yaml/v3"
)

// object is a Kubernetes object of a file.
type object struct {
	file      string
	kind      string
	name      string
	namespace string
	line      int
	nsLine    int // metadata.namespace's line, 0 when it has none
	node      *yaml.Node
}

// objects is what a document holds: one object, or the items of a List.
func objects(file string, root *yaml.Node) []object {
	kind := str(get(root, "kind"))
	if strings.HasSuffix(kind, "List") && get(root, "items") != nil {
		var out []object
		for _, it := range items(get(root, "items")) {
			out = append(out, objects(file, it)...)
		}
		return out
	}
	if kind == "" {
		return nil // not a Kubernetes object: a Helm values file, a kustomization
	}
	name := str(path(root, "metadata", "name"))
	if name == "" {
		name = str(path(root, "metadata", "generateName"))
	}
	ns := path(root, "metadata", "namespace")
	return []object{{file, kind, name, str(ns), lineOf(root), lineOf(ns), deref(root)}}
}

// Namespace is a Namespace of the input: the labels and annotations that
// injectors read from it.
type Namespace struct {
	File        string
	Name        string
	Line        int
	Labels      Meta
	Annotations Meta
}

func namespaceOf(o object) *Namespace {
	return &Namespace{File: o.file, Name: o.name, Line: o.line,
		Labels:      metaOf(path(o.node, "metadata", "labels")),
		Annotations: metaOf(path(o.node, "metadata", "annotations"))}
}

// Meta is the Namespace's label or annotation called key.
func (ns *Namespace) Meta(key string) (Scalar, bool) {
	if v, ok := ns.Labels.Get(key); ok {
		return v, true
	}
	return ns.Annotations.Get(key)
}

// SameAs says whether two definitions of a Namespace say the same.
func (ns *Namespace) SameAs(o *Namespace) bool {
	return ns.Labels.SameAs(o.Labels) && ns.Annotations.SameAs(o.Annotations)
}

// store is a ConfigMap's or Secret's data, which env and envFrom read.
type store struct {
	kind, namespace, name string
	data                  map[string]string
}

// storeKey names a ConfigMap or Secret of the input.
type storeKey struct{ kind, namespace, name string }

func storeOf(o object) *store {
	s := &store{kind: o.kind, namespace: o.namespace, name: o.name, data: map[string]string{}}
	if o.kind == "Secret" {
		for k, v := range data(path(o.node, "data")) {
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				s.data[k] = string(b)
			}
		}
		for k, v := range data(path(o.node, "stringData")) {
			s.data[k] = v // stringData wins, as the API server merges it
		}
		return s
	}
	s.data = data(path(o.node, "data"))
	return s
}

// data is a ConfigMap's or Secret's data.
func data(n *yaml.Node) map[string]string {
	out := map[string]string{}
	for _, e := range metaOf(n) {
		out[e.Key] = e.Value.Text
	}
	return out
}

// Service is a Service of the input: which pods it selects, and the ports
// of theirs it sends to.
type Service struct {
	File, Name, Namespace string
	Line                  int
	Selector              Meta
	// TargetPorts are the ports of the pods it sends to, as written: a
	// number, or the name of a container's port; a port without a
	// targetPort sends to its own number.
	TargetPorts []string
}

func serviceOf(o object) *Service {
	spec := get(o.node, "spec")
	s := &Service{File: o.file, Name: o.name, Namespace: o.namespace, Line: o.line, Selector: metaOf(get(spec, "selector"))}
	for _, p := range items(get(spec, "ports")) {
		target := str(get(p, "targetPort"))
		if target == "" {
			target = str(get(p, "port"))
		}
		s.TargetPorts = append(s.TargetPorts, target)
	}
	return s
}

// Selects says whether s sends to the pods of p: in p's namespace, every
// label of its selector on the pod. A Service without a selector selects
// no pod (its endpoints are written by hand).
func (s *Service) Selects(p *Pod) bool {
	if s.Namespace != p.Namespace || len(s.Selector) == 0 {
		return false
	}
	for _, e := range s.Selector {
		if v, ok := p.Labels.Get(e.Key); !ok || v.Text != e.Value.Text {
			return false
		}
	}
	return true
}
