// retry-loses-proxy.go: with restartPolicy: OnFailure the kubelet restarts
// the application's container in the same pod after a failure; -S has shut
// the classic sidecar down by then, and a sidecar that exited 0 is not
// restarted.

package rules

import (
	"cmp"
	"strings"
)

const ruleRetryLosesProxy = "retry-loses-proxy"

func init() {
	register(Rule{
		Name:  ruleRetryLosesProxy,
		Level: Error,
		Summary: "a Job's or CronJob's pod with `restartPolicy: OnFailure`, a classic sidecar and `-S` without `--keep-proxy-on-failure`: " +
			"after the first failure the proxy is shut down, and the application's container, restarted in the same pod, waits for it forever",
		Fix:       "`--keep-proxy-on-failure`, or `restartPolicy: Never`",
		Policy:    true,
		container: (*judge).retryLosesProxy,
	})
}

func (j *judge) retryLosesProxy() {
	if !j.supervises() || !j.p.Job || j.c.Init || j.p.RestartPolicy.Text != "OnFailure" ||
		!j.needs(ruleRetryLosesProxy, "shutdown") || !j.cfg.Shutdown ||
		!j.needs(ruleRetryLosesProxy, "keep-proxy-on-failure") || j.cfg.KeepProxy ||
		!j.needs(ruleRetryLosesProxy, shutdownFlags...) {
		return
	}
	var names []string
	when := ""
	for _, s := range j.shutdownTargets() {
		if classic(s) {
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
