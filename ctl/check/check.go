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
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/proxies"
)

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

// read reads the manifests at paths as opt says.
func read(paths []string, opt Options, keep bool) *manifest.Input {
	return manifest.Read(paths, manifest.Options{Stdin: opt.Stdin, Command: opt.Mode, Keep: keep, Bounds: opt.Bounds})
}

// Paths checks the manifests at paths and returns the findings, in the
// order of the files, and of the lines in each.
func Paths(paths []string, opt Options) ([]rules.Finding, Summary) {
	in := read(paths, opt, false)
	var findings []rules.Finding
	for _, p := range in.Problems {
		findings = append(findings, rules.Problem(p))
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
	slices.SortStableFunc(findings, func(a, b rules.Finding) int {
		return cmp.Or(cmp.Compare(in.Rank(a.File), in.Rank(b.File)), cmp.Compare(a.Line, b.Line))
	})
	return findings, sum
}

// checkPod judges every container of p that runs proxy-await, and the pod
// as a whole, and returns the findings and how many such containers there
// are.
func checkPod(p *manifest.Pod, flags *invocation.FlagTable, opt Options) ([]rules.Finding, int) {
	a := analyse(p, opt)
	return a.Judge(flags), len(a.Invocations)
}

// analyse is p as the rules judge it.
func analyse(p *manifest.Pod, opt Options) *rules.Pod {
	return rules.Analyse(p, rules.Options{Versions: opt.Versions, Images: opt.Images})
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
				rules.Finding
			}{"finding", f})
		} else {
			fmt.Fprintln(stdout, f)
		}
		if f.Level == rules.Error {
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
