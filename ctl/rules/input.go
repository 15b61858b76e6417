// input.go: a file that cannot be read, or a document that cannot be
// parsed or is no object the API server would take, as the reader met it
// (manifest.Problem).

package rules

import "github.com/proxy-await/proxy-await/ctl/manifest"

const ruleInput = "input"

func init() {
	register(Rule{
		Name:  ruleInput,
		Level: Error,
		Summary: "a file cannot be read or parsed, is past a bound on what is read, is a Helm template (`{{ ... }}`), or has a Kubernetes object (`apiVersion` and `kind`) " +
			"with a mapping that has a key twice, which the API server's strict field validation refuses, or a key that is a mapping (an unquoted `{{ ... }}`), which kubectl refuses",
		Fix:         "as the message says: render a chart first (`helm template CHART | proxy-awaitctl check -`), keep one of the two keys, quote a placeholder, split what is too large",
		PolicyOmits: "the API server parses what it is sent, and refuses a key given twice itself",
	})
}

// Problem is the finding of a problem that the reader met: rule input, or
// skipped for a document that is no object.
func Problem(p manifest.Problem) Finding {
	rule := ruleInput
	if p.NotObject {
		rule = ruleSkipped
	}
	return Finding{File: p.File, Line: p.Line, Level: lookup(rule).Level, Rule: rule, Message: p.Message}
}
