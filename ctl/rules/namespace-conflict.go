// namespace-conflict.go: the input defines the pod's Namespace twice, and
// differently (the reader says which definition the pod is judged with).

package rules

const ruleNamespaceConflict = "namespace-conflict"

func init() {
	register(Rule{
		Name:  ruleNamespaceConflict,
		Level: Warning,
		Summary: "the input defines the pod's Namespace more than once with different labels or annotations (a kustomize base and an overlay): " +
			"the pod is judged with its own file's definition, else the one in the nearest directory",
		Fix:         "check what is deployed: `kustomize build overlay | proxy-awaitctl check -`",
		PolicyOmits: "it compares several definitions of a Namespace, and the policy sees one object",
		pod:         (*podJudge).namespaceConflict,
	})
}

func (j *podJudge) namespaceConflict() {
	p := j.p
	if p.NSConflict == "" || !p.Job && !p.runsProxyAwait() {
		return
	}
	line := p.NamespaceLine
	if line == 0 {
		line = p.Line
	}
	j.report(ruleNamespaceConflict, line, "%s", p.NSConflict)
}
