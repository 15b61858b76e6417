// ignored-variable.go: what proxy-await in a container would warn of at
// start and ignore: a misspelt PROXY_AWAIT_ variable, or a mode's.

package rules

import (
	"maps"
	"slices"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/internal/hint"
)

const ruleIgnoredVariable = "ignored-variable"

func init() {
	register(Rule{
		Name:  ruleIgnoredVariable,
		Level: Warning,
		Summary: "a `PROXY_AWAIT_` variable that proxy-await does not read: misspelt (`PROXY_AWAIT_TERMDELAY`), or a mode's (`PROXY_AWAIT_CHECK`, `PROXY_AWAIT_INSTALL`, `PROXY_AWAIT_VERSIONS`), " +
			"which are chosen on the command line only: it would warn at start and ignore it, and the application runs",
		Fix:       "the name the hint gives; for a mode's, unset it",
		container: (*judge).ignoredVariable,
	})
}

func (j *judge) ignoredVariable() {
	if j.cfg == nil {
		return
	}
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
