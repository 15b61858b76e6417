package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --check through the binary: findings on stdout, a summary on stderr, and
// the exit code: 0 without an error finding (warnings allowed), 1 with
// one, 2 on a usage error. It waits for no proxy and runs nothing.
func TestCheckExitCodes(t *testing.T) {
	t.Run("clean: 0", func(t *testing.T) {
		p := startPA(t, nil, "--check", "examples")
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.restLines)
		assert.Regexp(t, `^proxy-await: checked \d+ files: \d+ pod templates; proxy-await runs in \d+ containers errors=0 warnings=0\n$`, p.stderr.String())
	})
	t.Run("warnings only: 0", func(t *testing.T) {
		p := startPA(t, nil, "--check", "check/testdata/proxy-stops-first.yaml")
		assert.Equal(t, 0, p.wait())
		require.Len(t, p.restLines, 3)
		for _, l := range p.restLines {
			assert.Contains(t, l, ": warning: proxy-stops-first: ")
		}
		assert.Equal(t, "proxy-await: checked 1 file: 6 pod templates; proxy-await runs in 6 containers errors=0 warnings=3\n", p.stderr.String())
	})
	t.Run("an error: 1", func(t *testing.T) {
		p := startPA(t, nil, "--check", "check/testdata/grace-period.yaml")
		assert.Equal(t, "check/testdata/grace-period.yaml:14: error: grace-period: Deployment/too-long container web: preStop 5s + term-delay 20s + kill-after 10s = 35s > terminationGracePeriodSeconds 30s: the kubelet's SIGKILL comes first; raise terminationGracePeriodSeconds to 35, or shorten them",
			p.next())
		assert.Regexp(t, `^check/testdata/grace-period.yaml:53: error: grace-period: Job/with-shutdown `, p.next())
		assert.Equal(t, 1, p.wait())
		assert.Empty(t, p.restLines)
	})
	t.Run("unreadable: 1", func(t *testing.T) {
		p := startPA(t, nil, "--check", "examples", "nonexistent.yaml")
		assert.Equal(t, "nonexistent.yaml: error: input: no such file or directory", p.next())
		assert.Equal(t, 1, p.wait())
	})
	t.Run("no path: 2", func(t *testing.T) {
		p := startPA(t, nil, "--check")
		assert.Equal(t, 2, p.wait())
		assert.Equal(t, "proxy-await: --check needs a PATH to read\nproxy-await: hint: give files or directories of manifests, or - for stdin\n", p.stderr.String())
	})
	t.Run("a command with --install: 2", func(t *testing.T) {
		p := startPA(t, nil, "--check", "--install", "/pa", "x.yaml")
		assert.Equal(t, 2, p.wait())
		assert.Equal(t, "proxy-await: --check and --install cannot be used together\nproxy-await: hint: run proxy-await once for each\n", p.stderr.String())
	})
}

// "-" reads the manifests from stdin, as from `helm template` or
// `kustomize build`; under --log-format json each finding is one object
// with the documented keys, and so is the summary on stderr.
func TestCheckStdinJSON(t *testing.T) {
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
	assert.Equal(t, map[string]any{"event": "finding", "file": "<stdin>", "line": float64(11), "level": "error", "rule": "shell-form",
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

// checkExample marks docs/check.md's manifest with a mistake, which
// TestDocsSnippets leaves to TestDocsCheckExample.
const checkExample = "<!-- check example: a manifest with a mistake on purpose; a test runs --check on it and compares the output -->"

// docs/check.md's finding is what --check prints for its manifest, with
// the exit code it shows.
func TestDocsCheckExample(t *testing.T) {
	page := readDoc(t, "docs/check.md")
	_, after, ok := strings.Cut(page, checkExample+"\n```yaml\n")
	require.True(t, ok, "docs/check.md has no check example")
	manifest, after, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	_, after, ok = strings.Cut(after, "```text\n")
	require.True(t, ok)
	session, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSuffix(session, "\n"), "\n")
	require.Len(t, lines, 4, "a command, its finding, echo $? and the code")
	args, ok := strings.CutPrefix(lines[0], "$ proxy-await ")
	require.True(t, ok, lines[0])
	require.Equal(t, "$ echo $?", lines[2])

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(manifest), 0o644))
	cmd := exec.Command(proxyAwaitBin, strings.Fields(args)...)
	cmd.Dir = dir
	p := startCmd(t, cmd, nil)
	assert.Equal(t, lines[1], p.next())
	assert.Equal(t, lines[3], strconv.Itoa(p.wait()))
	assert.Empty(t, p.restLines)
}
