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

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
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

// Options are what the checks need beside the manifests.
type Options struct {
	// Versions are the cluster's releases, by name (proxies.ReleaseNames).
	Versions map[string]proxies.Version
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Images are what the images run where the caller knows it (a
	// Dockerfile beside the manifests, a registry), or nil: a container
	// that sets no command runs its image's ENTRYPOINT, which a manifest
	// does not show.
	Images invocation.Images
	// Mode is the mode that reads the manifests, as messages name it:
	// --check, the default, or --inject.
	Mode string
	// Bounds are the bounds of reading; zero: manifest.DefaultBounds.
	Bounds manifest.Bounds
}

// Summary counts what a check looked at.
type Summary struct {
	Files, Pods, Containers int // Containers: those that run proxy-await
}

// problemFinding is what the rules input and skipped say of a problem met
// reading the manifests.
func problemFinding(p manifest.Problem) Finding {
	rule := ruleInput
	if p.NotObject {
		rule = ruleSkipped
	}
	return Finding{File: p.File, Line: p.Line, Level: levelOf(rule), Rule: rule, Message: p.Message}
}

// read reads the manifests at paths as opt says.
func read(paths []string, opt Options, keep bool) *manifest.Input {
	return manifest.Read(paths, manifest.Options{Stdin: opt.Stdin, Command: opt.Mode, Keep: keep, Bounds: opt.Bounds})
}

// Paths checks the manifests at paths and returns the findings, in the
// order of the files, and of the lines in each.
func Paths(paths []string, opt Options) ([]Finding, Summary) {
	in := read(paths, opt, false)
	var findings []Finding
	for _, p := range in.Problems {
		findings = append(findings, problemFinding(p))
	}
	sum := Summary{Files: in.Read}
	flags := invocation.NewFlagTable()
	for i, p := range in.Pods {
		in.Link(p)
		f, n := checkPod(p, flags, opt)
		findings = append(findings, f...)
		sum.Pods++
		sum.Containers += n
		in.Pods[i] = nil // judged: what it holds may go
	}
	// Input findings were found first; each belongs in its file's turn.
	slices.SortStableFunc(findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(in.Rank(a.File), in.Rank(b.File)), cmp.Compare(a.Line, b.Line))
	})
	return findings, sum
}

// checkPod judges every container of p that runs proxy-await, and the pod
// as a whole, and returns the findings and how many such containers there
// are.
func checkPod(p *manifest.Pod, flags *invocation.FlagTable, opt Options) ([]Finding, int) {
	a := analyse(p, opt)
	return a.judge(flags), len(a.invs)
}

// analysis is a pod template as the rules judge it: the containers that
// run proxy-await, with their invocations, and the sidecars the pod shows.
type analysis struct {
	p    *manifest.Pod
	invs map[*manifest.Container]*invocation.Invocation
	mesh sidecar.Set
	opt  Options
}

// analyse reads what p's containers run and which sidecars it shows, p
// linked with the rest of the input (manifest.Input.Link).
func analyse(p *manifest.Pod, opt Options) *analysis {
	a := &analysis{p: p, invs: map[*manifest.Container]*invocation.Invocation{}, opt: opt}
	for _, c := range p.Containers {
		if inv, ok := invocation.Of(c, opt.Images); ok {
			a.invs[c] = inv
		}
	}
	a.mesh = sidecar.Find(p, opt.Versions, a.runs)
	return a
}

// runs says whether c runs proxy-await.
func (a *analysis) runs(c *manifest.Container) bool {
	_, ok := a.invs[c]
	return ok
}

// judge judges every container of the pod that runs proxy-await, and the
// pod as a whole.
func (a *analysis) judge(flags *invocation.FlagTable) []Finding {
	var out []Finding
	for _, c := range a.p.Containers {
		if inv, ok := a.invs[c]; ok {
			j := &judge{p: a.p, c: c, inv: inv, mesh: a.mesh, set: invocation.ReadSettings(inv, c, flags)}
			j.run()
			out = append(out, j.out...)
		}
	}
	return append(out, podFindings(a.p, a.mesh, a.runs, a.opt.Images)...)
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
