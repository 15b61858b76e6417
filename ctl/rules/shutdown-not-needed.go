// shutdown-not-needed.go: the kubelet stops a native sidecar itself once
// the application has exited.

package rules

import (
	"fmt"
	"slices"
	"strings"
)

const ruleShutdownNotNeeded = "shutdown-not-needed"

func init() {
	register(Rule{
		Name:      ruleShutdownNotNeeded,
		Level:     Warning,
		Summary:   "`-S` where every sidecar it reaches is native: the kubelet stops those after the application",
		Fix:       "drop `-S`",
		container: (*judge).shutdownNotNeeded,
	})
}

func (j *judge) shutdownNotNeeded() {
	if !j.supervises() || !j.needs(ruleShutdownNotNeeded, "shutdown") || !j.cfg.Shutdown || !j.needs(ruleShutdownNotNeeded, shutdownFlags...) {
		return
	}
	shut := j.shutdownTargets()
	if len(shut) == 0 || slices.ContainsFunc(shut, classic) {
		return
	}
	var names []string
	for _, s := range shut {
		names = append(names, fmt.Sprintf("the %s sidecar is native here (%s)", s.Name, s.NativeWhy))
	}
	j.report(ruleShutdownNotNeeded, j.set.LineOf("shutdown"), "%s: the kubelet stops it once the application has exited; drop -S",
		strings.Join(names, ", and "))
}
