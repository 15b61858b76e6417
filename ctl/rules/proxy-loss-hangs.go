// proxy-loss-hangs.go: a Job's classic sidecar that dies while the
// application runs leaves the Job hanging, unless --proxy-lost stops it.

package rules

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

const ruleProxyLossHangs = "proxy-loss-hangs"

func init() {
	register(Rule{
		Name:  ruleProxyLossHangs,
		Level: Warning,
		Summary: "a Job's or CronJob's pod with a classic sidecar and `restartPolicy: Never`, whose proxy-await has no `--proxy-lost` and whose Job (or pod) no `activeDeadlineSeconds`: " +
			"a proxy that dies while the application runs is not restarted, and the Job hangs on it",
		Fix:       "`--proxy-lost` (the application is stopped, proxy-await exits 69, and the Job retries in a new pod), or `activeDeadlineSeconds`",
		container: (*judge).proxyLossHangs,
	})
}

// suggestedProxyLost is the --proxy-lost that proxy-loss-hangs suggests:
// longer than a proxy's readiness fails while it reloads its configuration,
// short beside a Job that hangs.
const suggestedProxyLost = 10 * time.Second

// ProxyLossHangs is proxy-loss-hangs' condition, for every command that
// judges it (check warns, inject adds the flag): the classic sidecars of p,
// a Job's pod with restartPolicy: Never whose Job (or the pod itself) sets
// no activeDeadlineSeconds, where a proxy-await with --proxy-lost proxyLost
// (0: off) would leave the Job hanging when one of them dies mid-run; none
// when it would not. Under restartPolicy: Never the kubelet restarts no
// container, a classic sidecar included, and nothing else ends the pod.
func ProxyLossHangs(p *Pod, proxyLost time.Duration) []*sidecar.Sidecar {
	if !p.Job || p.RestartPolicy.Text != "Never" || p.Deadline.Text != "" || proxyLost > 0 {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(p.Sidecars.Sidecars), func(s *sidecar.Sidecar) bool { return !classic(s) })
}

// proxyLossHangs: the finding, at --proxy-lost when it is there (0), else
// at proxy-await. A --proxy-lost that the input does not hold is not
// judged only where the pod would need one.
func (j *judge) proxyLossHangs() {
	if !j.supervises() || j.c.Init || len(ProxyLossHangs(j.p, 0)) == 0 || !j.needs(ruleProxyLossHangs, "proxy-lost") {
		return
	}
	classics := ProxyLossHangs(j.p, j.cfg.ProxyLost)
	if len(classics) == 0 || !j.needs(ruleProxyLossHangs, "proxy", "ready-url") {
		return
	}
	if len(j.cfg.ReadyURLs) == 0 || j.cfg.Disabled {
		return // no readiness URL to watch: proxy-await would refuse --proxy-lost
	}
	var names []string
	when := ""
	for _, s := range classics {
		names = append(names, "the classic "+s.Name+" sidecar ("+s.From+")")
		when = cmp.Or(when, s.WhenClassic())
	}
	dies := "is not restarted if it dies"
	if len(names) > 1 {
		dies = "are not restarted if one dies"
	}
	j.report(ruleProxyLossHangs, j.set.LineOf("proxy-lost"),
		"%s %s while the application runs (restartPolicy: Never), and nothing ends the %s then: it hangs; add --proxy-lost %s, so that proxy-await stops the application and exits 69, and the %s retries in a new pod; or set activeDeadlineSeconds%s",
		strings.Join(names, " and "), dies, j.p.JobName(), suggestedProxyLost, j.p.JobName(), when)
}
