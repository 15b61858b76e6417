package check

import "testing"

// BenchmarkExamples checks the project's examples/ directory: what a --check
// of a dozen manifests costs, reading and parsing included.
func BenchmarkExamples(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		findings, sum := Paths([]string{"../examples"}, Options{})
		if sum.Containers == 0 || findings == nil && sum.Files == 0 {
			b.Fatal("nothing checked")
		}
	}
}

// BenchmarkLargeList checks one kind: List of 1000 Deployments (about 1.5
// MB), as `kubectl get deploy -A -o yaml` prints a large cluster's.
func BenchmarkLargeList(b *testing.B) {
	var doc []byte
	doc = append(doc, "apiVersion: v1\nkind: List\nitems:\n"...)
	for range 1000 {
		doc = append(doc, `  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: shop}
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata:
          labels: {app: web}
          annotations: {linkerd.io/inject: enabled}
        spec:
          terminationGracePeriodSeconds: 45
          containers:
            - name: web
              image: registry.example.com/web:1
              command: [/usr/local/bin/proxy-await, --term-delay, 20s, --kill-after, 10s, --, /web, --port, "8080"]
              env:
                - {name: LOG_LEVEL, value: info}
                - {name: PROXY_AWAIT_TIMEOUT, value: 2m}
              lifecycle: {preStop: {sleep: {seconds: 5}}}
`...)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		docs, bad := parse("list.yaml", doc)
		if len(bad) > 0 || len(docs) != 1 {
			b.Fatal(bad)
		}
		for _, o := range objects(docs[0]) {
			p, _ := podOf(o)
			checkPod(p, Options{})
		}
	}
}
