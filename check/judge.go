// judge.go: the rules judged for each container that runs proxy-await,
// against its pod's sidecars. Each message says what is wrong, with the
// numbers, and one fix that works; each finding is at the line of the
// value that is wrong. A rule that needs a value the input does not hold
// is not judged, and says so once (unknown-value).

package check

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/internal/urlport"
	"github.com/proxy-await/proxy-await/proxies"
)

// judge judges one container that runs proxy-await.
type judge struct {
	p        *manifest.Pod
	c        *manifest.Container
	inv      *invocation.Invocation
	mesh     sidecar.Set
	set      invocation.Settings
	cfg      *config.Config
	out      []Finding
	skipped  []string           // rules not judged
	unknowns []manifest.Unknown // the values that made them so
}

func (j *judge) report(rule string, line int, format string, args ...any) {
	if line == 0 {
		line = j.inv.Line
	}
	j.out = append(j.out, Finding{
		File: j.p.File, Line: line, Level: levelOf(rule), Rule: rule,
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

// skip notes a rule not judged for want of a value.
func (j *judge) skip(rule string, u manifest.Unknown) {
	if !slices.Contains(j.skipped, rule) {
		j.skipped = append(j.skipped, rule)
	}
	if !slices.ContainsFunc(j.unknowns, func(v manifest.Unknown) bool { return v.What == u.What && v.From == u.From }) {
		j.unknowns = append(j.unknowns, u)
	}
}

// The flags that choose the URLs proxy-await waits for and shuts down.
var readyFlags, shutdownFlags = []string{"proxy", "port", "ready-url"}, []string{"shutdown", "proxy", "port", "shutdown-url"}

func (j *judge) run() {
	j.flags()
	j.shellForm()
	if j.cfg != nil && j.cfg.Install == nil {
		j.presetMismatch()
		if len(j.cfg.Command) > 0 {
			j.shutdownDisabled()
			j.jobNeverCompletes()
			j.retryLosesProxy()
			j.proxyLossHangs()
			j.shutdownNotNeeded()
			j.gracePeriod()
			j.proxyStopsFirst()
			j.probesKeepDrainBusy()
		}
	}
	j.unknownValue()
}

// flags: what proxy-await in this container would refuse at start, with
// the usage error it would print; ignored-variable: what it would warn of
// and ignore, a misspelt PROXY_AWAIT_ variable.
func (j *judge) flags() {
	if u, ok := j.set.Unknown["flags"]; ok {
		j.skip(ruleFlags, u)
		return
	}
	if j.set.All != nil {
		j.skip(ruleFlags, *j.set.All)
		return
	}
	if j.set.Err != nil {
		msg, h := usage(j.set.Err)
		line := j.set.ErrLine
		if w := j.set.Split; w != nil {
			fields := strings.Fields(w.Text)
			value := redact.Word(strings.Join(fields[1:], " ")) // as proxy-await's own messages show a value
			if w.Secret {
				value = redact.Mask
			}
			h = fmt.Sprintf("%q is one element of the list: a flag and its value are two, so split it: %q, %q (or write %s=%s)",
				fields[0]+" "+value, fields[0], value, fields[0], value)
			line = w.Line
		}
		j.report(ruleFlags, line, "%s", hint.Text(msg, h))
		return
	}
	j.cfg = j.set.Config
	for _, w := range j.cfg.Warnings {
		msg := hint.Text(w.Error(), w.Hint)
		line := 0
		for _, name := range slices.Sorted(maps.Keys(j.set.Vars)) {
			if invocation.Mentions(w.Error(), "$"+name) {
				line = j.set.Vars[name]
			}
		}
		j.report(ruleIgnoredVariable, line, "%s", msg)
	}
}

// shellForm: under sh -c without exec, the shell is the container's PID 1
// and gets the kubelet's SIGTERM; proxy-await never sees it. That matters
// only when proxy-await runs a command: --install, and a wait without
// COMMAND, end before any signal.
func (j *judge) shellForm() {
	if j.inv.Shell == "" || j.inv.Exec && j.inv.Sub == "" {
		return
	}
	if j.cfg != nil && (j.cfg.Install != nil || len(j.cfg.Command) == 0) {
		return
	}
	if j.cfg == nil && !j.runsCommand() {
		return
	}
	if j.inv.Exec {
		j.report(ruleShellForm, j.inv.Line, "exec proxy-await runs %s under %s -c, where exec replaces only that subshell: the shell stays PID 1 and gets the kubelet's SIGTERM, not proxy-await; make exec proxy-await ... a statement of the script itself, outside any pipe, ( ... ) or &",
			j.inv.Sub, j.inv.Shell)
		return
	}
	j.report(ruleShellForm, j.inv.Line, "proxy-await runs under %s -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell",
		j.inv.Shell)
}

// runsCommand says, from its words alone, whether proxy-await is given a
// command to run: words after "--", and no --install.
func (j *judge) runsCommand() bool {
	for i, w := range j.inv.Args {
		if strings.HasPrefix(w.Text, "--install") {
			return false
		}
		if w.Text == "--" {
			return i+1 < len(j.inv.Args)
		}
	}
	return false
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
		port, _ := strconv.Atoi(urlport.Of(u)) // digits: url.Parse took it
		out = append(out, target{url: redact.URL(raw), port: port, path: u.Path, preset: cfg.FromPreset(raw)})
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
		for _, s := range j.mesh.Sidecars {
			if sidecar.Covers(p, s) && (only == nil || only(s)) {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
				covered = append(covered, s)
			}
		}
	}
	for _, s := range j.mesh.Sidecars {
		if !slices.Contains(covered, s) && (only == nil || only(s)) && !slices.Contains(out, s.Preset) {
			out = append(out, s.Preset)
		}
	}
	return strings.Join(out, ",")
}

// presetMismatch: proxy-await would wait for a proxy the pod does not run,
// or that does not answer where it waits, or that starts only after it.
func (j *judge) presetMismatch() {
	if !j.needs(rulePresetMismatch, append(readyFlags, invocation.DisabledFlag)...) || j.cfg.Disabled {
		return
	}
	line := j.set.LineOf("ready-url", "port", "proxy")
	for _, t := range targets(j.cfg, j.cfg.ReadyURLs) {
		if s := j.mesh.At(t.port, t.path, func(s *sidecar.Sidecar) sidecar.Endpoint { return s.ReadyAt }); s != nil {
			switch {
			case s.ReadyAt.Unknown != nil:
				j.skip(rulePresetMismatch, *s.ReadyAt.Unknown)
			case s.ReadyAt.Off != "":
				j.report(rulePresetMismatch, line, "proxy-await waits for %s, which the %s sidecar never answers, so it would wait forever: %s",
					t.url, s.Name, s.ReadyAt.Off)
			}
			j.startsFirst(s)
			continue
		}
		if t.preset == "" {
			continue // a URL of the user's own: nothing to compare it with
		}
		px := proxies.Lookup(t.preset)
		if s := j.mesh.ForPreset(t.preset); s != nil {
			switch {
			case s.ReadyAt.Unknown != nil:
				j.skip(rulePresetMismatch, *s.ReadyAt.Unknown)
			case s.Proxy == px: // not one it reaches, whose port the manifest does not show
				j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the %s sidecar here answers on port %d%s: %s",
					t.preset, t.url, s.Name, s.ReadyAt.Port, s.ReadyAt.Moved, portFix(px, s.ReadyAt))
			}
			j.startsFirst(s)
			continue
		}
		if i := slices.IndexFunc(j.mesh.Absent, func(a sidecar.Absence) bool { return a.Proxy == px }); i >= 0 {
			j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the pod has no %s sidecar (%s): it would wait forever; %s",
				t.preset, t.url, j.mesh.Absent[i].Proxy.Name, j.mesh.Absent[i].Why, j.waitFor())
			continue
		}
		if other := j.mesh.OtherMesh(t.preset); other != nil {
			j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the pod's mesh is %s (%s), and a pod has one mesh: it would wait forever; %s",
				t.preset, t.url, other.Name, other.From, j.waitFor())
		}
	}
}

