package lifecycle_test

// --proxy-lost (docs/reference.md#lifecycle, step 4): a proxy that dies
// while the command runs stops the command, and proxy-await exits 69, so
// that a Job fails and is retried in a new pod instead of hanging. The
// stand-in proxy is killed, or answers 503 (SIGUSR2) and 200 again
// (SIGUSR1); each test waits on what proxy-await logs or the child prints.

import (
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// lostLines are the log lines of a run whose proxy at url is lost with
// lastErr while the child runs, up to the delivery of the stop signal as
// as ("" for SIGTERM itself).
func lostLines(url, lastErr, lost, as string) []string {
	delivered := `proxy-await: delivering termination signal signal=SIGTERM child_pid=*`
	if as != "" {
		delivered += " as=" + as
	}
	return []string{
		`proxy-await: waiting for the proxy: --ready-url url=` + url,
		`proxy-await: proxy is ready elapsed=*`,
		`proxy-await: warning: proxy not ready: the command is stopped if this lasts --proxy-lost url=` + url +
			` proxy_lost=` + lost + ` error="` + lastErr + `"`,
		`proxy-await: error: proxy lost: stopping the command, then exiting 69 url=` + url + ` failing=* error="` + lastErr + `"`,
		delivered + ` reason="proxy lost"`,
	}
}

// killedLog is proxy-await's log as testutil.LogLines gives it, for a run
// whose proxy was killed: the first probe after the kill may reach the
// proxy while the kernel tears its sockets down, and be reset rather than
// refused. Both are the proxy dying, and read as refused here.
func killedLog(stderr string) []string {
	lines := testutil.LogLines(stderr)
	for i, l := range lines {
		if strings.Contains(l, "proxy not ready: the command is stopped") {
			lines[i] = strings.Replace(l, `error="connection reset"`, `error="connection refused"`, 1)
		}
	}
	return lines
}

// A proxy killed while the command runs: the command gets SIGTERM once the
// readiness URL has refused connections for --proxy-lost, and proxy-await
// exits 69 whatever the command's code; --exit-code-map applies last.
func TestProxyKilledMidRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  string // the child's, on SIGTERM
		flags []string
		want  int
	}{
		{"child exits 0", "0", nil, 69},
		{"child exits 3", "3", nil, 69},
		{"exit code mapped", "0", []string{"--exit-code-map", "69:7"}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t)
			url := fp.URL("/ready")
			p := startPA(t, nil, append(append([]string{"--ready-url", url, "--proxy-lost", "500ms"}, tc.flags...),
				child("exit-on", tc.code, "SIGTERM")...)...)
			p.expect("ready")
			fp.Kill()
			p.expect("signal SIGTERM ")
			assert.Equal(t, tc.want, p.wait())
			want := append(lostLines(url, "connection refused", "500ms", ""), `proxy-await: child exited child_pid=* exit_code=`+tc.code)
			if tc.want == 7 {
				want = append(want, `proxy-await: exit code mapped exit_code=69 as=7`)
			}
			assert.Equal(t, want, killedLog(p.stderr.String()))
		})
	}
}

