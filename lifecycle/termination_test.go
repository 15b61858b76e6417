package lifecycle_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// Lifecycle step 5 (docs/reference.md#lifecycle): once configuration succeeded, -S POSTs the
// shutdown URLs on every exit path. The readiness timeout and the signal
// during the wait have their own tests in lifecycle_test.go.
func TestShutdownOnEveryExitPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"child exits 0", child("exit", "0"), 0},
		{"child exits 9", child("exit", "9"), 9},
		{"child killed by a signal", []string{"--", "sh", "-c", "kill -KILL $$"}, 137},
		{"command not found", []string{"--", "/nonexistent/job"}, 127},
		{"command not executable", []string{"--", "/proc/version"}, 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-stay-up") // stays up to count a second POST
			p := startPA(t, nil, append([]string{"-S", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
				tc.args...)...)
			assert.Equal(t, tc.want, p.wait())
			assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
		})
	}
}

// --kill-after ends a child that ignores SIGTERM in time for proxy-await to
// POST the shutdown and exit 137 itself, before the kubelet's SIGKILL.
func TestKillAfterThenShutdown(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	p := startPA(t, nil, append([]string{"-S", "--kill-after", "200ms", "--ready-url", fp.URL("/ready"),
		"--shutdown-url", fp.URL("/shutdown")}, child("ignore-term")...)...)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	assert.Equal(t, 137, p.wait())
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	assert.Contains(t, p.stderr.String(), "sending SIGKILL")
}

// --term-delay from the command line: the child keeps serving, then gets
// SIGTERM as its rewrite.
func TestTermDelayFromTheCommandLine(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none", "--term-delay", "300ms", "-r", "TERM:USR1"},
		child("signals", "SIGUSR1")...)...)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGUSR1 ")
	assert.Equal(t, 0, p.wait())
	assert.Contains(t, p.stderr.String(), "holding SIGTERM while the child keeps serving")
}

// With -g, --kill-after bounds the main child only: once it has exited,
// proxy-await sends its group SIGTERM and exits, and a member that ignores
// SIGTERM is left running, never killed (docs/signals-and-pid1.md).
// --wait-all is what waits for such processes and kills them.
func TestKillAfterEndsWithTheMainChild(t *testing.T) {
	// 10 s: far longer than the main child takes to exit on SIGTERM, on any
	// machine. A proxy-await that went on waiting for the member would
	// SIGKILL it at the 10 s.
	p := startPA(t, nil, append([]string{"--proxy", "none", "-g", "--kill-after", "10s"},
		child("stubborn-group")...)...)
	member, err := strconv.Atoi(strings.TrimPrefix(p.expect("member "), "member "))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(member, syscall.SIGKILL) })
	assert.Equal(t, "ready", p.next())
	p.signal(syscall.SIGTERM)
	assert.Equal(t, "SIGTERM", p.nextSignal())
	assert.Equal(t, 0, p.wait(), "the main child's own status, at once")
	st, ok := proctree.ReadStat(member)
	require.True(t, ok, "the member was killed")
	assert.NotEqual(t, byte('Z'), st.State, "the member is still running")
	assert.NotContains(t, p.stderr.String(), "sending SIGKILL")
}
