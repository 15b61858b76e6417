package check

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --check takes a URL for one inside the pod exactly when proxy-await
// does: "localhoſt" (a long s, which Unicode case-folds to s) is a name for
// DNS to resolve, not the pod's loopback, so the Cloud SQL Auth Proxy
// beside it says nothing of what answers there. The same URL on 127.0.0.1
// is the sidecar's.
func TestLoopbackAsTheRunSeesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pod.yaml")
	write := func(name, host string) {
		require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `kind: Pod
metadata: {name: %s}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [proxy-await, --ready-url, "http://%s:9090/startup", --, /app]
    - name: cloud-sql-proxy
      image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
      args: [project:region:db]
`, name, host), 0o644))
	}

	write("lookalike", "localhoſt")
	assert.Empty(t, lines(t, "", path))

	write("loopback", "127.0.0.1")
	assert.Equal(t, []string{path + `:7: error: preset-mismatch: Pod/loopback container app: proxy-await waits for http://127.0.0.1:9090/startup, which the Cloud SQL Auth Proxy sidecar never answers, so it would wait forever: the proxy serves /startup only when started with --health-check (add it to its args)`},
		lines(t, "", path))
}
