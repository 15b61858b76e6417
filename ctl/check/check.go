// Package check is proxy-awaitctl check: it reads Kubernetes manifests
// (package manifest), finds what each container runs (invocation) and the
// sidecars each pod shows (sidecar), and reports, by the rules (rules), the
// mistakes that make a pod running proxy-await hang, drop requests or get
// killed, before they deploy. Its golden files are the rules' cases
// (../rules/testdata), cases of reading (testdata/cases) and a corpus of
// manifests as teams write them (testdata/corpus).
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
	// Native are the settings of whole meshes that turn native sidecars on
	// (true) or off, by preset (proxies.MeshNames).
	Native map[string]bool
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Images are what the images run where the caller knows it (a
	// Dockerfile beside the manifests, a registry), or nil: a container
	// that sets no command runs its image's ENTRYPOINT, which a manifest
	// does not show.
	Images invocation.Images
}

// Summary counts what a check looked at.
type Summary struct {
	Files, Pods, Containers int // Containers: those that run proxy-await
}

// Paths checks the manifests at paths and returns the findings, in the
// order of the files, and of the lines in each.
func Paths(paths []string, opt Options) ([]rules.Finding, Summary) {
	in := manifest.Read(paths, manifest.Options{Stdin: opt.Stdin})
	var findings []rules.Finding
	for _, p := range in.Problems {
		findings = append(findings, rules.Problem(p))
	}
	sum := Summary{Files: in.Read}
	flags := invocation.NewFlagTable()
	for i, p := range in.Pods {
		in.Link(p)
		a := rules.Analyse(p, rules.Options{Versions: opt.Versions, Native: opt.Native, Images: opt.Images})
		findings = append(findings, a.Judge(flags)...)
		sum.Pods++
		sum.Containers += len(a.Invocations)
		in.Pods[i] = nil // judged: what it holds may go
	}
	// Input findings were found first; each belongs in its file's turn.
	slices.SortStableFunc(findings, func(a, b rules.Finding) int {
		return cmp.Or(cmp.Compare(in.Rank(a.File), in.Rank(b.File)), cmp.Compare(a.Line, b.Line))
	})
	return findings, sum
}

// Main is proxy-awaitctl check, from its command line to its exit code:
// it prints the findings on stdout, one line each (one JSON object under
// --log-format json), logs a summary, and returns 1 when a finding is an
// error.
func Main(c *config.Check, stdin io.Reader, stdout io.Writer, log *slog.Logger) int {
	findings, sum := Paths(c.Paths, Options{Versions: c.Versions, Native: c.Native, Stdin: stdin})
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
