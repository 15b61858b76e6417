// pod.go: a pod template as the rules judge it, and what the rules share
// to judge it: the containers that run proxy-await, each with its
// invocation and settings, and the sidecars the pod shows.

package rules

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/internal/urlport"
	"github.com/proxy-await/proxy-await/proxies"
)

// Options are what judging a pod needs beside the pod.
type Options struct {
	// Versions are the cluster's releases, by name (proxies.ReleaseNames).
	Versions map[string]proxies.Version
	// Native are the settings of whole meshes that turn native sidecars on
	// (true) or off, by preset (proxies.MeshNames).
	Native map[string]bool
	// Images are what the images run where the caller knows it (a file of
	// entrypoints, a registry), or nil: a container that sets no command
	// runs its image's ENTRYPOINT, which a manifest does not show.
	Images invocation.Images
}

// Pod is a pod template as the rules judge it: as the manifest writes it,
// with the containers that run proxy-await and how, and the sidecars it
// shows.
type Pod struct {
	*manifest.Pod
	Invocations map[*manifest.Container]*invocation.Invocation
	Sidecars    sidecar.Set
	images      invocation.Images
}

// Analyse reads what p's containers run and which sidecars p shows; p is
// linked with the rest of its input (manifest.Input.Link).
func Analyse(p *manifest.Pod, opt Options) *Pod {
	a := &Pod{Pod: p, Invocations: map[*manifest.Container]*invocation.Invocation{}, images: opt.Images}
	for _, c := range p.Containers {
		if inv, ok := invocation.Of(c, opt.Images); ok {
			a.Invocations[c] = inv
		}
	}
	a.Sidecars = sidecar.Find(p, sidecar.Cluster{Versions: opt.Versions, Native: opt.Native}, a.Runs)
	return a
}

// Runs says whether c runs proxy-await.
func (p *Pod) Runs(c *manifest.Container) bool {
	_, ok := p.Invocations[c]
	return ok
}

// Judge judges every container of the pod that runs proxy-await, with each
// rule in the registry's order (then unknown-value, which says what was
// not judged), and then the pod as a whole. flags parses the settings.
func (p *Pod) Judge(flags *invocation.FlagTable) []Finding {
	var out []Finding
	for _, c := range p.Containers {
		inv, ok := p.Invocations[c]
		if !ok {
			continue
		}
		j := &judge{p: p, c: c, inv: inv, set: invocation.ReadSettings(inv, c, flags)}
		j.cfg = j.set.Config
		for _, r := range registry {
			if r.container != nil {
				r.container(j)
			}
		}
		j.unknownValue()
		out = append(out, j.out...)
	}
	if len(p.Containers) == 0 {
		return out
	}
	pj := &podJudge{p: p, app: p.mainContainer()}
	for _, r := range registry {
		if r.pod != nil {
			r.pod(pj)
		}
	}
	return append(out, pj.out...)
}

// judge judges one container that runs proxy-await.
type judge struct {
	p        *Pod
	c        *manifest.Container
	inv      *invocation.Invocation
	set      invocation.Settings
	cfg      *config.Config // nil when the settings are not known, or a start would refuse them
	out      []Finding
	skipped  []string           // rules not judged
	unknowns []manifest.Unknown // the values that made them so
}

func (j *judge) report(rule string, line int, format string, args ...any) {
	j.reportAs(lookup(rule).Level, rule, line, format, args...)
}

// reportAs is a finding of rule at level, which the rule's own level
// says where nothing makes it less sure.
func (j *judge) reportAs(level, rule string, line int, format string, args ...any) {
	if line == 0 {
		line = j.inv.Line
	}
	j.out = append(j.out, Finding{
		File: j.p.File, Line: line, Level: level, Rule: rule,
		Kind: j.p.Kind, Name: j.p.Name, Container: j.c.Name,
		Message: fmt.Sprintf(format, args...),
	})
}

// needs says whether the flags a rule reads are all in the input; when one
// is not, the rule is not judged, and the unknown-value finding says so.
func (j *judge) needs(rule string, flags ...string) bool {
	if j.set.All != nil {
		j.skip(rule, *j.set.All)
		return false
	}
	for _, f := range flags {
		if u, ok := j.set.Unknown[f]; ok {
			j.skip(rule, u)
			return false
		}
	}
	return true
}

// known says whether the input holds the value of flag, and of every flag
// when the words where flags go are not known.
func (j *judge) known(flag string) bool {
	_, unknown := j.set.Unknown[flag]
	return j.set.All == nil && !unknown
}

// skip notes a rule not judged for want of a value.
func (j *judge) skip(rule string, u manifest.Unknown) {
	if !slices.Contains(j.skipped, rule) {
		j.skipped = append(j.skipped, rule)
	}
	if !slices.ContainsFunc(j.unknowns, func(v manifest.Unknown) bool { return v.What == u.What && v.From == u.From }) {
		j.unknowns = append(j.unknowns, u)
	}
}

