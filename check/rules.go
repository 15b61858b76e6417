// rules.go: the rules, judged for each container that runs proxy-await
// against its pod's sidecars. Their names are stable (shared/SPEC.md's
// table); each message says what is wrong, with the numbers, and the fix.

package check

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// checkPod judges every container of p that runs proxy-await, and returns
// the findings and how many such containers there are.
func checkPod(p *pod, opt Options) ([]Finding, int) {
	invs := map[*container]invocation{}
	for _, c := range p.containers {
		if inv, ok := invocationOf(c, opt.Entrypoint); ok {
			invs[c] = inv
		}
	}
	m := meshOf(p, opt.Versions, func(c *container) bool { _, ok := invs[c]; return ok })
	var out []Finding
	for _, c := range p.containers {
		if inv, ok := invs[c]; ok {
			j := &judge{p: p, c: c, inv: inv, mesh: m}
			j.run()
			out = append(out, j.out...)
		}
	}
	return out, len(invs)
}

// judge judges one container that runs proxy-await.
type judge struct {
	p    *pod
	c    *container
	inv  invocation
	mesh mesh
	cfg  *config.Config
	out  []Finding
}

func (j *judge) report(level, rule, format string, args ...any) {
	j.out = append(j.out, Finding{
		File: j.p.file, Line: j.c.line, Level: level, Rule: rule,
		Kind: j.p.kind, Name: j.p.name, Container: j.c.name,
		Message: fmt.Sprintf(format, args...),
	})
}

func (j *judge) run() {
	j.shellForm()
	if !j.inv.known {
		return // an argument comes from outside the manifest
	}
	if !j.flags() || j.cfg.Check || j.cfg.Install != "" {
		return
	}
	j.presetMismatch()
	if len(j.cfg.Command) == 0 {
		return // it only waits
	}
	j.shutdownDisabled()
	j.jobNeverCompletes()
	j.shutdownNotNeeded()
	j.gracePeriod()
	j.proxyStopsFirst()
}

// shellForm: under sh -c without exec, the shell is the container's PID 1
// and gets the kubelet's SIGTERM; proxy-await never sees it.
func (j *judge) shellForm() {
	if j.inv.shell != "" && !j.inv.exec {
		j.report(Error, "shell-form", "proxy-await runs under %s -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell",
			j.inv.shell)
	}
}

// flags: what proxy-await in this container would refuse at start, with
// the usage error it would print; ignored-variable: what it would warn of
// and ignore, a misspelt PROXY_AWAIT_ variable.
func (j *judge) flags() bool {
	// The shell's assignments first: the first of a name wins. A value the
	// manifest does not hold is empty, which proxy-await reads as unset.
	var environ []string
	for name, v := range j.inv.env {
		environ = append(environ, name+"="+v)
	}
	for name, v := range j.c.env {
		environ = append(environ, name+"="+v.value)
	}
	cfg, err := config.ParseEnviron("proxy-await", j.inv.args, environ)
	var u *config.UsageError
	switch {
	case errors.As(err, &u) && u.Hint != "":
		j.report(Error, "flags", "%s (hint: %s)", u.Msg, u.Hint)
		return false
	case err != nil:
		j.report(Error, "flags", "%s", err)
		return false
	}
	for _, w := range cfg.Warnings {
		msg := w.Msg
		if w.Hint != "" {
			msg += " (hint: " + w.Hint + ")"
		}
		j.report(Warning, "ignored-variable", "%s", msg)
	}
	j.cfg = cfg
	return true
}

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
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			port = 80
			if u.Scheme == "https" {
				port = 443
			}
		}
		out = append(out, target{url: redact.URL(raw), port: port, path: u.Path, preset: cfg.FromPreset(raw)})
	}
	return out
}

// at is the sidecar that answers e's path on t's port.
func (m mesh) at(t target, e func(*sidecar) endpoint) *sidecar {
	for _, s := range m.sidecars {
		if ep := e(s); ep.path == t.path && (ep.port == t.port || ep.port == 0) {
			return s
		}
	}
	return nil
}

// of is the pod's sidecar that preset waits for: the proxy itself, or for
// the envoy preset, any Envoy-based proxy (its admin port is not in the
// manifest).
func (m mesh) of(preset string) *sidecar {
	for _, s := range m.sidecars {
		if s.preset == preset || preset == "envoy" && (s.proxy == &istio || s.proxy == &consul) {
			return s
		}
	}
	return nil
}

// otherMesh is the pod's service mesh when preset names another one: a pod
// has one mesh, so the preset's proxy is not there. Other sidecars (Dapr,
// the Cloud SQL Auth Proxy) say nothing of a mesh that a namespace may
// inject unseen.
func (m mesh) otherMesh(preset string) *sidecar {
	i := slices.IndexFunc(proxies, func(px *proxy) bool { return px.preset == preset })
	if i < 0 || !proxies[i].mesh {
		return nil
	}
	for _, s := range m.sidecars {
		if s.mesh && s.proxy != proxies[i] {
			return s
		}
	}
	return nil
}

