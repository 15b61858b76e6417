package lifecycle_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformanceWant is proxy-await's column of docs/conformance.md: what it
// does in each scenario of scripts/conformance.sh.
var conformanceWant = map[string]string{
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

// docs/conformance.md compares proxy-await with tini and dumb-init on real
// processes. The script that writes it runs here against the binary under
// test, for proxy-await's column only: proxy-await must behave as the page
// says. What tini and dumb-init do (and how fast, on a loaded machine) is
// the page's business, measured by `make conformance`, not a check of
// proxy-await.
func TestConformanceTable(t *testing.T) {
	cmd := exec.Command("../scripts/conformance.sh", proxyAwaitBin)
	// Every proxy-await cell is a "yes" that waits for its event: a long
	// bound for a "no" costs nothing while proxy-await passes.
	cmd.Env = append(cleanEnv(), "CONFORMANCE_WRAPPERS=proxy-await",
		fmt.Sprintf("CONFORMANCE_NO_WAIT=%d", int(waitLimit.Seconds())))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "scripts/conformance.sh failed (it needs root for unshare)\nstderr:\n%s\nstdout:\n%s",
		stderr.String(), stdout.String())
	assert.Equal(t, conformanceWant, conformanceColumn(t, stdout.String(), 2), "proxy-await, measured now")

	doc, err := os.ReadFile("../docs/conformance.md")
	require.NoError(t, err, "run `make conformance` to write docs/conformance.md")
	assert.Equal(t, conformanceWant, conformanceColumn(t, string(doc), 4),
		"docs/conformance.md's proxy-await column: run `make conformance`")
}

// conformanceColumn maps each scenario of a conformance table to its
// proxy-await cell; every row must have cells cells.
func conformanceColumn(t *testing.T, doc string, cells int) map[string]string {
	t.Helper()
	got := map[string]string{}
	rows := tableRows(doc)
	require.NotEmpty(t, rows, "no table in:\n%s", doc)
	require.Equal(t, []string{"scenario", "proxy-await"}, rows[0][:min(2, len(rows[0]))], "the header row")
	for _, row := range rows[1:] {
		require.Len(t, row, cells, "a row of scenario | proxy-await ...: %q", row)
		got[row[0]] = row[1]
	}
	return got
}

// tableRows returns the cells of each row of a Markdown table, the header
// first, less the |---| rule.
func tableRows(doc string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		rows = append(rows, strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | "))
	}
	return rows
}
