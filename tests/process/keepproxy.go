package process

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// --keep-proxy-on-failure is for a Job whose pod restarts the app's
// container in place (restartPolicy: OnFailure). Whenever proxy-await exits
// non-zero, on every path, the kubelet restarts the container, and the new
// one waits for the proxy: nothing is POSTed, and the line says why. A run
// that exits 0, after --exit-code-map, is the end of the Job: the proxy is
// shut down.
func (Tests) TestKeepProxyOnFailure(t *testing.T) {
	const kept = "proxy-await: the run failed: leaving the proxy running for the container's restart exit_code="
	for _, tc := range []struct {
		name       string
		readyAfter string         // the fake proxy's -ready-after
		signal     syscall.Signal // sent once proxy-await waits for the proxy; 0 for none
		args       []string
		want       int
		posted     bool
	}{
		{"the command failed", "0s", 0, child("exit", "3"), 3, false},
		{"the command was killed", "0s", 0, []string{"--", "sh", "-c", "kill -KILL $$"}, 137, false},
		{"the command was not found", "0s", 0, []string{"--", "/nonexistent/app"}, 127, false},
		{"the wait timed out", "never", 0, append([]string{"--timeout", "100ms"}, child("exit", "0")...), 69, false},
		{"a termination signal before the command started", "never", syscall.SIGTERM, child("exit", "0"), 143, false},
		{"the command succeeded", "0s", 0, child("exit", "0"), 0, true},
		// The kubelet sees the code after --exit-code-map: 0 does not
		// restart the container, so the proxy must go.
		{"a failure mapped to 0", "0s", 0, append([]string{"--exit-code-map", "3:0"}, child("exit", "3")...), 0, true},
		{"a success mapped to a failure", "0s", 0, append([]string{"--exit-code-map", "0:4"}, child("exit", "0")...), 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-ready-after", tc.readyAfter, "-stay-up")
			p := startPA(t, nil, append([]string{"-S", "--keep-proxy-on-failure",
				"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")}, tc.args...)...)
			if tc.signal != 0 {
				fp.WaitFor("a not-ready probe", notReadyProbes(1))
				p.signal(tc.signal)
			}
			assert.Equal(t, tc.want, p.wait())
			lines := strings.Split(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if tc.posted {
				assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
				assert.True(t, strings.HasPrefix(last, "proxy-await: proxy shutdown requested "), "the last line is %q", last)
				return
			}
			assert.Zero(t, fp.Count("POST", "/shutdown"), "the restarted container needs the proxy")
			assert.Equal(t, kept+strconv.Itoa(tc.want), last)
		})
	}
}

// Without -S there is no shutdown to skip, and a Job that succeeds would
// never complete: a usage error, before anything starts.
func (Tests) TestKeepProxyOnFailureNeedsShutdown(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	p := startPA(t, nil, append([]string{"--keep-proxy-on-failure", "--ready-url", fp.URL("/ready")}, child("exit", "0")...)...)
	assert.Equal(t, 2, p.wait())
	require.Empty(t, p.restLines, "the command never ran")
	assert.Zero(t, fp.Count("GET", "/ready"), "nothing was awaited")
	assert.Equal(t, "proxy-await: --keep-proxy-on-failure without --shutdown: without -S the proxy is never shut down, "+
		"so a Job whose command succeeds never completes\n"+
		"proxy-await: hint: add -S to shut the proxy down once the command succeeds, or drop --keep-proxy-on-failure\n", p.stderr.String())
}
