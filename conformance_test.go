package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/conformance.md compares proxy-await with tini and dumb-init on real
// processes. The script that writes it is run here against the binary under
// test: proxy-await must behave as the table says, and the committed table
// must be what the script prints today.
func TestConformanceTable(t *testing.T) {
	cmd := exec.Command("scripts/conformance.sh", proxyAwaitBin)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "scripts/conformance.sh failed (it needs tini, dumb-init and root for unshare: run make deps as root)\nstderr:\n%s\nstdout:\n%s",
		stderr.String(), stdout.String())

	want := map[string]string{
		"child exits 3":                   "exit 3",
		"child killed by SIGKILL (128+9)": "exit 137",
		"command not found":               "exit 127",
		"command not executable":          "exit 126",
		"SIGTERM forwarded":               "yes",
		"SIGHUP forwarded":                "yes",
		"SIGUSR1 forwarded":               "yes",
		"SIGUSR2 forwarded":               "yes",
		"SIGWINCH forwarded":              "yes",
		"SIGTERM delivered as SIGUSR1 (`--rewrite TERM:USR1`; dumb-init `--rewrite 15:10`)": "yes",
		"signals reach the child's process group (`-g`; dumb-init by default)":              "yes",
		"the rest of the group gets SIGTERM when the child exits (same options)":            "yes",
		"orphans adopted and reaped when not PID 1 (subreaper)":                             "yes",
		"orphans reaped as PID 1 (`unshare --pid --fork --mount-proc`)":                     "yes",
		"SIGTERM to exit with `--term-delay 1s` (proxy-await only)":                         "1 s",
	}
	got := map[string]string{}
	for _, row := range tableRows(stdout.String()) {
		require.Len(t, row, 4, "a row of scenario | proxy-await | tini | dumb-init: %q", row)
		got[row[0]] = row[1]
	}
	assert.Equal(t, want, got, "the proxy-await column")

	doc, err := os.ReadFile("docs/conformance.md")
	require.NoError(t, err, "run `make conformance` to write docs/conformance.md")
	assert.Equal(t, stdout.String(), string(doc), "docs/conformance.md is stale: run `make conformance`")
}

// tableRows returns the cells of each body row of a Markdown table.
func tableRows(doc string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| scenario |") {
			continue
		}
		rows = append(rows, strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | "))
	}
	return rows
}
