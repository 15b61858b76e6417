// Package manifest reads Kubernetes manifests for proxy-awaitctl: files,
// directories and stdin in, within bounds on time and memory; out come the
// pod templates of every kind that holds one, the Namespaces, ConfigMaps and
// Secrets that they read, and every value with its line. It judges nothing:
// what it meets while reading (a file it cannot read, a Helm template, a key
// given twice, a document that is no object) is a Problem, which the rules
// input and skipped report.
package manifest

import (
	"fmt"
	"io"
	"strings"
)

// Options are what reading needs beside the paths.
type Options struct {
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Command is the subcommand that reads, as messages name it: check,
	// the default, or inject.
	Command string
	// Keep keeps each file whole (Input.Files), for a command that writes
	// the manifests again.
	Keep bool
	// Bounds are the bounds of reading; zero: DefaultBounds.
	Bounds Bounds
}

// Problem is what stops a file or a document from being read, or says that
// a document is no Kubernetes object.
type Problem struct {
	File    string
	Line    int // 0 when it is about the whole file
	Message string
	// NotObject: a document that has no kind, which is not read; any other
	// problem is an error of the input.
	NotObject bool
}

// Input is what was read: the problems met, in the order of the files and
// of the lines in each, the pod templates, and the Namespaces, ConfigMaps
// and Secrets that they may read.
type Input struct {
	Problems []Problem
	Pods     []*Pod
	Files    []*File // each file whole, with Options.Keep
	Read     int     // files read

	opt        Options
	services   []*Service
	namespaces map[string][]*Namespace
	stores     map[storeKey]*store
	left       int // bytes that may still be read
	rank       map[string]int
}

// Read reads the manifests at paths: each file, a directory's manifests,
// or stdin for "-".
func Read(paths []string, opt Options) *Input {
	in := newInput(opt)
	in.readSources(paths)
	return in
}

// newInput is an input that has read nothing yet.
func newInput(opt Options) *Input {
	if opt.Bounds == (Bounds{}) {
		opt.Bounds = DefaultBounds
	}
	return &Input{opt: opt, namespaces: map[string][]*Namespace{}, stores: map[storeKey]*store{}, left: opt.Bounds.Input, rank: map[string]int{}}
}

// Rank is the place of a file among those read, the order in which what
// is said of it goes.
func (in *Input) Rank(file string) int { return in.rank[file] }

// readSources reads the files at paths, within the bound on the whole
// input.
func (in *Input) readSources(paths []string) {
	var bound *Problem // the problem that says the input is past its bound
	for i, src := range sources(paths) {
		in.rank[src.name] = i
		before, pods := len(in.Problems), len(in.Pods)
		if in.left < 0 {
			in.keepFile(src, nil, []Problem{*bound}, 0, pods)
			continue // past the bound: said once
		}
		data, err := readAll(src, in.opt.Stdin, in.left, in.opt.Bounds)
		if err != nil {
			p := Problem{File: src.name, Message: reason(err)}
			in.Problems = append(in.Problems, p)
			if _, past := err.(pastBound); past {
				in.left, bound = -1, &p
			}
			in.keepFile(src, nil, in.Problems[before:], 0, pods)
			continue
		}
		in.parseSource(src, data, before, pods)
	}
}

// parseSource reads the text of a source that was read whole.
func (in *Input) parseSource(src source, data []byte, before, pods int) {
	in.left -= len(data)
	in.Read++
	line := in.parseFile(src.name, data, src.chart)
	if line > 0 && !src.own {
		in.Problems = append(in.Problems, Problem{File: src.name, Line: line, NotObject: true,
			Message: "not a Kubernetes object (it has no kind): nothing in this document is checked"})
	}
	in.keepFile(src, data, in.Problems[before:], line, pods)
}

// Reread is what Read would have made of the same files had they held
// data instead, by their index in Files (stdin given twice is two files of
// one name, the second empty), for a command that changes them in memory
// before it reads them (inject, which takes back what it added before it
// adds it again): the files in the same order, within the same bounds. It
// is for an input read with Options.Keep.
func (in *Input) Reread(data map[int][]byte) *Input {
	out := newInput(in.opt)
	for i, f := range in.Files {
		out.rank[f.Name] = i
		before, pods := len(out.Problems), len(out.Pods)
		text, ok := data[i]
		if !ok {
			text = f.Data
		}
		if f.Data == nil || out.left < len(text) {
			// Not read the first time, or past the bound now: as it was.
			out.Problems = append(out.Problems, f.Problems...)
			out.keepFile(f.src, nil, out.Problems[before:], 0, pods)
			continue
		}
		out.parseSource(f.src, text, before, pods)
	}
	return out
}

