package lifecycle_test

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// A proxy whose readiness endpoint misbehaves: readiness keeps polling
// within --probe-timeout, honours --timeout, and the child starts as soon as
// the proxy recovers.
func TestReadinessFaults(t *testing.T) {
	for _, fault := range []string{"hang", "500", "reset", "redirect"} {
		t.Run(fault, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-ready-fault", fault)
			p := startPA(t, nil, append([]string{"--probe-timeout", "100ms", "-t", "600ms", "--ready-url", fp.URL("/ready")},
				child("args", "started")...)...)
			assert.Equal(t, 69, p.wait())
			assert.Empty(t, p.restLines)
		})
		t.Run(fault+" then ready", func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-ready-fault", fault, "-ready-after", "never")
			p := startPA(t, nil, append([]string{"--probe-timeout", "100ms", "--ready-url", fp.URL("/ready")},
				child("args", "started")...)...)
			// Probes go on despite the fault.
			fp.WaitFor("two faulty probes", func(rs []testutil.Request) bool { return len(rs) >= 2 })
			assert.Zero(t, fp.Count("GET", "/elsewhere"), "a redirect is never followed")
			fp.Signal(syscall.SIGUSR1) // ready, and the fault ends
			p.expect("started")
			assert.Equal(t, 0, p.wait())
		})
	}
}

func TestProxyGoesAwayAndComesBack(t *testing.T) {
	first := testutil.StartFakeProxy(t, "-ready-after", "never")
	addr := first.Addr
	p := startPA(t, nil, append([]string{steadyProbe, "10s", "--ready-url", first.URL("/ready")}, child("args", "started")...)...)
	first.WaitFor("a not-ready probe", notReadyProbes(1))
	require.NoError(t, first.Cmd.Process.Kill())
	_ = first.Cmd.Wait()

	// Refused connections meanwhile; then a proxy on the same port, ready.
	second := testutil.StartFakeProxy(t, "-addr", addr)
	p.expect("started")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, second.Count("GET", "/ready"))
}

// timerSlack is how late a timer may fire on a loaded machine, for the
// bounds that check a duration proxy-await promises.
const timerSlack = 2 * time.Second

// logTime is the time of a JSON log record.
func logTime(t *testing.T, rec map[string]any) time.Time {
	t.Helper()
	s, _ := rec["time"].(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "log time %q", rec["time"])
	return ts
}

// A shutdown endpoint that misbehaves: proxy-await gives up within
// --shutdown-timeout, saying what happened last, never follows a redirect,
// and exits with the child's status all the same.
func TestShutdownFaults(t *testing.T) {
	for _, tc := range []struct {
		fault   string
		minPOST int
		msg     string // the failure's message
		key     string // and what it says happened last
		value   string
	}{
		{"hang", 1, "proxy did not shut down within 3s", "last", "no answer"},
		{"500", 2, "proxy did not shut down within 3s", "last", "500 Internal Server Error"},
		{"reset", 2, "proxy did not shut down within 3s", "last", "connection reset"},
		{"redirect", 1, "proxy shutdown failed", "error", "answered 302 Found"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			// 3 s: room for two POSTs and their outcomes on a loaded
			// machine. In parallel, the 3 s are spent once.
			t.Parallel()
			const budget = 3 * time.Second
			fp := testutil.StartFakeProxy(t, "-shutdown-fault", tc.fault)
			p := startPA(t, nil, append([]string{"-S", "--log-format", "json", "--shutdown-timeout", budget.String(),
				"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")}, child("exit", "3")...)...)
			assert.Equal(t, 3, p.wait())
			assert.GreaterOrEqual(t, fp.Count("POST", "/shutdown"), tc.minPOST)
			assert.Zero(t, fp.Count("POST", "/elsewhere")+fp.Count("GET", "/elsewhere"), "never follows a redirect")

			// From the child's exit to the give-up, by proxy-await's own
			// clock: the budget, and what a loaded machine adds to a timer.
			recs := records(t, p.stderr.String())
			exited, failed := event(recs, "child_exited"), event(recs, "shutdown_failed")
			require.NotNil(t, exited)
			require.NotNil(t, failed, "proxy shutdown failed is logged")
			took := logTime(t, failed).Sub(logTime(t, exited))
			assert.Less(t, took, budget+timerSlack, "bounded by --shutdown-timeout (%s) and %s of timer slack", budget, timerSlack)
			assert.Equal(t, tc.msg, failed["msg"])
			assert.Equal(t, tc.value, failed[tc.key])
			assert.Equal(t, failed, recs[len(recs)-1], "the failure is the last line")
		})
	}
	t.Run("refused from a proxy that never answered", func(t *testing.T) {
		t.Parallel()
		p := startPA(t, nil, append([]string{"-v", "-S", "--proxy", "none", "--shutdown-timeout", waitForAProbe,
			"--shutdown-url", "http://" + testutil.RefusingAddr(t) + "/shutdown"}, child("exit", "3")...)...)
		assert.Equal(t, 3, p.wait())
		lines := shutdownLines(t, p)
		require.GreaterOrEqual(t, len(lines), 3, "asked again: it may not have started")
		assert.Regexp(t, `^proxy-await: error: proxy did not shut down within `+waitForAProbe+` url=\S+ elapsed=\S+ last="connection refused" \(hint: the proxy never answered`,
			lines[len(lines)-1])
	})
}

