package inject

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two hostNetwork pods of one input never get one --probe-port: each
// gets its own, none that a hostNetwork pod of the input declares or
// probes, each declared as the container's port; and the same input gets
// the same ports again.
func TestHostNetworkProbePortsNeverCollide(t *testing.T) {
	var b strings.Builder
	const n = 300
	for i := range n {
		// Each declares the port the one before it would have got by its
		// name's hash, were it free: the choice must look past those.
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent-%d, namespace: nodes}
spec:
  template:
    spec:
      hostNetwork: true
      containers:
        - name: agent
          image: registry.example.com/agent:1
          command: [/agent]
          ports: [{containerPort: %d}]
          readinessProbe:
            httpGet: {path: /ready, port: %d}
`, i, hostProbeFirst+i, hostProbeFirst+i)
	}
	path := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	declared := map[int]bool{}
	for i := range n {
		declared[hostProbeFirst+i] = true
	}
	ports := func() []int {
		r := run(t.Context(), []string{path}, Options{Image: "registry.example.com/proxy-await:1"})
		require.Equal(t, n, r.Adopted)
		var out []int
		for _, l := range r.Lines {
			if l.Event != "adopted" {
				continue
			}
			i := strings.Index(l.Message, "--probe-port ")
			require.GreaterOrEqual(t, i, 0, "%s", l)
			port, err := strconv.Atoi(strings.Fields(l.Message[i+len("--probe-port "):])[0])
			require.NoError(t, err)
			out = append(out, port)
		}
		assert.Equal(t, n, strings.Count(string(r.Output), "{name: proxy-await, containerPort: "), "each declared as the container's port")
		return out
	}
	first := ports()
	seen := map[int]bool{}
	for _, p := range first {
		assert.False(t, seen[p], "--probe-port %d twice", p)
		assert.False(t, declared[p], "--probe-port %d, which a pod of the input declares", p)
		assert.GreaterOrEqual(t, p, hostProbeFirst)
		assert.Less(t, p, hostProbeFirst+hostProbePorts)
		seen[p] = true
	}
	assert.Equal(t, first, ports(), "the same ports for the same input")
}
