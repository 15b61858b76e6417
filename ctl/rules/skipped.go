// skipped.go: a document that is no Kubernetes object, which is not
// checked (the reader says which, manifest.Problem.NotObject; Problem
// reports it).

package rules

const ruleSkipped = "skipped"

func init() {
	register(Rule{
		Name:  ruleSkipped,
		Level: Warning,
		Summary: "a document that is no Kubernetes object (it has no `kind`: an OpenAPI document, a JSON Schema, a Helm values file) is not checked; " +
			"a key given twice in it is no error, as it is none of the API server's business (one warning a file; a Helm chart's own files, beside its `Chart.yaml`, get none)",
		Fix: "nothing, if the file is no manifest; else its `apiVersion` and `kind`",
	})
}
