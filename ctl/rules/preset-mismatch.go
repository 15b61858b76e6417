// preset-mismatch.go: proxy-await would wait for a proxy the pod does not
// run, or that does not answer where it waits, or that starts only after
// it.

package rules

import (
	"fmt"
	"slices"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/proxies"
)

const rulePresetMismatch = "preset-mismatch"

func init() {
	register(Rule{
		Name:  rulePresetMismatch,
		Level: Error,
		Summary: "proxy-await would wait forever: its preset's mesh is not the pod's (`--proxy linkerd`, the default, in an Istio pod: a pod has one mesh), " +
			"the pod has none (injection disabled, Istio ambient mode, Dapr without `dapr.io/enabled`), the pod shows sidecars and its presets wait for none of them (the default `linkerd` in a Dapr pod, with or without its Namespace in the input), " +
			"the proxy answers on another port (`config.linkerd.io/admin-port`, consul-dataplane's Envoy admin port for `--proxy envoy`) " +
			"or not at all (Cloud SQL Auth Proxy without `--health-check`), or an init container waits for a classic sidecar that starts only after it",
		Fix:       "the presets of the sidecars the pod shows, `--port`, the proxy's flag, or wait in the application's container",
		Policy:    true,
		container: (*judge).presetMismatch,
	})
}

func (j *judge) presetMismatch() {
	// With the wait turned off, nothing is waited for, whatever --proxy says.
	if !j.waits() || j.known(invocation.DisabledFlag) && j.cfg.Disabled ||
		!j.needs(rulePresetMismatch, append(readyFlags, invocation.DisabledFlag)...) || j.cfg.Disabled {
		return
	}
	line := j.set.LineOf("ready-url", "port", "proxy")
	sidecars := j.p.Sidecars
	for _, t := range targets(j.cfg, j.cfg.ReadyURLs) {
		if s := sidecars.At(t.port, t.path, func(s *sidecar.Sidecar) sidecar.Endpoint { return s.ReadyAt }); s != nil {
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
		if s := sidecars.ForPreset(t.preset, j.cfg.Port); s != nil {
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
		if i := slices.IndexFunc(sidecars.Absent, func(a sidecar.Absence) bool { return a.Proxy == px }); i >= 0 {
			j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the pod has no %s sidecar (%s): it would wait forever; %s",
				t.preset, t.url, sidecars.Absent[i].Proxy.Name, sidecars.Absent[i].Why, j.waitFor())
			continue
		}
		if s, port := sidecars.ReachedElsewhere(t.preset, j.cfg.Port); s != nil {
			j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the %s sidecar (%s) serves %s's admin API on port %d: it would wait forever; use --proxy %s, or set --port %d",
				t.preset, t.url, s.Name, s.From, px.Name, port, s.Preset, port)
			continue
		}
		if other := sidecars.OtherMesh(t.preset); other != nil {
			j.report(rulePresetMismatch, line, "--proxy %s waits for %s, but the pod's mesh is %s (%s), and a pod has one mesh: it would wait forever; %s",
				t.preset, t.url, other.Name, other.From, j.waitFor())
			continue
		}
		// The pod shows sidecars, and proxy-await waits for none of them:
		// a Namespace outside the input might inject the preset's proxy as
		// well, but nothing here says so.
		if shown := sidecars.Sidecars; len(shown) > 0 && !slices.ContainsFunc(shown, j.waitsFor) {
			var names []string
			for _, s := range shown {
				names = append(names, fmt.Sprintf("the %s sidecar (%s)", s.Name, s.From))
			}
			what := "the pod's only sidecar is " + names[0]
			if len(names) > 1 {
				what = "the pod's sidecars are " + list(names)
			}
			def := ""
			if _, given := j.set.Lines["proxy"]; !given {
				def = " (the default)"
			}
			j.report(rulePresetMismatch, line, "--proxy %s%s waits for %s, but %s, which it does not wait for: it would wait forever; %s",
				t.preset, def, t.url, what, j.waitFor())
		}
	}
}

// waitsFor says whether one of proxy-await's presets waits for s.
func (j *judge) waitsFor(s *sidecar.Sidecar) bool {
	return slices.ContainsFunc(j.cfg.Proxies, func(p string) bool { return sidecar.Covers(p, j.cfg.Port, s) })
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
	case classic(s):
		j.report(rulePresetMismatch, line, "this init container waits for the classic %s sidecar (%s), which starts only after every init container has finished: it waits forever; wait in the application's container (proxy-await -- APP) or use a native sidecar%s",
			s.Name, s.From, s.WhenClassic())
	}
}
