package process

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// records parses proxy-await's stderr as JSON lines, one object each.
func records(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON object: %q", line)
		for _, key := range []string{"time", "level", "msg", "event"} {
			require.Contains(t, rec, key, "line %q", line)
		}
		out = append(out, rec)
	}
	return out
}

func event(recs []map[string]any, name string) map[string]any {
	for _, r := range recs {
		if r["event"] == name {
			return r
		}
	}
	return nil
}

func (Tests) TestJSONLogs(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-ready-after", "never")
	p := startPA(t, nil, append([]string{"--log-format", "json", "-S", "--ready-url", fp.URL("/ready"),
		"--shutdown-url", fp.URL("/shutdown")}, child("signals", "SIGTERM")...)...)
	fp.WaitFor("a not-ready probe", notReadyProbes(1))
	fp.Signal(syscall.SIGUSR1)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	assert.Equal(t, 0, p.wait())

	recs := records(t, p.stderr.String())
	ready := event(recs, "readiness_ready")
	require.NotNil(t, ready)
	assert.Contains(t, ready, "elapsed_ms")
	assert.Equal(t, "info", ready["level"])

	sig := event(recs, "signal_forwarded")
	require.NotNil(t, sig)
	assert.Equal(t, "SIGTERM", sig["signal"])
	assert.Contains(t, sig, "child_pid")

	exited := event(recs, "child_exited")
	require.NotNil(t, exited)
	assert.EqualValues(t, 0, exited["exit_code"])

	sent := event(recs, "shutdown_sent")
	require.NotNil(t, sent)
	assert.Equal(t, fp.URL("/shutdown"), sent["url"])
	assert.EqualValues(t, 200, sent["status"])
}

func (Tests) TestJSONLogsOnFailure(t *testing.T) {
	t.Parallel()
	fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-shutdown-fault", "500")
	// -v: the debug lines of every probe and every shutdown attempt are
	// JSON objects with an event too.
	p := startPA(t, nil, append([]string{"--log-format=json", "-v", "-S", "-t", waitForAProbe, "--shutdown-timeout", waitForAProbe,
		"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")}, child("exit", "0")...)...)
	assert.Equal(t, 69, p.wait())
	recs := records(t, p.stderr.String())
	timeout := event(recs, "readiness_timeout")
	require.NotNil(t, timeout)
	assert.Equal(t, "error", timeout["level"])
	failed := event(recs, "shutdown_failed")
	require.NotNil(t, failed)
	assert.Equal(t, "error", failed["level"])
	assert.Equal(t, fp.URL("/shutdown"), failed["url"])
	assert.Equal(t, "500 Internal Server Error", failed["last"])
	assert.Equal(t, "answered 503 Service Unavailable", timeout["error"])
	require.NotNil(t, event(recs, "readiness_probe"))
	require.NotNil(t, event(recs, "shutdown_attempt"))
}
