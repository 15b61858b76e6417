package check

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// istioConfigPod is a Deployment whose classic Istio sidecar reads config,
// a block scalar of the proxy.istio.io/config annotation, for the drain
// time that proxy-stops-first compares with --term-delay.
func istioConfigPod(config string) []byte {
	return []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
      annotations:
        sidecar.istio.io/nativeSidecar: "false"
        proxy.istio.io/config: |
          ` + config + `
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1
          command: [proxy-await, --proxy, istio, --term-delay, 20s, --, /web]
`)
}

// A setting that holds YAML of its own is parsed within bounds too: 4 MB
// of "[a,a,...]" in proxy.istio.io/config, which took 1.4 s and 551 MB
// when parsed whole, costs what the manifest's own reading costs (less
// than 10 times its size) and is refused in well under a second, with an
// unknown-value warning; so are a dense annotation below the size bound,
// and one past it without a comma.
func TestNestedParseIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name, config string
	}{
		{"dense", "[" + strings.Repeat("a,", 2<<20) + "a]"},
		{"dense-small", "[" + strings.Repeat("a,", maxNestedNodes) + "a]"},
		{"long", "terminationDrainDuration: " + strings.Repeat("1", 4<<20) + "s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := istioConfigPod(tc.config)
			p := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(p, data, 0o644))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			findings, _ := Paths([]string{p}, Options{})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes: %v, %d bytes allocated (%.1f times)", len(data), took, alloc, float64(alloc)/float64(len(data)))
			require.Len(t, findings, 1)
			assert.Equal(t, "unknown-value", findings[0].Rule)
			assert.Contains(t, findings[0].Message, "terminationDrainDuration comes from proxy.istio.io/config, which is larger than is read")
			assert.Less(t, alloc, uint64(10*len(data)+8<<20), "allocated for %d bytes", len(data))
			if !raceEnabled {
				// Some 0.1 s on a quiet machine; the bound leaves room for
				// a loaded one, and the unbounded parse took over ten.
				assert.Less(t, took, 2*time.Second)
			}
		})
	}
}

// BenchmarkNestedAnnotation checks a Deployment whose proxy.istio.io/config
// is 4 MB of "[a,a,...]": its cost is reading the manifest, not the
// annotation's nodes.
func BenchmarkNestedAnnotation(b *testing.B) {
	benchmarkFile(b, istioConfigPod("["+strings.Repeat("a,", 2<<20)+"a]"))
}
