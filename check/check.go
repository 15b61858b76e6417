// Package check is proxy-awaitctl check: it reads Kubernetes manifests and
// reports the mistakes that make a pod running proxy-await hang, drop
// requests or get killed, before they deploy. It judges each container's
// proxy-await flags with config's own parser, and what each proxy does from
// the proxy table (package proxies), one file of facts per proxy.
//
// Nothing of it runs unless --check does, and it has no package
// initialisation of its own (nor has the proxy table, composite literals
// of constants). A normal start still pays for its code being in the binary,
// and for the init functions of the YAML library it imports, which Go runs
// in every program that links it (BENCHMARKS.md measures both).
package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/proxies"
)

// Levels of findings.
const (
	Error   = "error"
	Warning = "warning"
)

// Finding is one mistake found, at a container of a pod template (or at a
// file, for rule input).
type Finding struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Level     string `json:"level"`
	Rule      string `json:"rule"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Container string `json:"container"`
	Message   string `json:"message"`
}

// String is the finding as the text output prints it:
// FILE:LINE: LEVEL: RULE: KIND/NAME container NAME: message. A finding about
// a whole file (rule input) has no object, and no line when none is known.
func (f Finding) String() string {
	at := f.File
	if f.Line > 0 {
		at = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	if f.Kind == "" {
		return fmt.Sprintf("%s: %s: %s: %s", at, f.Level, f.Rule, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s/%s container %s: %s", at, f.Level, f.Rule, f.Kind, f.Name, f.Container, f.Message)
}

func inputFinding(file string, line int, msg string) Finding {
	return Finding{File: file, Line: line, Level: levelOf(ruleInput), Rule: ruleInput, Message: msg}
}

// Options are what the checks need beside the manifests.
type Options struct {
	// Versions are the cluster's releases, by name (proxies.ReleaseNames).
	Versions map[string]proxies.Version
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Entrypoint is an image's entrypoint where the caller knows it (a
	// Dockerfile beside the manifests), or nil: a container that sets only
	// args runs its image's entrypoint, which a manifest does not show.
	Entrypoint func(image string) []string
	// Mode is the mode that reads the manifests, as messages name it:
	// --check, the default, or --inject.
	Mode string
}

// Summary counts what a check looked at.
type Summary struct {
	Files, Pods, Containers int // Containers: those that run proxy-await
}

// input is what a check has read: the findings so far, the pod templates,
// and the Namespaces, ConfigMaps and Secrets that they may read; and, for
// a mode that rewrites the manifests (Read), each file whole.
type input struct {
	opt        Options
	findings   []Finding
	pods       []*pod
	namespaces map[string][]*namespace
	stores     map[storeKey]*store
	left       int // bytes that may still be read
	sum        Summary
	files      []*File // kept by Read, nil for Paths
	keepFiles  bool
}

func newInput(opt Options) *input {
	return &input{opt: opt, namespaces: map[string][]*namespace{}, stores: map[storeKey]*store{}, left: maxInputBytes}
}

// Paths checks the manifests at paths and returns the findings, in the
// order of the files, and of the lines in each.
func Paths(paths []string, opt Options) ([]Finding, Summary) {
	in := newInput(opt)
	rank := in.readSources(paths)
	flags := newFlagTable()
	for i, p := range in.pods {
		in.namespaceOf(p)
		f, n := checkPod(p, in.stores, flags, opt)
		in.findings = append(in.findings, f...)
		in.sum.Pods++
		in.sum.Containers += n
		in.pods[i] = nil // judged: what it holds may go
	}
	// Input findings were found first; each belongs in its file's turn.
	slices.SortStableFunc(in.findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(rank[a.File], rank[b.File]), cmp.Compare(a.Line, b.Line))
	})
	return in.findings, in.sum
}

// readSources reads the files at paths, within the bound on the whole
// input, and returns each file's rank, the order its findings go in.
func (in *input) readSources(paths []string) map[string]int {
	rank := map[string]int{}
	var bound *Finding // the finding that says the input is past its bound
	for i, src := range sources(paths) {
		rank[src.name] = i
		before, pods := len(in.findings), len(in.pods)
		if in.left < 0 {
			in.keepFile(src, nil, []Finding{*bound}, 0, pods)
			continue // past the bound: said once
		}
		data, err := readAll(src, in.opt.Stdin, in.left)
		if err != nil {
			f := inputFinding(src.name, 0, reason(err))
			in.findings = append(in.findings, f)
			if err == errPastBound {
				in.left, bound = -1, &f
			}
			in.keepFile(src, nil, in.findings[before:], 0, pods)
			continue
		}
		in.left -= len(data)
		in.sum.Files++
		line := in.parseFile(src.name, data, src.chart)
		if line > 0 && !src.own {
			in.findings = append(in.findings, skippedFinding(src.name, line))
		}
		in.keepFile(src, data, in.findings[before:], line, pods)
	}
	return rank
}

// keep reads what the check needs of an object, before its document's
// node tree is dropped.
func (in *input) keep(o object, lines *fileLines) []kept {
	switch o.kind {
	case "Namespace":
		return []kept{{ns: namespaceOf(o)}}
	case "ConfigMap", "Secret":
		return []kept{{store: storeOf(o)}}
	}
	var out []kept
	for _, p := range podsOf(o, lines) {
		out = append(out, kept{pod: p})
	}
	return out
}

// add keeps what was read of a file that is no template.
func (in *input) add(k kept) {
	switch {
	case k.pod != nil:
		in.pods = append(in.pods, k.pod)
	case k.ns != nil:
		in.namespaces[k.ns.name] = append(in.namespaces[k.ns.name], k.ns)
	case k.store != nil:
		st := k.store
		in.stores[storeKey{st.kind, st.namespace, st.name}] = st
	}
}

// namespaceOf finds p's Namespace in the input. When files define it
// differently (a kustomize base and an overlay), the pod's own file wins,
// else the definition in the directory nearest to it, and the pod says so.
func (in *input) namespaceOf(p *pod) {
	defs := in.namespaces[p.namespace]
	if len(defs) == 0 {
		return
	}
	best := defs[0]
	for _, ns := range defs[1:] {
		if nearer(p.file, ns.file, best.file) {
			best = ns
		}
	}
	p.ns = best
	var others []string
	for _, ns := range defs {
		if !ns.sameAs(best) {
			others = append(others, fmt.Sprintf("%s:%d", ns.file, ns.line))
		}
	}
	if len(others) > 0 {
		whose := "the nearest"
		if best.file == p.file {
			whose = "this file's"
		}
		p.nsConflict = fmt.Sprintf("namespace %s is defined with other labels or annotations in %s than in %s:%d: this pod is judged with %s, %s:%d; check what is deployed (kustomize build OVERLAY | proxy-awaitctl check -)",
			p.namespace, strings.Join(others, ", "), best.file, best.line, whose, best.file, best.line)
	}
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

// checkPod judges every container of p that runs proxy-await, and the pod
// as a whole, and returns the findings and how many such containers there
// are.
func checkPod(p *pod, stores map[storeKey]*store, flags *flagTable, opt Options) ([]Finding, int) {
	a := analyse(p, stores, opt)
	return a.judge(flags), len(a.invs)
}

// analysis is a pod template as the rules judge it: the containers that
// run proxy-await, with their invocations, and the sidecars the pod shows.
type analysis struct {
	p    *pod
	invs map[*container]invocation
	mesh mesh
	opt  Options
}

// analyse reads what p's containers run and which sidecars it shows, its
// Namespace found (namespaceOf) and its variables read from stores.
func analyse(p *pod, stores map[storeKey]*store, opt Options) *analysis {
	for _, c := range p.containers {
		resolve(c, p.namespace, stores)
	}
	a := &analysis{p: p, invs: map[*container]invocation{}, opt: opt}
	for _, c := range p.containers {
		if inv, ok := invocationOf(c, opt.Entrypoint); ok {
			a.invs[c] = inv
		}
	}
	a.mesh = meshOf(p, opt.Versions, a.runs)
	return a
}

// runs says whether c runs proxy-await.
func (a *analysis) runs(c *container) bool {
	_, ok := a.invs[c]
	return ok
}

// judge judges every container of the pod that runs proxy-await, and the
// pod as a whole.
func (a *analysis) judge(flags *flagTable) []Finding {
	var out []Finding
	for _, c := range a.p.containers {
		if inv, ok := a.invs[c]; ok {
			j := &judge{p: a.p, c: c, inv: inv, mesh: a.mesh, set: readSettings(inv, c, flags)}
			j.run()
			out = append(out, j.out...)
		}
	}
	return append(out, podFindings(a.p, a.mesh, a.runs, a.opt.Entrypoint)...)
}

// Run is --check: it prints the findings on stdout, one line each (one JSON
// object under --log-format json), logs a summary, and returns the exit
// code: 1 when a finding is an error.
func Run(c *config.Check, stdin io.Reader, stdout io.Writer, log *slog.Logger) int {
	findings, sum := Paths(c.Paths, Options{Versions: c.Versions, Stdin: stdin})
	errs, warns := 0, 0
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, f := range findings {
		if c.JSON {
			_ = enc.Encode(struct {
				Event string `json:"event"`
				Finding
			}{"finding", f})
		} else {
			fmt.Fprintln(stdout, f)
		}
		if f.Level == Error {
			errs++
		} else {
			warns++
		}
	}
	log.Info(fmt.Sprintf("checked %s: %s; proxy-await runs in %s",
		count(sum.Files, "file"), count(sum.Pods, "pod template"), count(sum.Containers, "container")),
		"event", "check_done", "errors", errs, "warnings", warns)
	if errs > 0 {
		return exitcode.Findings
	}
	return 0
}

// count is n things, in English.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
