package process

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --check's exit codes, output and usage errors through the binary are
// the scenario testdata/script/check.txtar; here what needs Go to check.

// "-" reads the manifests from stdin, as from `helm template` or
// `kustomize build`; under --log-format json each finding is one object
// with the documented keys, and so is the summary on stderr.
func (Tests) TestCheckStdinJSON(t *testing.T) {
	cmd := exec.Command(proxyAwaitBin, "--log-format", "json", "--check", "--versions", "linkerd=2.20", "-")
	cmd.Stdin = strings.NewReader(`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-enable-native-sidecar: "false"}
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.example.com/migrate:1
          command: [sh, -c, "proxy-await --term-delay 40s -- /migrate"]
`)
	p := startCmd(t, cmd, nil)
	var findings []map[string]any
	var lines []string
	for range 4 {
		var f map[string]any
		lines = append(lines, p.next())
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &f))
		findings = append(findings, f)
	}
	assert.Equal(t, 1, p.wait())
	assert.Empty(t, p.restLines)
	assert.Equal(t, map[string]any{"event": "finding", "file": "<stdin>", "line": float64(13), "level": "error", "rule": "shell-form",
		"kind": "Job", "name": "migrate", "container": "migrate",
		"message": "proxy-await runs under sh -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell"},
		findings[0])
	assert.Equal(t, "job-never-completes", findings[1]["rule"])
	assert.Equal(t, "grace-period", findings[2]["rule"])
	assert.Contains(t, lines[2], `"message":"preStop 0s + term-delay 40s + kill-after 0s = 40s > terminationGracePeriodSeconds 30s: `,
		"the line is JSON as a person reads it: > unescaped")
	assert.Equal(t, "proxy-stops-first", findings[3]["rule"])

	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.stderr.String()), &sum), p.stderr.String())
	delete(sum, "time")
	assert.Equal(t, map[string]any{"level": "info", "msg": "checked 1 file: 1 pod template; proxy-await runs in 1 container",
		"event": "check_done", "errors": float64(3), "warnings": float64(1)}, sum)
}