// A Job whose sidecar went away before the job ended: the proxy answered
// the wait at its readiness port, and now both its readiness and its
// shutdown ports refuse. It has exited, which is what the POST was for:
// that is said once, at info level, after one attempt.
func TestProxyGoneBeforeTheShutdown(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-flavor", "cloudsql")
	p := startPA(t, nil, append([]string{"-v", "--proxy", "cloudsql", "-S", "--ready-url", "http://" + fp.Ready + "/startup",
		"--shutdown-url", fp.URL("/quitquitquit")}, child("wait-stdin")...)...)
	p.waitLog("proxy-await: proxy is ready ")
	fp.Signal(syscall.SIGTERM)
	_ = fp.Cmd.Wait() // its ports are closed
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait())
	lines := shutdownLines(t, p)
	require.Len(t, lines, 2, "one attempt")
	assert.Regexp(t, `^proxy-await: proxy already gone, nothing to shut down url=`+regexp.QuoteMeta(fp.URL("/quitquitquit"))+` elapsed=\S+$`, lines[1])
}

// Two proxies given by hand, one of which went away before the job ended:
// the other one's readiness URL still answers, but it is not this proxy's.
// URLs given by hand pair by position, so the one gone is judged by its own
// readiness URL, which refuses now: it has exited, said after one attempt,
// not after the whole --shutdown-timeout as a missing endpoint.
func TestOneOfTwoProxiesByHandGoneBeforeTheShutdown(t *testing.T) {
	gone := testutil.StartFakeProxy(t, "-flavor", "istio")
	stays := testutil.StartFakeProxy(t, "-flavor", "istio", "-stay-up")
	p := startPA(t, nil, append([]string{"-v", "--proxy", "none", "-S",
		"--ready-url", "http://" + gone.Ready + "/healthz/ready", "--ready-url", "http://" + stays.Ready + "/healthz/ready",
		"--shutdown-url", gone.URL("/quitquitquit"), "--shutdown-url", stays.URL("/quitquitquit")}, child("wait-stdin")...)...)
	p.waitLog("proxy-await: proxy is ready ")
	gone.Signal(syscall.SIGKILL)
	_ = gone.Cmd.Wait() // its ports are closed
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait())

	var lines []string // the shutdown of the proxy gone, in order
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, " url="+gone.URL("/quitquitquit")+" ") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, "one attempt, then the outcome: %q", lines)
	assert.Equal(t, `proxy-await: debug: shutdown POST failed url=`+gone.URL("/quitquitquit")+` attempt=1 error="connection refused"`, lines[0])
	assert.Regexp(t, `^proxy-await: proxy already gone, nothing to shut down url=`+regexp.QuoteMeta(gone.URL("/quitquitquit"))+` elapsed=\S+$`, lines[1])
	assert.Equal(t, 1, stays.Count("POST", "/quitquitquit"), "the other proxy is shut down")
}

// The trap of a proxy that starts late: readiness timed out without
// --timeout-fatal, the job ran and ended, and only then does the proxy come
// up. A refused connection must not be read as "the proxy has exited": the
// shutdown keeps asking, and the late proxy is shut down.
func TestLateProxyIsShutDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	p := startPA(t, nil, append([]string{"-v", "-S", "-t", "100ms", "--timeout-fatal=false", "--shutdown-timeout", "15s",
		"--ready-url", "http://" + addr + "/ready", "--shutdown-url", "http://" + addr + "/shutdown"}, child("exit", "3")...)...)
	p.waitLog(`debug: shutdown POST failed url=http://` + addr + `/shutdown attempt=1 error="connection refused"`)
	fp := testutil.StartFakeProxy(t, "-addr", addr, "-stay-up")
	assert.Equal(t, 3, p.wait())
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	assert.Regexp(t, `\nproxy-await: proxy shutdown requested url=http://`+addr+`/shutdown status=200 elapsed=\S+\n$`, p.stderr.String())
}

// zombies lists the zombie children of pid.
func zombies(pid int) []int {
	var out []int
	for _, st := range testutil.Children(pid) {
		if st.State == 'Z' {
			out = append(out, st.PID)
		}
	}
	return out
}