// presetMismatch: proxy-await would wait for a proxy the pod does not run,
// or that does not answer where it waits, or that starts only after it.
func (j *judge) presetMismatch() {
	if j.cfg.Disabled {
		return
	}
	for _, t := range targets(j.cfg, j.cfg.ReadyURLs) {
		if s := j.mesh.at(t, func(s *sidecar) endpoint { return s.ready }); s != nil {
			if s.ready.off != "" {
				j.report(Error, "preset-mismatch", "proxy-await waits for %s, which the %s sidecar never answers, so it would wait forever: %s",
					t.url, s.name, s.ready.off)
			}
			j.startsFirst(s)
			continue
		}
		if t.preset == "" {
			continue // a URL of the user's own: nothing to compare it with
		}
		pr, _ := config.LookupPreset(t.preset)
		if s := j.mesh.of(t.preset); s != nil {
			if t.preset != "envoy" {
				j.report(Error, "preset-mismatch", "--proxy %s waits for %s, but the %s sidecar here answers on port %d%s: %s",
					t.preset, t.url, s.name, s.ready.port, movedBy(j.p, s), portFix(t.preset, pr, s.ready))
			}
			j.startsFirst(s)
			continue
		}
		if i := slices.IndexFunc(j.mesh.absent, func(a absence) bool { return a.proxy.preset == t.preset }); i >= 0 {
			j.report(Error, "preset-mismatch", "--proxy %s waits for %s, but the pod has no %s sidecar (%s): it would wait forever; wait for the proxy the pod has, or use --proxy none",
				t.preset, t.url, j.mesh.absent[i].proxy.name, j.mesh.absent[i].why)
			continue
		}
		if other := j.mesh.otherMesh(t.preset); other != nil {
			j.report(Error, "preset-mismatch", "--proxy %s waits for %s, but the pod's mesh is %s (%s), and a pod has one mesh: it would wait forever; use --proxy %s",
				t.preset, t.url, other.name, other.from, other.preset)
		}
	}
}

// movedBy says which annotation moved a sidecar's port, if one did.
func movedBy(p *pod, s *sidecar) string {
	for _, key := range []string{s.adminPortKey, s.shutdownPorts} {
		if v, ok := p.annotations[key]; ok && key != "" {
			return fmt.Sprintf(" (%s: %q)", key, v)
		}
	}
	if s.container != nil {
		return " (its flags)"
	}
	return ""
}

// portFix is how to point the preset at the port the sidecar answers on.
func portFix(preset string, pr config.Preset, e endpoint) string {
	if pr.Port != 0 {
		return fmt.Sprintf("set --port %d", e.port)
	}
	return fmt.Sprintf("set --ready-url http://127.0.0.1:%d%s", e.port, e.path)
}

// startsFirst: proxy-await in a classic init container waits before the
// pod's other containers start; a sidecar that is one of those, or a
// native sidecar listed after it, is not there yet.
func (j *judge) startsFirst(s *sidecar) {
	if !j.c.init || j.c.restartAlways {
		return
	}
	switch {
	case s.native == native && s.container != nil && slices.Index(j.p.containers, s.container) > slices.Index(j.p.containers, j.c):
		j.report(Error, "preset-mismatch", "this init container waits for the %s sidecar, which is native but listed after it: init containers start in order, so it waits forever; list the sidecar first",
			s.name)
	case s.native != native:
		j.report(Error, "preset-mismatch", "this init container waits for the classic %s sidecar (%s), which starts only after every init container has finished: it waits forever; wait in the application's container (proxy-await -- APP) or use a native sidecar%s",
			s.name, s.from, s.whenClassic())
	}
}

// whenClassic qualifies a finding about a classic sidecar whose nativeness
// depends on releases --versions did not state.
func (s *sidecar) whenClassic() string {
	if s.native != depends {
		return ""
	}
	return fmt.Sprintf(" (with a release before %s; from %s the sidecar is native by default: state the releases with --versions %s)",
		s.nativeWhy, s.nativeWhy, s.flip)
}

// shutdownDisabled: -S POSTs to an endpoint the sidecar has turned off, or
// to a port it does not listen on.
func (j *judge) shutdownDisabled() {
	if !j.cfg.Shutdown {
		return
	}
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		if s := j.mesh.at(t, func(s *sidecar) endpoint { return s.shutdown }); s != nil {
			if s.shutdown.off != "" && s.native != native {
				j.report(Error, "shutdown-disabled", "-S POSTs %s, which the %s sidecar does not serve, so it would keep running: %s%s",
					t.url, s.name, s.shutdown.off, s.whenClassic())
			}
			continue
		}
		for _, s := range j.mesh.sidecars {
			if s.shutdown.path == t.path && s.shutdown.port != 0 && s.native != native && (t.preset == "" || t.preset == s.preset) {
				j.report(Error, "shutdown-disabled", "-S POSTs %s, but the %s sidecar here takes it on port %d%s: set --shutdown-url http://127.0.0.1:%d%s",
					t.url, s.name, s.shutdown.port, movedBy(j.p, s), s.shutdown.port, s.shutdown.path)
				break
			}
		}
	}
}

