// misspelt-key.go: a label or annotation that a proxy would read if it
// were spelt right.

package rules

import (
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

const ruleMisspeltKey = "misspelt-key"

func init() {
	register(Rule{
		Name:    ruleMisspeltKey,
		Level:   Warning,
		Summary: "a label or annotation that is a near miss of one a proxy reads (`dapr.io/enable` for `dapr.io/enabled`): the proxy never sees it",
		Fix:     "the spelling the message gives",
		pod:     (*podJudge).misspeltKey,
	})
}

func (j *podJudge) misspeltKey() {
	for _, m := range []manifest.Meta{j.p.Labels, j.p.Annotations} {
		for _, key := range m.Keys() {
			if right := sidecar.NearMiss(key); right != "" {
				j.report(ruleMisspeltKey, m.At(key).Line, "%s is not a key any proxy reads; %s is: the proxy never sees this one, so write %s",
					key, right, right)
			}
		}
	}
}
