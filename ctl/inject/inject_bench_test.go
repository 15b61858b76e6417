package inject

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// The benchmarks beside check's (ctl/check/check_bench_test.go): the same
// shapes of input, a kind: List of 1000 Deployments and 2000 small
// documents, about 1 MB each, here as teams have them before inject: no
// proxy-await.

// largeList is one kind: List of n Deployments, as `kubectl get deploy -A
// -o yaml` prints a large cluster's.
func largeList(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web-%d, namespace: shop}
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
              command: [/web, --port, "8080"]
              ports: [{containerPort: 8080}]
              readinessProbe: {httpGet: {path: /healthz, port: 8080}}
              env:
                - {name: LOG_LEVEL, value: info}
              lifecycle: {preStop: {sleep: {seconds: 5}}}
`, i)
	}
	return []byte(b.String())
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
          image: registry.example.com/web:%d
          envFrom: [{configMapRef: {name: settings-%d}}]
          command: [/web, --listen, ":8080"]
          ports: [{containerPort: 8080}]
`, i, i, i%50, i)
	}
	return []byte(b.String())
}

func benchmarkFile(b *testing.B, data []byte, opt Options) {
	path := filepath.Join(b.TempDir(), "in.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	opt.Image = "registry.example.com/proxy-await:1"
	opt.Out = io.Discard // as proxy-awaitctl writes to its stdout
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		peak = max(peak, testutil.PeakHeap(func() {
			if r := Paths(b.Context(), []string{path}, opt); r.Adopted == 0 {
				b.Fatal("nothing adopted")
			}
		}))
	}
	b.ReportMetric(float64(peak), "peak-B")
	b.ReportMetric(float64(peak)/float64(len(data)), "peak/input")
}

// BenchmarkLargeList injects one kind: List of 1000 Deployments (about 1 MB).
func BenchmarkLargeList(b *testing.B) { benchmarkFile(b, largeList(1000), Options{}) }

// BenchmarkManyDocuments injects 1 MB of small documents.
func BenchmarkManyDocuments(b *testing.B) { benchmarkFile(b, manyDocuments(2000), Options{}) }

// What inject allocates grows with its input and no faster, and stays
// near what reading and checking it costs: a few hundred bytes for each
// byte of a List of Deployments, each of which gets some 30 lines (a List
// is parsed item by item, each item twice: manifest/lists.go). A new YAML
// encoder for each scalar written cost four times that. (Under -race, as
// make test runs it, some 7% more is allocated.)
func TestInjectAllocatesLinearly(t *testing.T) {
	perByte := func(n int) float64 {
		data := largeList(n)
		path := filepath.Join(t.TempDir(), "in.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		var r *Result
		a := testutil.Allocated(func() { r = Paths(t.Context(), []string{path}, Options{Image: "registry.example.com/proxy-await:1"}) })
		require.Equal(t, n, r.Adopted)
		return float64(a) / float64(len(data))
	}
	small, large := perByte(100), perByte(400)
	t.Logf("bytes allocated per byte of input: %.0f for 100 Deployments, %.0f for 400", small, large)
	assert.Less(t, large, small*1.15, "allocations grow faster than the input")
	assert.Less(t, large, 500.0, "bytes allocated per byte of input")
}

// While inject writes, it holds the input's text, what it read of the
// input's Namespaces, ConfigMaps and Secrets, and the document it is at:
// neither what it first read of every pod template, which each document
// reads again, nor the lines said. Measured as the heap that is live (after
// a collection) each time a hundred lines are said, above what was live
// before the run, against the input: for a List of 1000 Deployments about
// 1.5 times (its text, and where its lines start), for 2000 small documents
// about 2.9 times (each has a ConfigMap, whose data is kept, as check keeps
// it). Holding the pods read first came to 3.8 and 5.6 times, collecting
// the lines to 2.6 and 4.1.
func TestInjectHoldsLittleWhileWriting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		bound float64
	}{
		{"List", largeList(1000), 2},
		{"documents", manyDocuments(2000), 3.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.yaml")
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			live := func() uint64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			base := live()
			var said int
			var most uint64
			r := Paths(t.Context(), []string{path}, Options{Image: "registry.example.com/proxy-await:1", Say: func(Line) {
				if said++; said%100 == 0 {
					now := live()
					most = max(most, now-min(base, now))
				}
			}})
			require.Positive(t, r.Adopted)
			require.GreaterOrEqual(t, said, 1000)
			ratio := float64(most) / float64(len(tc.data))
			t.Logf("most live while writing: %d bytes, %.2f times the input", most, ratio)
			assert.Less(t, ratio, tc.bound, "live heap while writing, against the input")
		})
	}
}
