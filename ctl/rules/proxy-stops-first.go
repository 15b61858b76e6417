// proxy-stops-first.go: a sidecar that stops taking new connections before
// proxy-await delivers the stop signal drops the requests the application
// was kept up to serve.

package rules

import (
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

const ruleProxyStopsFirst = "proxy-stops-first"

func init() {
	register(Rule{
		Name:  ruleProxyStopsFirst,
		Level: Warning,
		Summary: "a sidecar stops taking new connections before proxy-await delivers the stop signal (preStop + `--term-delay`): " +
			"Linkerd's `config.alpha.linkerd.io/proxy-wait-before-exit-seconds` (default 0), Istio's `terminationDrainDuration` (default 5s; a native Istio sidecar's `drainDuration`, default 45s, from the deletion on), " +
			"Dapr's `dapr.io/graceful-shutdown-seconds` (default 5), the Cloud SQL Auth Proxy's preStop and `--min-sigterm-delay`",
		Fix:       "raise the setting named, or use a native sidecar",
		container: (*judge).proxyStopsFirst,
	})
}

func (j *judge) proxyStopsFirst() {
	if !j.supervises() {
		return
	}
	preStop := invocation.PreStop(j.c)
	hold := preStop + j.cfg.TermDelay
	if j.c.Init || !j.needs(ruleProxyStopsFirst, "term-delay") || hold == 0 {
		return
	}
	for _, s := range j.p.Sidecars.Sidecars {
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
			what, s.StopAfter, s.StopWhy, preStop, j.cfg.TermDelay, hold, s.StopFix, s.StopValue(hold), s.WhenClassic())
	}
}
