// Package check is proxy-await --check: it reads Kubernetes manifests and
// reports the mistakes that make a pod running proxy-await hang, drop
// requests or get killed, before they deploy. It judges each container's
// proxy-await flags with config's own parser, and what each proxy does from
// one table of facts per proxy (facts.go).
//
// Nothing of it runs unless --check does, and it has no package
// initialisation of its own (its facts are composite literals of
// constants). A normal start still pays for its code being in the binary,
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

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/exitcode"
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
	return Finding{File: file, Line: line, Level: Error, Rule: "input", Message: msg}
}

// Options are what the checks need beside the manifests.
type Options struct {
	// Versions are the cluster's releases, by name (config.VersionNames).
	Versions map[string]config.Version
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Entrypoint is an image's entrypoint where the caller knows it (a
	// Dockerfile beside the manifests), or nil: a container that sets only
	// args runs its image's entrypoint, which a manifest does not show.
	Entrypoint func(image string) []string
}

// Summary counts what a check looked at.
type Summary struct {
	Files, Pods, Containers int // Containers: those that run proxy-await
}

// Paths checks the manifests at paths and returns the findings, in the
// order of the files, the objects in them and their containers.
func Paths(paths []string, opt Options) ([]Finding, Summary) {
	srcs := sources(paths)
	var findings []Finding
	var docs []document
	var sum Summary
	rank := map[string]int{}
	for i, src := range srcs {
		rank[src.name] = i
		data, err := readAll(src, opt.Stdin)
		if err != nil {
			findings = append(findings, inputFinding(src.name, 0, reason(err)))
			continue
		}
		sum.Files++
		d, bad := parse(src.name, data)
		docs = append(docs, d...)
		findings = append(findings, bad...)
	}
	var objs []object
	namespaces := map[string]*object{}
	for _, d := range docs {
		for _, o := range objects(d) {
			objs = append(objs, o)
			if o.kind == "Namespace" {
				namespaces[o.name] = &o
			}
		}
	}
	for _, o := range objs {
		p, ok := podOf(o)
		if !ok {
			continue
		}
		p.ns = namespaces[o.namespace]
		sum.Pods++
		f, n := checkPod(p, opt)
		findings = append(findings, f...)
		sum.Containers += n
	}
	// Input findings were found first; each belongs in its file's turn.
	slices.SortStableFunc(findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(rank[a.File], rank[b.File]), cmp.Compare(a.Line, b.Line))
	})
	return findings, sum
}

// Run is --check: it prints the findings on stdout, one line each (one JSON
// object under --log-format json), logs a summary, and returns the exit
// code: 1 when a finding is an error.
func Run(c *config.Config, stdin io.Reader, stdout io.Writer, log *slog.Logger) int {
	findings, sum := Paths(c.Paths, Options{Versions: c.Versions, Stdin: stdin})
	errs, warns := 0, 0
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, f := range findings {
		if c.LogFormat == "json" {
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