// keep reads what the commands need of an object, before its document's
// node tree is dropped.
func (in *Input) keep(o object, lines *fileLines) []kept {
	if !holdsPods(o) {
		switch o.kind {
		case "Namespace":
			return []kept{{ns: namespaceOf(o)}}
		case "Service":
			return []kept{{service: serviceOf(o)}}
		}
		return []kept{{store: storeOf(o)}} // a ConfigMap or a Secret
	}
	var out []kept
	for _, t := range templates(o) {
		out = append(out, kept{pod: podOf(o, t, lines, in.opt.Bounds)})
	}
	return out
}

// holdsPods says whether an object's pod templates are read (keep): every
// object's but a Namespace's, a ConfigMap's, a Secret's and a core
// Service's (a Knative Service holds a pod template).
func holdsPods(o object) bool {
	switch o.kind {
	case "Namespace", "ConfigMap", "Secret":
		return false
	case "Service":
		return str(get(o.node, "apiVersion")) != "v1"
	}
	return true
}

// add keeps what was read of an object.
func (in *Input) add(k kept) {
	switch {
	case k.pod != nil:
		in.Pods = append(in.Pods, k.pod)
	case k.ns != nil:
		in.namespaces[k.ns.Name] = append(in.namespaces[k.ns.Name], k.ns)
	case k.service != nil:
		in.services = append(in.services, k.service)
	case k.store != nil:
		st := k.store
		in.stores[storeKey{st.kind, st.namespace, st.name}] = st
	}
}

// Link finds what p reads elsewhere in the input, once the whole input is
// read: its Namespace, and the ConfigMaps and Secrets that its containers'
// variables come from.
func (in *Input) Link(p *Pod) {
	in.LinkNamespace(p)
	for _, c := range p.Containers {
		resolve(c, p.Namespace, in.stores)
	}
}

// LinkNamespace finds p's Namespace in the input, and nothing else that
// Link finds: for a command that reads what every pod of the input is
// before it reads any pod's variables.
func (in *Input) LinkNamespace(p *Pod) {
	in.namespaceOf(p)
}

// namespaceOf finds p's Namespace in the input. When files define it
// differently (a kustomize base and an overlay), the pod's own file wins,
// else the definition in the directory nearest to it, and the pod says so.
func (in *Input) namespaceOf(p *Pod) {
	defs := in.namespaces[p.Namespace]
	if len(defs) == 0 {
		return
	}
	best := defs[0]
	for _, ns := range defs[1:] {
		if nearer(p.File, ns.File, best.File) {
			best = ns
		}
	}
	p.NS = best
	var others []string
	for _, ns := range defs {
		if !ns.SameAs(best) {
			others = append(others, fmt.Sprintf("%s:%d", ns.File, ns.Line))
		}
	}
	if len(others) > 0 {
		whose := "the nearest"
		if best.File == p.File {
			whose = "this file's"
		}
		p.NSConflict = fmt.Sprintf("namespace %s is defined with other labels or annotations in %s than in %s:%d: this pod is judged with %s, %s:%d; check what is deployed (kustomize build OVERLAY | proxy-awaitctl check -)",
			p.Namespace, strings.Join(others, ", "), best.File, best.Line, whose, best.File, best.Line)
	}
}

// Services are the Services of the input that send to p's pods.
func (in *Input) Services(p *Pod) []*Service {
	var out []*Service
	for _, s := range in.services {
		if s.Selects(p) {
			out = append(out, s)
		}
	}
	return out
}

// ConfigMap is the value at key of the ConfigMap called name in namespace,
// when the input has it.
func (in *Input) ConfigMap(namespace, name, key string) (string, bool) {
	st, ok := in.stores[storeKey{"ConfigMap", namespace, name}]
	if !ok {
		return "", false
	}
	v, ok := st.data[key]
	return v, ok
}

// nearer says whether file a is nearer to the pod's file than file b: the
// same file, else the longer common directory.
func nearer(pod, a, b string) bool {
	switch {
	case a == pod:
		return b != pod
	case b == pod:
		return false
	}
	return commonDir(pod, a) > commonDir(pod, b)
}

// commonDir is the length of the directory that two paths share.
func commonDir(a, b string) int {
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			n = i
		}
	}
	return n
}