// A proxy that answers 503 for less than --proxy-lost is forgiven; the
// next run of 503s that lasts --proxy-lost stops the command.
func TestProxyNotReadyShorterThenLonger(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	url := fp.URL("/ready")
	// 2 s, with a probe a second: the 200 that ends the first failure comes
	// a second after it began, however slow the test's own steps.
	p := startPA(t, nil, append([]string{"--ready-url", url, "--proxy-lost", "2s"}, child("signals", "SIGTERM")...)...)
	p.expect("ready")
	fp.Signal(syscall.SIGUSR2) // not ready
	p.waitLog("proxy not ready: the command is stopped")
	fp.Signal(syscall.SIGUSR1) // ready again
	p.waitLog("proxy ready again")
	p.silent("the proxy failed for less than --proxy-lost")
	fp.Signal(syscall.SIGUSR2)
	p.expect("signal SIGTERM ")
	assert.Equal(t, 69, p.wait())

	failing := `proxy-await: warning: proxy not ready: the command is stopped if this lasts --proxy-lost url=` + url +
		` proxy_lost=2s error="answered 503 Service Unavailable"`
	assert.Equal(t, []string{
		`proxy-await: waiting for the proxy: --ready-url url=` + url,
		`proxy-await: proxy is ready elapsed=*`,
		failing,
		`proxy-await: proxy ready again url=` + url + ` failing=*`,
		failing,
		`proxy-await: error: proxy lost: stopping the command, then exiting 69 url=` + url +
			` failing=* error="answered 503 Service Unavailable"`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="proxy lost"`,
		`proxy-await: child exited child_pid=* exit_code=0`,
	}, testutil.LogLines(p.stderr.String()))
}

// The loss's stop is the stop signal's: SIGTERM as its --rewrite, never
// held by --term-delay, and --kill-after counts from it.
func TestProxyLostStopIsTheStopSignal(t *testing.T) {
	t.Run("rewritten", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		url := fp.URL("/ready")
		p := startPA(t, nil, append([]string{"--ready-url", url, "--proxy-lost", "300ms", "-r", "TERM:USR1", "--term-delay", "1h"},
			child("exit-on", "0", "SIGUSR1")...)...)
		p.expect("ready")
		fp.Kill()
		p.expect("signal SIGUSR1 ")
		assert.Equal(t, 69, p.wait())
		assert.Empty(t, p.restLines, "SIGUSR1 alone reached the child")
		assert.Equal(t, append(lostLines(url, "connection refused", "300ms", "SIGUSR1"),
			`proxy-await: child exited child_pid=* exit_code=0`), killedLog(p.stderr.String()))
	})
	t.Run("kill after", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		url := fp.URL("/ready")
		p := startPA(t, nil, append([]string{"--ready-url", url, "--proxy-lost", "300ms", "--kill-after", "500ms"},
			child("ignore-term")...)...)
		p.expect("ready")
		fp.Kill()
		assert.Equal(t, 69, p.wait())
		assert.Equal(t, append(lostLines(url, "connection refused", "300ms", ""),
			`proxy-await: warning: child still running after the termination signal: sending SIGKILL child_pid=* kill_after=500ms`,
			`proxy-await: child killed by signal child_pid=* signal=SIGKILL exit_code=137`,
		), killedLog(p.stderr.String()))
	})
}

// A stop signal after the loss's stop (the kubelet's, as the pod fails) is
// forwarded as any later signal: one more SIGTERM for the child.
func TestStopSignalAfterProxyLost(t *testing.T) {
	fp := testutil.StartFakeProxy(t)
	url := fp.URL("/ready")
	p := startPA(t, nil, append([]string{"--ready-url", url, "--proxy-lost", "300ms"}, child("signals")...)...)
	p.expect("ready")
	fp.Kill()
	p.expect("signal SIGTERM ")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGTERM ")
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 69, p.wait())
	assert.Equal(t, append(lostLines(url, "connection refused", "300ms", ""),
		`proxy-await: forwarding signal signal=SIGTERM child_pid=*`,
		`proxy-await: child exited child_pid=* exit_code=0`,
	), killedLog(p.stderr.String()))
}

// A stop signal held by --term-delay when the proxy dies: nothing changes.
// The watch ended with the stop signal (the proxy may be shutting down
// then), the hold goes on, a second stop signal ends it, and the exit code
// is the child's.
func TestProxyDiesDuringTheHold(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	url := fp.URL("/ready")
	p := startPA(t, nil, append([]string{"-v", "--ready-url", url, "--proxy-lost", "300ms", "--term-delay", "1h"},
		child("exit-on", "3", "SIGTERM")...)...)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	p.waitLog("holding SIGTERM")
	fp.Signal(syscall.SIGUSR2) // not ready: each probe would be a failure
	probes := fp.Count("GET", "/ready")
	// A window of three --proxy-lost: a watch still running would have
	// probed, and lost the proxy, within it.
	time.Sleep(900 * time.Millisecond)
	assert.Equal(t, probes, fp.Count("GET", "/ready"), "probed after the stop signal")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGTERM ")
	assert.Equal(t, 3, p.wait())
	assert.Equal(t, []string{
		`proxy-await: waiting for the proxy: --ready-url url=` + url,
		`proxy-await: proxy is ready elapsed=*`,
		`proxy-await: debug: watching the proxy url=` + url + ` proxy_lost=300ms`,
		`proxy-await: debug: child started child_pid=*`,
		`proxy-await: debug: no longer watching the proxy: the stop signal arrived`,
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1h0m0s`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="second SIGTERM received"`,
		`proxy-await: child exited child_pid=* exit_code=3`,
	}, testutil.LogLines(p.stderr.String()))
}

// -S still POSTs the shutdown after a loss: to a proxy that came back on
// its port (a restarted container), or, when nothing listens there any
// more, the POST is refused and the proxy is taken for gone, as it is.
func TestShutdownAfterProxyLost(t *testing.T) {
	t.Run("the proxy is back", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		url := fp.URL("/ready")
		p := startPA(t, nil, append([]string{"-S", "--ready-url", url, "--shutdown-url", fp.URL("/shutdown"), "--proxy-lost", "300ms"},
			child("signals")...)...)
		p.expect("ready")
		fp.Kill()
		p.expect("signal SIGTERM ")
		back := testutil.StartFakeProxy(t, "-addr", fp.Addr, "-stay-up")
		require.NoError(t, p.stdin.Close()) // the child exits, now that the proxy is back
		assert.Equal(t, 69, p.wait())
		assert.Equal(t, 1, back.Count("POST", "/shutdown"))
		assert.Zero(t, back.Count("GET", "/ready"), "no probe once the proxy was lost")
		assert.Equal(t, append(lostLines(url, "connection refused", "300ms", ""),
			`proxy-await: child exited child_pid=* exit_code=0`,
			`proxy-await: proxy shutdown requested url=`+fp.URL("/shutdown")+` status=200 elapsed=*`,
		), killedLog(p.stderr.String()))
	})
	t.Run("the proxy is gone", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		url := fp.URL("/ready")
		p := startPA(t, nil, append([]string{"-S", "--ready-url", url, "--shutdown-url", fp.URL("/shutdown"), "--proxy-lost", "300ms"},
			child("exit-on", "0", "SIGTERM")...)...)
		p.expect("ready")
		fp.Kill()
		assert.Equal(t, 69, p.wait())
		assert.Equal(t, append(lostLines(url, "connection refused", "300ms", ""),
			`proxy-await: child exited child_pid=* exit_code=0`,
			`proxy-await: proxy already gone, nothing to shut down url=`+fp.URL("/shutdown")+` elapsed=*`,
		), killedLog(p.stderr.String()))
	})
}

// With several proxies, losing any one stops the command: here the second
// of two, while the first still answers.
func TestOneOfSeveralProxiesLost(t *testing.T) {
	istio := testutil.StartFakeProxy(t, "-flavor", "istio", "-stay-up")
	cloudsql := testutil.StartFakeProxy(t, "-flavor", "cloudsql")
	istioReady, _ := sidecarURLs(t, istio, "istio")
	sqlReady, _ := sidecarURLs(t, cloudsql, "cloudsql")
	p := startPA(t, nil, append([]string{"--ready-url", istioReady, "--ready-url", sqlReady, "--proxy-lost", "300ms"},
		child("exit-on", "0", "SIGTERM")...)...)
	p.expect("ready")
	cloudsql.Kill()
	assert.Equal(t, 69, p.wait())
	lines := killedLog(p.stderr.String())
	require.Len(t, lines, 6, "log:\n%s", p.stderr.String())
	assert.Equal(t, `proxy-await: error: proxy lost: stopping the command, then exiting 69 url=`+sqlReady+
		` failing=* error="connection refused"`, lines[3])
	assert.NotContains(t, p.stderr.String(), "proxy not ready: the command is stopped if this lasts --proxy-lost url="+istioReady)
}

// Under --log-format json the loss is one object with the event proxy_lost,
// its URL without the password, how long it failed and the last error.
func TestProxyLostJSON(t *testing.T) {
	fp := testutil.StartFakeProxy(t)
	url := "http://user:s3cret@" + fp.Addr + "/ready"
	p := startPA(t, nil, append([]string{"--log-format", "json", "--ready-url", url, "--proxy-lost", "300ms"},
		child("exit-on", "0", "SIGTERM")...)...)
	p.expect("ready")
	fp.Kill()
	assert.Equal(t, 69, p.wait())
	recs := records(t, p.stderr.String())
	var events []string
	for _, r := range recs {
		events = append(events, r["event"].(string))
	}
	assert.Equal(t, []string{"readiness_started", "readiness_ready", "proxy_failing", "proxy_lost", "signal_forwarded", "child_exited"}, events)
	lost := event(recs, "proxy_lost")
	require.NotNil(t, lost)
	assert.Equal(t, "error", lost["level"])
	assert.Equal(t, "proxy lost: stopping the command, then exiting 69", lost["msg"])
	assert.Equal(t, "http://user:xxxxx@"+fp.Addr+"/ready", lost["url"])
	assert.Equal(t, "connection refused", lost["error"])
	assert.GreaterOrEqual(t, lost["failing_ms"], float64(300))
	assert.Equal(t, []string{"error", "event", "failing_ms", "level", "msg", "time", "url"}, slices.Sorted(maps.Keys(lost)))
	assert.NotContains(t, p.stderr.String(), "s3cret")
	assert.Equal(t, "proxy lost", event(recs, "signal_forwarded")["reason"])
}

// A real Cloud SQL Auth Proxy v2, offline, killed while the command runs
// under --proxy cloudsql --proxy-lost 2s: its /startup refuses connections
// from then on, the command gets SIGTERM 2 s or so later, and proxy-await
// exits 69.
func TestRealCloudSQLProxyLost(t *testing.T) {
	sql := newCloudSQL(t, "--quitquitquit")
	sql.start(t)
	p := startPA(t, nil, append([]string{"--proxy", "cloudsql", "--proxy-lost", "2s", "--ready-url", sql.startup,
		"--shutdown-url", sql.quit}, child("exit-on", "0", "SIGTERM")...)...)
	p.expect("ready")
	killed := time.Now()
	require.NoError(t, sql.cmd.Process.Kill())
	err := <-sql.done
	sql.done <- err // for the cleanup
	p.expect("signal SIGTERM ")
	// A probe under way as the kill came may have failed a moment before
	// it: a tenth of a second of slack.
	assert.GreaterOrEqual(t, time.Since(killed), 1900*time.Millisecond, "the command was stopped --proxy-lost after the kill, not before")
	assert.Equal(t, 69, p.wait())
	assert.Equal(t, append(lostLines(sql.startup, "connection refused", "2s", ""),
		`proxy-await: child exited child_pid=* exit_code=0`), killedLog(p.stderr.String()))
}
