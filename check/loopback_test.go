package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --check takes a URL for one inside the pod exactly when proxy-await
// does: "localhoſt" (a long s, which Unicode case-folds to s) is a name for
// DNS to resolve, not the pod's loopback, so the Cloud SQL Auth Proxy
// beside it says nothing of what answers there.
func TestLoopbackAsTheRunSeesIt(t *testing.T) {
	manifest := `kind: Pod
metadata: {name: lookalike}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [proxy-await, --ready-url, "http://localhoſt:9090/startup", --, /app]
    - name: cloud-sql-proxy
      image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
      args: [project:region:db]
`
	path := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(path, []byte(manifest), 0o644))
	assert.Empty(t, lines(t, "", path))

	// The same URL on 127.0.0.1 is the sidecar's.
	require.NoError(t, os.WriteFile(path, []byte(
		`kind: Pod
metadata: {name: loopback}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [proxy-await, --ready-url, "http://127.0.0.1:9090/startup", --, /app]
    - name: cloud-sql-proxy
      image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
      args: [project:region:db]
`), 0o644))
	assert.Equal(t, []string{path + `:5: error: preset-mismatch: Pod/loopback container app: proxy-await waits for http://127.0.0.1:9090/startup, which the Cloud SQL Auth Proxy sidecar never answers, so it would wait forever: the proxy serves /startup only when started with --health-check (add it to its args)`},
		lines(t, "", path))
}
