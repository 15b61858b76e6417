// grace-period.go: what proxy-await may take after the kubelet's SIGTERM
// must fit in the grace period, or the kubelet's SIGKILL comes first.

package rules

import (
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/invocation"
)

const ruleGracePeriod = "grace-period"

func init() {
	register(Rule{
		Name:      ruleGracePeriod,
		Level:     Error,
		Summary:   "preStop + `--term-delay` + `--kill-after` (+ `--shutdown-timeout` with `-S`) > `terminationGracePeriodSeconds` (default 30): the kubelet's SIGKILL comes first",
		Fix:       "a longer grace period, or shorter delays",
		Policy:    true,
		container: (*judge).gracePeriod,
	})
}

func (j *judge) gracePeriod() {
	// --shutdown-timeout counts only with -S.
	if !j.supervises() || !j.needs(ruleGracePeriod, "term-delay", "kill-after", "shutdown") ||
		j.cfg.Shutdown && !j.needs(ruleGracePeriod, "shutdown-timeout") {
		return
	}
	preStop := invocation.PreStop(j.c)
	parts := []string{"preStop " + preStop.String(), "term-delay " + j.cfg.TermDelay.String(), "kill-after " + j.cfg.KillAfter.String()}
	total := preStop + j.cfg.TermDelay + j.cfg.KillAfter
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
		strings.Join(parts, " + "), total, j.p.GraceField, int(j.p.Grace/time.Second), j.p.GraceWhy, j.p.GraceField, int((total+time.Second-1)/time.Second))
}