// waits says whether proxy-await waits for a proxy here: its settings are
// known and it does not --install.
func (j *judge) waits() bool { return j.cfg != nil && j.cfg.Install == nil }

// supervises says whether proxy-await waits and then runs a command, and
// so takes the signals and the pod's end.
func (j *judge) supervises() bool { return j.waits() && len(j.cfg.Command) > 0 }

// The flags that choose the URLs proxy-await waits for and shuts down.
var readyFlags, shutdownFlags = []string{"proxy", "port", "ready-url"}, []string{"shutdown", "proxy", "port", "shutdown-url"}

// target is a URL of a proxy inside the pod.
type target struct {
	url    string // as findings show it: without its password (package redact)
	port   int
	path   string
	preset string // the --proxy preset it comes from; "" when given with --ready-url or --shutdown-url
}

// targets are the URLs that name a loopback host, with the preset each
// comes from, if one did.
func targets(cfg *config.Config, urls []string) []target {
	var out []target
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || !config.IsLoopback(u.Hostname()) {
			continue
		}
		port, _ := strconv.Atoi(urlport.Of(u)) // digits: url.Parse took it
		out = append(out, target{url: redact.URL(raw), port: port, path: u.Path, preset: cfg.FromPreset(raw)})
	}
	return out
}

// shutdownTargets are the sidecars the shutdown URLs reach: the one that
// takes each URL's POST where one does (sidecar.Set.At), else, by path,
// those of the URL's preset (shutdown-disabled says where they take it).
// A sidecar that does not serve the URL's endpoint is reached only where
// none there does, so that each such sidecar is said once, by
// shutdown-disabled.
func (j *judge) shutdownTargets() []*sidecar.Sidecar {
	var out []*sidecar.Sidecar
	add := func(s *sidecar.Sidecar) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		at := j.p.Sidecars.At(t.port, t.path, func(s *sidecar.Sidecar) sidecar.Endpoint { return s.ShutdownAt })
		for _, s := range j.p.Sidecars.Sidecars {
			switch ep := s.ShutdownAt; {
			case ep.Path != t.path:
			case at != nil && at.ShutdownAt.Off == "" && at.ShutdownAt.Unknown == nil:
				if s == at {
					add(s)
				}
			case at != nil && ep.Port == t.port, at == nil && (t.preset == "" || t.preset == s.Preset):
				add(s)
			}
		}
	}
	return out
}

// suggest is the --proxy that waits for and shuts down what the pod
// shows: the presets given that reach one of its sidecars, then one for
// each sidecar they miss. A preset the pod does not show is never in it.
func (j *judge) suggest(only func(*sidecar.Sidecar) bool) string {
	var out []string
	var covered []*sidecar.Sidecar
	for _, p := range j.cfg.Proxies {
		for _, s := range j.p.Sidecars.Sidecars {
			if sidecar.Covers(p, j.cfg.Port, s) && (only == nil || only(s)) {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
				covered = append(covered, s)
			}
		}
	}
	for _, s := range j.p.Sidecars.Sidecars {
		if !slices.Contains(covered, s) && (only == nil || only(s)) && !slices.Contains(out, s.Preset) {
			out = append(out, s.Preset)
		}
	}
	return strings.Join(out, ",")
}

// classic says whether a sidecar is not native, or may not be.
func classic(s *sidecar.Sidecar) bool { return s.Nativeness != sidecar.Native }

// podJudge judges what a pod shows as a whole, whether or not a container
// runs proxy-await.
type podJudge struct {
	p   *Pod
	app *manifest.Container // the container a finding names
	out []Finding
}

// report is a finding about the pod as a whole, at the container that
// runs proxy-await, else its first application container.
func (j *podJudge) report(rule string, line int, format string, args ...any) {
	j.reportAs(lookup(rule).Level, rule, line, format, args...)
}

// reportAs is a finding of rule at level.
func (j *podJudge) reportAs(level, rule string, line int, format string, args ...any) {
	if line == 0 {
		line = j.app.Line
	}
	j.out = append(j.out, Finding{File: j.p.File, Line: line, Level: level, Rule: rule,
		Kind: j.p.Kind, Name: j.p.Name, Container: j.app.Name, Message: fmt.Sprintf(format, args...)})
}

// runsProxyAwait says whether a container of the pod runs proxy-await.
func (p *Pod) runsProxyAwait() bool { return len(p.Invocations) > 0 }

// mainContainer is the container a finding about the pod names: the first
// that runs proxy-await, else the first application container.
func (p *Pod) mainContainer() *manifest.Container {
	for _, c := range p.Containers {
		if p.Runs(c) {
			return c
		}
	}
	for _, c := range p.Containers {
		if !c.Init && !p.isSidecar(c) {
			return c
		}
	}
	return p.Containers[0]
}

// isSidecar says whether c is one of the pod's sidecars.
func (p *Pod) isSidecar(c *manifest.Container) bool {
	return slices.ContainsFunc(p.Sidecars.Sidecars, func(s *sidecar.Sidecar) bool { return s.Container == c })
}

// list is names in English: "a", "a and b", "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
