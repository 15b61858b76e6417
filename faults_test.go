package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A proxy whose readiness endpoint misbehaves: readiness keeps polling
// within --probe-timeout, honours --timeout, and the child starts as soon as
// the proxy recovers.
func TestReadinessFaults(t *testing.T) {
	for _, fault := range []string{"hang", "500", "reset", "redirect"} {
		t.Run(fault, func(t *testing.T) {
			fp := startProxy(t, "-ready-fault", fault)
			p := startPA(t, nil, append([]string{"--probe-timeout", "100ms", "-t", "600ms", "--ready-url", fp.url("/ready")},
				child("args", "started")...)...)
			assert.Equal(t, 69, p.wait())
			assert.Empty(t, p.restLines)
			assert.Greater(t, len(fp.requests()), 2, "probes go on despite the fault")
			assert.Zero(t, fp.count("GET", "/elsewhere"), "a redirect is never followed")
		})
		t.Run(fault+" then ready", func(t *testing.T) {
			fp := startProxy(t, "-ready-fault", fault, "-ready-after", "never")
			p := startPA(t, nil, append([]string{"--probe-timeout", "100ms", "--ready-url", fp.url("/ready")},
				child("args", "started")...)...)
			fp.waitFor("two faulty probes", func(rs []request) bool { return len(rs) >= 2 })
			fp.signal(syscall.SIGUSR1) // ready, and the fault ends
			p.expect("started")
			assert.Equal(t, 0, p.wait())
		})
	}
}

func TestProxyGoesAwayAndComesBack(t *testing.T) {
	first := startProxy(t, "-ready-after", "never")
	addr := first.addr
	p := startPA(t, nil, append([]string{"--ready-url", first.url("/ready")}, child("args", "started")...)...)
	first.waitFor("a not-ready probe", notReadyProbes(1))
	require.NoError(t, first.cmd.Process.Kill())
	_ = first.cmd.Wait()

	// Refused connections meanwhile; then a proxy on the same port, ready.
	second := startProxy(t, "-addr", addr)
	p.expect("started")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, second.count("GET", "/ready"))
}

// A shutdown endpoint that misbehaves: proxy-await gives up within
// --shutdown-timeout, saying what happened last, never follows a redirect,
// and exits with the child's status all the same.
func TestShutdownFaults(t *testing.T) {
	for _, tc := range []struct {
		fault   string
		minPOST int
		line    string
	}{
		{"hang", 1, `error: proxy did not shut down within 1.5s url=\S+ elapsed=\S+ last="no answer"`},
		{"500", 2, `error: proxy did not shut down within 1.5s url=\S+ elapsed=\S+ last="500 Internal Server Error"`},
		{"reset", 2, `error: proxy did not shut down within 1.5s url=\S+ elapsed=\S+ last="connection reset"`},
		{"redirect", 1, `error: proxy shutdown failed url=\S+ status=302 elapsed=\S+ error="answered 302 Found"`},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			fp := startProxy(t, "-shutdown-fault", tc.fault)
			began := time.Now()
			p := startPA(t, nil, append([]string{"-S", "--shutdown-timeout", "1500ms", "--ready-url", fp.url("/ready"),
				"--shutdown-url", fp.url("/shutdown")}, child("exit", "3")...)...)
			assert.Equal(t, 3, p.wait())
			assert.Less(t, time.Since(began), 10*time.Second, "bounded by --shutdown-timeout")
			assert.GreaterOrEqual(t, fp.count("POST", "/shutdown"), tc.minPOST)
			assert.Zero(t, fp.count("POST", "/elsewhere")+fp.count("GET", "/elsewhere"), "never follows a redirect")
			assert.Regexp(t, `\nproxy-await: `+tc.line+`\n$`, p.stderr.String())
		})
	}
	// A refused connection means the proxy has exited only if it answered
	// the readiness probes; otherwise it may not have started yet.
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.NoError(t, ln.Close())
		return "http://" + ln.Addr().String() + "/shutdown"
	}
	t.Run("refused after the proxy answered", func(t *testing.T) {
		fp := startProxy(t)
		p := startPA(t, nil, append([]string{"-S", "--ready-url", fp.url("/ready"), "--shutdown-url", closed()},
			child("exit", "3")...)...)
		assert.Equal(t, 3, p.wait())
		assert.Equal(t, 1, strings.Count(p.stderr.String(), "proxy already gone"))
	})
	t.Run("refused from a proxy that never answered", func(t *testing.T) {
		p := startPA(t, nil, append([]string{"-S", "--proxy", "none", "--shutdown-timeout", "300ms", "--shutdown-url", closed()},
			child("exit", "3")...)...)
		assert.Equal(t, 3, p.wait())
		assert.Regexp(t, `\nproxy-await: error: proxy did not shut down within 300ms url=\S+ elapsed=\S+ last="connection refused" \(hint: the proxy never answered`,
			p.stderr.String())
	})
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
	deadline := time.Now().Add(waitLimit)
	for !strings.Contains(p.stderr.String(), `debug: shutdown POST failed url=http://`+addr+`/shutdown attempt=1 error="connection refused"`) {
		require.True(t, time.Now().Before(deadline), "no refused shutdown POST; stderr:\n%s", p.stderr.String())
		time.Sleep(5 * time.Millisecond)
	}
	fp := startProxy(t, "-addr", addr, "-stay-up")
	assert.Equal(t, 3, p.wait())
	assert.Equal(t, 1, fp.count("POST", "/shutdown"))
	assert.Regexp(t, `\nproxy-await: proxy shutdown requested url=http://`+addr+`/shutdown status=200 elapsed=\S+\n$`, p.stderr.String())
}

// zombies lists the zombie children of pid.
func zombies(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func TestZombieStorm(t *testing.T) {
	// Two thousand orphans that exit at once, reparented to proxy-await (a
	// child subreaper); the child then waits for stdin to close.
	script := `i=0; while [ $i -lt 2000 ]; do (true &); i=$((i+1)); done; echo done; read x; exit 4`
	p := startPA(t, nil, "--proxy", "none", "--", "sh", "-c", script)
	p.expect("done")
	deadline := time.Now().Add(waitLimit)
	for len(zombies(p.cmd.Process.Pid)) > 0 {
		require.True(t, time.Now().Before(deadline), "zombies left: %d", len(zombies(p.cmd.Process.Pid)))
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 4, p.wait())
}

func TestSignalStorm(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("signals", "SIGTERM")...)...)
	p.expect("ready")
	for range 5000 {
		p.signal(syscall.SIGUSR1)
	}
	p.expect("signal SIGUSR1 ")
	// Still forwarding after the storm, and still alive.
	p.signal(syscall.SIGUSR2)
	p.expect("signal SIGUSR2 ")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGTERM ")
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
	deadline := time.Now().Add(waitLimit)
	for alive(pid) {
		require.True(t, time.Now().Before(deadline), "the child %d outlived proxy-await", pid)
		time.Sleep(5 * time.Millisecond)
	}
}

// alive says whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[0] != "Z"
}