// waitFor is the fix for a preset the pod does not have: the presets of
// the sidecars it shows, or none.
func (j *judge) waitFor() string {
	if p := j.suggest(nil); p != "" {
		return "use --proxy " + p
	}
	return "wait for the proxy the pod has, or use --proxy none"
}

// portFix is how to point px's preset at the port the sidecar answers on.
func portFix(px *proxies.Proxy, e sidecar.Endpoint) string {
	if px.AdminPort {
		return fmt.Sprintf("set --port %d", e.Port)
	}
	return fmt.Sprintf("set --ready-url http://127.0.0.1:%d%s", e.Port, e.Path)
}

// startsFirst: proxy-await in a classic init container waits before the
// pod's other containers start; a sidecar that is one of those, or a
// native sidecar listed after it, is not there yet.
func (j *judge) startsFirst(s *sidecar.Sidecar) {
	if !j.c.Init || j.c.RestartAlways {
		return
	}
	line := j.set.LineOf("ready-url", "port", "proxy")
	switch {
	case s.Nativeness == sidecar.Native && s.Container != nil && slices.Index(j.p.Containers, s.Container) > slices.Index(j.p.Containers, j.c):
		j.report(rulePresetMismatch, line, "this init container waits for the %s sidecar, which is native but listed after it: init containers start in order, so it waits forever; list the sidecar first",
			s.Name)
	case s.Nativeness != sidecar.Native:
		j.report(rulePresetMismatch, line, "this init container waits for the classic %s sidecar (%s), which starts only after every init container has finished: it waits forever; wait in the application's container (proxy-await -- APP) or use a native sidecar%s",
			s.Name, s.From, s.WhenClassic())
	}
}

