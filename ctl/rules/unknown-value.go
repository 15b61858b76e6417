// unknown-value.go: one warning for the rules of a container that were not
// judged, naming the values that the input does not hold and where they
// come from. It is said once the other rules have been judged.

package rules

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

const ruleUnknownValue = "unknown-value"

func init() {
	register(Rule{
		Name:  ruleUnknownValue,
		Level: Warning,
		Summary: "a rule could not be judged because a value it needs comes from outside the manifest: `valueFrom`, an `envFrom` the input does not hold, " +
			"a `$(VAR)` the container does not define, a shell variable or command substitution, a sidecar's configuration file; the message names the value, its source and the rules not judged",
		Fix: "put the value in the manifest, or the ConfigMap or Secret it comes from in the input, to have it judged",
	})
}

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
