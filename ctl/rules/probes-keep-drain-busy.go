// probes-keep-drain-busy.go: the kubelet probes a terminating pod until it
// exits; a probe against a port the drain watches is a connection from
// outside the pod, and the drain learns its quiet period from the gaps
// between those: probes keep it from ever being quiet, whatever their
// period. Not a startup probe: the kubelet stops running it once it has
// succeeded, long before the pod is deleted.

package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/manifest"
)

const ruleProbesBusy = "probes-keep-drain-busy"

func init() {
	register(Rule{
		Name:  ruleProbesBusy,
		Level: Warning,
		Summary: "`--drain-quiet` with a readiness or liveness probe against a port the drain watches, whatever its `periodSeconds`: " +
			"the drain learns its quiet period from the gaps between connections from outside the pod, which the kubelet's probes are, so it is never quiet, and the stop signal waits the whole `--term-delay` " +
			"(not a startup probe, which the kubelet stops running once it has succeeded)",
		Fix:       "serve the probes with `--probe-port`, the probe's own check as `--app-probe` (`httpGet /healthz` on 8080: `--app-probe http://127.0.0.1:8080/healthz`), and point them at it",
		container: (*judge).probesKeepDrainBusy,
	})
}

func (j *judge) probesKeepDrainBusy() {
	if !j.supervises() || !j.needs(ruleProbesBusy, "drain-quiet") || j.cfg.DrainQuiet == 0 || !j.needs(ruleProbesBusy, "drain-ports", "probe-port") {
		return
	}
	for _, pr := range j.c.Probes {
		if pr.Kind == "startupProbe" {
			continue
		}
		port, _ := j.c.PortNumber(pr)
		if port == 0 || pr.Host != "" && !config.IsLoopback(pr.Host) || port == j.cfg.ProbePort {
			continue
		}
		if len(j.cfg.DrainPorts) > 0 && !slices.Contains(j.cfg.DrainPorts, uint16(port)) {
			continue
		}
		period := time.Duration(pr.Period) * time.Second
		j.report(ruleProbesBusy, pr.Port.Line, "the kubelet's %s reaches port %d, which the drain watches, every %s (periodSeconds): the drain learns its quiet period from the gaps between connections from outside the pod, and the kubelet's are such connections, so it never sees a quiet period and holds the stop signal for the whole --term-delay %s; %s",
			pr.Kind, port, period, j.cfg.TermDelay, j.probeFix(pr, port))
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