// shutdownDisabled: -S POSTs to an endpoint the sidecar has turned off, or
// to a port it does not listen on.
func (j *judge) shutdownDisabled() {
	if !j.needs(ruleShutdownDisabled, shutdownFlags...) || !j.cfg.Shutdown {
		return
	}
	line := j.set.LineOf("shutdown-url", "shutdown")
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		if s := j.mesh.At(t.port, t.path, func(s *sidecar.Sidecar) sidecar.Endpoint { return s.ShutdownAt }); s != nil {
			switch {
			case s.ShutdownAt.Unknown != nil:
				j.skip(ruleShutdownDisabled, *s.ShutdownAt.Unknown)
			case s.ShutdownAt.Off != "" && s.Nativeness != sidecar.Native:
				at := line
				if s.ShutdownAt.OffLine > 0 {
					at = s.ShutdownAt.OffLine
				}
				j.report(ruleShutdownDisabled, at, "-S POSTs %s, which the %s sidecar does not serve, so it would keep running: %s%s",
					t.url, s.Name, s.ShutdownAt.Off, s.WhenClassic())
			}
			continue
		}
		for _, s := range j.mesh.Sidecars {
			if s.ShutdownAt.Path == t.path && s.ShutdownAt.Port != 0 && s.Nativeness != sidecar.Native && (t.preset == "" || t.preset == s.Preset) {
				if s.ShutdownAt.Unknown != nil {
					j.skip(ruleShutdownDisabled, *s.ShutdownAt.Unknown)
					break
				}
				j.report(ruleShutdownDisabled, line, "-S POSTs %s, but the %s sidecar here takes it on port %d%s: set --shutdown-url http://127.0.0.1:%d%s",
					t.url, s.Name, s.ShutdownAt.Port, s.ShutdownAt.Moved, s.ShutdownAt.Port, s.ShutdownAt.Path)
				break
			}
		}
	}
}