// shutdownTargets are the sidecars the shutdown URLs reach, by path.
func (j *judge) shutdownTargets() []*sidecar {
	var out []*sidecar
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		for _, s := range j.mesh.sidecars {
			if s.shutdown.path == t.path && (t.preset == "" || t.preset == s.preset || s.shutdown.port == t.port) && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// jobNeverCompletes: a classic sidecar outlives the application unless -S
// tells it to stop, and the Job's pod never completes.
func (j *judge) jobNeverCompletes() {
	if !j.p.job || j.c.init {
		return
	}
	shut := j.shutdownTargets()
	for _, s := range j.mesh.sidecars {
		switch {
		case s.native == native:
		case !j.cfg.Shutdown:
			j.report(Error, "job-never-completes", "the classic %s sidecar (%s) keeps running after the application exits, so the %s never completes: add -S (--shutdown)%s",
				s.name, s.from, j.p.kind, s.whenClassic())
		case !slices.Contains(shut, s):
			j.report(Error, "job-never-completes", "-S does not stop the classic %s sidecar (%s), so the %s never completes: add %s to --proxy (--proxy %s)%s",
				s.name, s.from, j.p.kind, s.preset, strings.Join(append(slices.DeleteFunc(slices.Clone(j.cfg.Proxies), func(p string) bool { return p == "none" }), s.preset), ","), s.whenClassic())
		}
	}
}

// shutdownNotNeeded: the kubelet stops a native sidecar itself once the
// application has exited.
func (j *judge) shutdownNotNeeded() {
	if !j.cfg.Shutdown {
		return
	}
	shut := j.shutdownTargets()
	if len(shut) == 0 || slices.ContainsFunc(shut, func(s *sidecar) bool { return s.native != native }) {
		return
	}
	var names []string
	for _, s := range shut {
		names = append(names, fmt.Sprintf("the %s sidecar is native here (%s)", s.name, s.nativeWhy))
	}
	j.report(Warning, "shutdown-not-needed", "%s: the kubelet stops it once the application has exited; drop -S",
		strings.Join(names, ", and "))
}

// gracePeriod: what proxy-await may take after the kubelet's SIGTERM must
// fit in the grace period, or the kubelet's SIGKILL comes first.
func (j *judge) gracePeriod() {
	parts := []string{"preStop " + dur(j.c.preStop), "term-delay " + dur(j.cfg.TermDelay), "kill-after " + dur(j.cfg.KillAfter)}
	total := j.c.preStop + j.cfg.TermDelay + j.cfg.KillAfter
	if j.cfg.Shutdown {
		parts = append(parts, "shutdown-timeout "+dur(j.cfg.ShutdownTimeout))
		total += j.cfg.ShutdownTimeout
	}
	if total <= j.p.grace {
		return
	}
	j.report(Error, "grace-period", "%s = %s > terminationGracePeriodSeconds %ds: the kubelet's SIGKILL comes first; raise terminationGracePeriodSeconds to %d, or shorten them",
		strings.Join(parts, " + "), dur(total), int(j.p.grace/time.Second), int((total+time.Second-1)/time.Second))
}

// proxyStopsFirst: a sidecar that stops taking new connections before
// proxy-await delivers the stop signal drops the requests the application
// was kept up to serve.
func (j *judge) proxyStopsFirst() {
	hold := j.c.preStop + j.cfg.TermDelay
	if hold == 0 || j.c.init {
		return
	}
	for _, s := range j.mesh.sidecars {
		if s.stopWhy == "" || s.stop >= hold || s.native == native && s.proxy != &istio {
			continue
		}
		what := "the classic " + s.name + " sidecar stops taking new connections"
		if s.native == native {
			what = "the native " + s.name + " sidecar starts draining when the pod is deleted and closes its inbound listeners"
		}
		j.report(Warning, "proxy-stops-first", "%s %s after the pod is deleted (%s), but proxy-await holds the stop signal for preStop %s + term-delay %s = %s: raise %s to %s or more%s",
			what, dur(s.stop), s.stopWhy, dur(j.c.preStop), dur(j.cfg.TermDelay), dur(hold), s.stopFix, s.stopValue(hold), s.whenClassic())
	}
}

// dur prints a duration as proxy-await's flags take it: 20s, 1m30s, 250ms.
func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}
