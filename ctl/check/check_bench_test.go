package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// BenchmarkExamples checks the project's examples/ directory: what a --check
// of a dozen manifests costs, reading and parsing included.
func BenchmarkExamples(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		findings, sum := Paths([]string{"../../examples"}, Options{})
		if sum.Containers == 0 || findings == nil && sum.Files == 0 {
			b.Fatal("nothing checked")
		}
	}
}

// largeList is one kind: List of n Deployments, as `kubectl get deploy -A
// -o yaml` prints a large cluster's.
func largeList(n int) []byte {
	var doc []byte
	doc = append(doc, "apiVersion: v1\nkind: List\nitems:\n"...)
	for range n {
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
	return doc
}

// manyDocuments is n small documents, as `helm template` or `kustomize
// build` prints a large application: a ConfigMap and a Deployment each.
func manyDocuments(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings-%d, namespace: shop}
data: {LOG_LEVEL: info}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-%d, namespace: shop}
spec:
  template:
    metadata: {annotations: {linkerd.io/inject: enabled}}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1
          envFrom: [{configMapRef: {name: settings-%d}}]
          command: [proxy-await, --term-delay, 20s, --kill-after, 5s, --, /web]
`, i, i, i)
	}
	return []byte(b.String())
}

func benchmarkFile(b *testing.B, data []byte) {
	path := filepath.Join(b.TempDir(), "in.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		peak = max(peak, testutil.PeakHeap(func() {
			if _, sum := Paths([]string{path}, Options{}); sum.Pods == 0 {
				b.Fatal("no pods")
			}
		}))
	}
	b.ReportMetric(float64(peak), "peak-B")
	b.ReportMetric(float64(peak)/float64(len(data)), "peak/input")
}

// BenchmarkLargeList checks one kind: List of 1000 Deployments (about 1 MB).
func BenchmarkLargeList(b *testing.B) { benchmarkFile(b, largeList(1000)) }

// BenchmarkManyDocuments checks 1 MB of small documents.
func BenchmarkManyDocuments(b *testing.B) { benchmarkFile(b, manyDocuments(2000)) }