// shutdownTargets are the sidecars the shutdown URLs reach, by path.
func (j *judge) shutdownTargets() []*sidecar.Sidecar {
	var out []*sidecar.Sidecar
	for _, t := range targets(j.cfg, j.cfg.ShutdownURLs) {
		for _, s := range j.mesh.Sidecars {
			if s.ShutdownAt.Path == t.path && (t.preset == "" || t.preset == s.Preset || s.ShutdownAt.Port == t.port) && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// jobNeverCompletes: a classic sidecar outlives the application unless -S
// tells it to stop, and the Job's pod never completes.
func (j *judge) jobNeverCompletes() {
	if !j.p.Job || j.c.Init || !j.needs(ruleJobNeverCompletes, shutdownFlags...) {
		return
	}
	shut := j.shutdownTargets()
	for _, s := range j.mesh.Sidecars {
		switch {
		case s.Nativeness == sidecar.Native:
		case !j.cfg.Shutdown:
			j.report(ruleJobNeverCompletes, j.inv.Line, "the classic %s sidecar (%s) keeps running after the application exits, so the %s never completes: add -S (--shutdown)%s",
				s.Name, s.From, j.p.JobName(), s.WhenClassic())
		case !slices.Contains(shut, s):
			j.report(ruleJobNeverCompletes, j.set.LineOf("proxy", "shutdown-url", "shutdown"), "-S does not stop the classic %s sidecar (%s), so the %s never completes: add %s to --proxy (--proxy %s)%s",
				s.Name, s.From, j.p.JobName(), s.Preset, j.suggest(func(s *sidecar.Sidecar) bool { return s.Nativeness != sidecar.Native }), s.WhenClassic())
		}
	}
}

// retryLosesProxy: with restartPolicy: OnFailure the kubelet restarts the
// application's container in the same pod after a failure; -S has shut the
// classic sidecar down by then, and a sidecar that exited 0 is not
// restarted.
func (j *judge) retryLosesProxy() {
	if !j.p.Job || j.c.Init || j.p.RestartPolicy.Text != "OnFailure" || !j.needs(ruleRetryLosesProxy, append(shutdownFlags, "keep-proxy-on-failure")...) {
		return
	}
	if !j.cfg.Shutdown || j.cfg.KeepProxy {
		return
	}
	var names []string
	when := ""
	for _, s := range j.shutdownTargets() {
		if s.Nativeness != sidecar.Native {
			names = append(names, s.Name)
			when = cmp.Or(when, s.WhenClassic())
		}
	}
	if len(names) == 0 {
		return
	}
	j.report(ruleRetryLosesProxy, j.p.RestartPolicy.Line, "restartPolicy: OnFailure restarts the application's container in the same pod after a failure, but -S has shut the classic %s sidecar down by then, and a sidecar that exited 0 is not restarted: the restarted application waits for it forever; add --keep-proxy-on-failure, or set restartPolicy: Never%s",
		strings.Join(names, " and "), when)
}

// shutdownNotNeeded: the kubelet stops a native sidecar itself once the
// application has exited.
func (j *judge) shutdownNotNeeded() {
	if !j.needs(ruleShutdownNotNeeded, shutdownFlags...) || !j.cfg.Shutdown {
		return
	}
	shut := j.shutdownTargets()
	if len(shut) == 0 || slices.ContainsFunc(shut, func(s *sidecar.Sidecar) bool { return s.Nativeness != sidecar.Native }) {
		return
	}
	var names []string
	for _, s := range shut {
		names = append(names, fmt.Sprintf("the %s sidecar is native here (%s)", s.Name, s.NativeWhy))
	}
	j.report(ruleShutdownNotNeeded, j.set.LineOf("shutdown"), "%s: the kubelet stops it once the application has exited; drop -S",
		strings.Join(names, ", and "))
}

// gracePeriod: what proxy-await may take after the kubelet's SIGTERM must
// fit in the grace period, or the kubelet's SIGKILL comes first.
func (j *judge) gracePeriod() {
	if !j.needs(ruleGracePeriod, "term-delay", "kill-after", "shutdown", "shutdown-timeout") {
		return
	}
	parts := []string{"preStop " + (invocation.PreStop(j.c)).String(), "term-delay " + j.cfg.TermDelay.String(), "kill-after " + j.cfg.KillAfter.String()}
	total := invocation.PreStop(j.c) + j.cfg.TermDelay + j.cfg.KillAfter
	if j.cfg.Shutdown {
		parts = append(parts, "shutdown-timeout "+j.cfg.ShutdownTimeout.String())
		total += j.cfg.ShutdownTimeout
	}
	if total <= j.p.Grace {
		return
	}
	line := j.p.GraceLine
	if line == 0 {
		line = j.set.LineOf("term-delay", "kill-after", "shutdown-timeout")
	}
	j.report(ruleGracePeriod, line, "%s = %s > %s %ds%s: the kubelet's SIGKILL comes first; raise %s to %d, or shorten them",
		strings.Join(parts, " + "), total.String(), j.p.GraceField, int(j.p.Grace/time.Second), j.p.GraceWhy, j.p.GraceField, int((total+time.Second-1)/time.Second))
}

// proxyStopsFirst: a sidecar that stops taking new connections before
// proxy-await delivers the stop signal drops the requests the application
// was kept up to serve.
func (j *judge) proxyStopsFirst() {
	hold := invocation.PreStop(j.c) + j.cfg.TermDelay
	if j.c.Init || !j.needs(ruleProxyStopsFirst, "term-delay") || hold == 0 {
		return
	}
	for _, s := range j.mesh.Sidecars {
		// A native sidecar stops after the application, unless it drains
		// from the pod's deletion on (its facts say so: Istio's).
		if s.StopWhy == "" || s.Nativeness == sidecar.Native && s.Stop.NativeField == "" {
			continue
		}
		if s.StopUnknown != nil {
			j.skip(ruleProxyStopsFirst, *s.StopUnknown)
			continue
		}
		if s.StopAfter >= hold {
			continue
		}
		what := "the classic " + s.Name + " sidecar stops taking new connections"
		if s.Nativeness == sidecar.Native {
			what = "the native " + s.Name + " sidecar starts draining when the pod is deleted and closes its inbound listeners"
		}
		line := s.StopLine
		if line == 0 {
			line = j.set.LineOf("term-delay")
		}
		j.report(ruleProxyStopsFirst, line, "%s %s after the pod is deleted (%s), but proxy-await holds the stop signal for preStop %s + term-delay %s = %s: raise %s to %s or more%s",
			what, s.StopAfter.String(), s.StopWhy, (invocation.PreStop(j.c)).String(), j.cfg.TermDelay.String(), hold.String(), s.StopFix, s.StopValue(hold), s.WhenClassic())
	}
}

// probesKeepDrainBusy: the kubelet probes a terminating pod until it
// exits; a probe against a port the drain watches is traffic, and one at
// most every quiet period keeps the drain from ever being quiet. Not a
// startup probe: the kubelet stops running it once it has succeeded, long
// before the pod is deleted.
func (j *judge) probesKeepDrainBusy() {
	if !j.needs(ruleProbesBusy, "drain-quiet", "drain-ports", "probe-port") || j.cfg.DrainQuiet == 0 {
		return
	}
	for _, pr := range j.c.Probes {
		if pr.Kind == "startupProbe" {
			continue
		}
		port, err := strconv.Atoi(pr.Port.Text)
		if i := slices.IndexFunc(j.c.Ports, func(p manifest.NamedPort) bool { return p.Name == pr.Port.Text }); err != nil && i >= 0 {
			port = j.c.Ports[i].Port
		}
		if port == 0 || pr.Host != "" && !config.IsLoopback(pr.Host) || port == j.cfg.ProbePort {
			continue
		}
		if len(j.cfg.DrainPorts) > 0 && !slices.Contains(j.cfg.DrainPorts, uint16(port)) {
			continue
		}
		period := time.Duration(pr.Period) * time.Second
		if period > j.cfg.DrainQuiet {
			continue
		}
		j.report(ruleProbesBusy, pr.Port.Line, "the kubelet's %s reaches port %d, which the drain watches, every %s (periodSeconds), no longer apart than --drain-quiet %s: the drain never sees a quiet period and holds the stop signal for the whole --term-delay %s; %s",
			pr.Kind, port, period.String(), j.cfg.DrainQuiet.String(), j.cfg.TermDelay.String(), j.probeFix(pr, port))
	}
}

// probeFix is how to move a probe that reaches port onto --probe-port,
// keeping what it checks: an HTTP probe's path becomes --app-probe's URL,
// never a weaker tcp:PORT.
func (j *judge) probeFix(pr manifest.Probe, port int) string {
	ours := map[string]string{"readinessProbe": "/ready", "livenessProbe": "/live"}[pr.Kind]
	if j.cfg.ProbePort != 0 {
		if pr.Handler == "httpGet" {
			return fmt.Sprintf("point it at --probe-port %d, path %s", j.cfg.ProbePort, ours)
		}
		return fmt.Sprintf("make it an httpGet of --probe-port %d, path %s", j.cfg.ProbePort, ours)
	}
	check := fmt.Sprintf("tcp:%d", port)
	switch pr.Handler {
	case "httpGet":
		scheme := "http"
		if strings.EqualFold(pr.Scheme, "HTTPS") {
			scheme = "https"
		}
		check = fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, cmp.Or(pr.Path, "/"))
	case "grpc":
		return fmt.Sprintf("serve the probes with --probe-port on a free port (e.g. --probe-port 8081) and point this one at it, path %s; --app-probe has no gRPC check: tcp:%d checks only that the port takes connections, an HTTP health endpoint of the app keeps more", ours, port)
	}
	return fmt.Sprintf("serve the probes with --probe-port on a free port, with this probe's own check as --app-probe (e.g. --probe-port 8081 --app-probe %s), and point it at that port, path %s", check, ours)
}

// unknownValue: one warning for the rules not judged, naming the values
// that the input does not hold and where they come from.
func (j *judge) unknownValue() {
	if len(j.skipped) == 0 {
		return
	}
	rules := strings.Join(j.skipped, ", ") + " not judged"
	if j.set.All != nil {
		rules = "no rule judged"
	}
	// Values from one source are named together.
	var whats []string
	for i, u := range j.unknowns {
		if slices.ContainsFunc(j.unknowns[:i], func(v manifest.Unknown) bool { return v.From == u.From && v.May == u.May }) {
			continue
		}
		var names []string
		for _, v := range j.unknowns[i:] {
			if v.From == u.From && v.May == u.May {
				names = append(names, v.What)
			}
		}
		verb := "comes from"
		if len(names) > 1 || strings.HasSuffix(u.What, "flags") {
			verb = "come from"
		}
		if u.May {
			verb = "may come from"
		}
		whats = append(whats, list(names)+" "+verb+" "+u.From)
	}
	j.report(ruleUnknownValue, j.unknowns[0].Line, "%s: %s", rules, strings.Join(whats, "; "))
}

// usage is a usage error as a finding's message: its text and its hint.
func usage(err error) (string, string) {
	var u *config.UsageError
	if errors.As(err, &u) {
		return u.Error(), hint.Of(u)
	}
	return err.Error(), ""
}

// list is names in English: "a", "a and b", "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