func TestZombieStorm(t *testing.T) {
	// Two thousand orphans that exit at once, reparented to proxy-await (a
	// child subreaper); the child then waits for stdin to close. Every
	// reap is logged (event orphan_reaped, at debug level): exactly one
	// each, and no zombie left.
	const orphans = 2000
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do (true &); i=$((i+1)); done; echo done; read x; exit 4`, orphans)
	p := startPA(t, nil, "--proxy", "none", "-v", "--", "sh", "-c", script)
	// Four thousand forks under -race on a loaded machine can take far
	// longer than one line's usual limit: this limit only guards a hang.
	const stormLimit = 3 * time.Minute
	require.Equal(t, "done", p.lines.NextWithin(t, `"done"`, stormLimit))
	reaped := func() int { return strings.Count(p.stderr.String(), "reaped orphan") }
	if !testutil.Until(stormLimit, func() bool { return reaped() >= orphans }) {
		t.Fatalf("%d orphans reaped of %d; zombies left: %d", reaped(), orphans, len(zombies(p.cmd.Process.Pid)))
	}
	assert.Empty(t, zombies(p.cmd.Process.Pid), "zombies left")
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 4, p.wait())
	assert.Equal(t, orphans, reaped(), "one reap logged for each orphan")
}

func TestSignalStorm(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("signals", "SIGTERM")...)...)
	p.expect("ready")
	for range 5000 {
		p.signal(syscall.SIGUSR1)
	}
	p.signal(syscall.SIGUSR2)
	// Pending signals coalesce, so the child sees one SIGUSR1 or more, and
	// the SIGUSR2 sent after the storm exactly once. Different signals keep
	// no order: the kernel hands pending ones to whichever threads are free,
	// in proxy-await and again in the child, so a last SIGUSR1 may come
	// after the SIGUSR2, or even after a SIGTERM sent later.
	usr1, usr2 := 0, 0
	for usr1 == 0 || usr2 == 0 {
		switch line := p.lines.Next(t, "SIGUSR1 or SIGUSR2"); {
		case strings.HasPrefix(line, "signal SIGUSR1 "):
			usr1++
		case strings.HasPrefix(line, "signal SIGUSR2 "):
			usr2++
			require.Equal(t, 1, usr2, "SIGUSR2 was sent once")
		default:
			require.Fail(t, "only SIGUSR1 and SIGUSR2 after the storm", "got %q", line)
		}
	}
	// Still forwarding after the storm: the SIGTERM arrives, with nothing
	// before it but stragglers of the storm.
	p.signal(syscall.SIGTERM)
	for {
		line := p.lines.Next(t, "SIGTERM")
		if strings.HasPrefix(line, "signal SIGTERM ") {
			break
		}
		require.True(t, strings.HasPrefix(line, "signal SIGUSR1 "), "only SIGUSR1 before SIGTERM, got %q", line)
	}
	assert.Equal(t, 0, p.wait())
}

func TestChildClosesStdout(t *testing.T) {
	p := startPA(t, nil, "--proxy", "none", "--", "sh", "-c", "exec >&-; exec 2>&-; exit 6")
	assert.Equal(t, 6, p.wait())
}

func TestChildIgnoresEverySignal(t *testing.T) {
	script := `trap '' HUP INT QUIT TERM USR1 USR2 ALRM WINCH; echo ready; while :; do sleep 1; done`
	p := startPA(t, nil, "--proxy", "none", "--kill-after", "300ms", "--", "sh", "-c", script)
	p.expect("ready")
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGTERM} {
		p.signal(s)
	}
	assert.Equal(t, 137, p.wait())
}

func TestHugeArgumentsAndEnvironment(t *testing.T) {
	args := make([]string, 5000)
	for i := range args {
		args[i] = fmt.Sprintf("%04d-%s", i, strings.Repeat("a", 90))
	}
	env := make([]string, 2000)
	for i := range env {
		env[i] = fmt.Sprintf("BIG_%04d=%s", i, strings.Repeat("b", 90))
	}
	p := startPA(t, env, append([]string{"--proxy", "none"}, child("args", args...)...)...)
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, args, p.restLines)

	p = startPA(t, env, append([]string{"--proxy", "none"}, child("env", "BIG_1999")...)...)
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, []string{"BIG_1999=" + strings.Repeat("b", 90)}, p.restLines)
}

// Killed with SIGKILL, proxy-await cannot pass anything on; the kernel's
// parent-death signal ends the child instead of leaving it unsupervised.
func TestChildDiesWithProxyAwait(t *testing.T) {
	p := startPA(t, nil, "--proxy", "none", "--", "sh", "-c", `trap '' TERM; echo "pid $$"; exec sleep 1000`)
	line := p.expect("pid ")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	require.NoError(t, err)
	p.signal(syscall.SIGKILL)
	assert.Equal(t, 137, p.wait())
	testutil.Eventually(t, func() bool { return !alive(pid) }, "the child %d outlived proxy-await", pid)
}

// alive says whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && st.State != 'Z'
}
