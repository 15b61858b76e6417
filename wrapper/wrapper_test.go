package wrapper

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/signals"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

func TestMain(m *testing.M) {
	testchild.Main()
	testchild.NoRaceExitSleep()
	testchild.DetachTerminal()
	testchild.UnignoreSignals()
	os.Exit(m.Run())
}

// waitLimit bounds every wait, so a bug fails a test instead of hanging it.
const waitLimit = 20 * time.Second

// running is a child under Supervise in this test process. Signals are real: they
// are sent to this process, caught by Notify and forwarded by Supervise.
type running struct {
	t     *testing.T
	stdin *os.File
	lines *testutil.Lines
	done  chan result
	log   *testutil.Buffer
}

type result struct {
	code int
	err  error
}

// start runs a testchild scenario under Supervise with cfg.
func start(t *testing.T, cfg Config, scenario string, args ...string) *running {
	t.Helper()
	cfg.Args = append([]string{testchild.Self()}, args...)
	return startCommand(t, cfg, scenario)
}

// startCommand runs cfg.Args under Supervise, with the test binary playing
// scenario wherever the command starts it.
func startCommand(t *testing.T, cfg Config, scenario string) *running {
	t.Helper()
	t.Setenv(testchild.Env, scenario)
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	r := &running{t: t, stdin: inW, done: make(chan result, 1), log: &testutil.Buffer{}}
	r.lines = testutil.NewLines(outR, waitLimit, func() string { return "log:\n" + r.log.String() })
	cfg.Stdin, cfg.Stdout = inR, outW

	sigs := Notify()
	go func() {
		code, err := (&Supervisor{sigs: sigs, log: logging.New(r.log, "text", -4)}).Supervise(cfg)
		Stop(sigs)
		inR.Close()
		outW.Close()
		r.done <- result{code, err}
	}()
	t.Cleanup(func() {
		inW.Close()
		if t.Failed() {
			t.Logf("log:\n%s", r.log.String())
		}
	})
	return r
}

// expect returns the child's next line, which must start with prefix: not a
// later one, so that an unexpected line (a signal that should have been
// dropped) fails the test.
func (r *running) expect(prefix string) string {
	r.t.Helper()
	return r.lines.Expect(r.t, prefix)
}

// signalTime reads "signal NAME UNIXNANO" for NAME and returns the time.
func (r *running) signalTime(name string) time.Time {
	r.t.Helper()
	f := strings.Fields(r.expect("signal " + name + " "))
	ns, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(r.t, err)
	return time.Unix(0, ns)
}

func (r *running) wait() int {
	r.t.Helper()
	select {
	case res := <-r.done:
		require.NoError(r.t, res.err)
		return res.code
	case <-time.After(waitLimit):
		r.t.Fatalf("child still running after %s; log:\n%s", waitLimit, r.log.String())
		return 0
	}
}

// kill sends sig to this process, as a container runtime sends it to PID 1.
func kill(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, syscall.Kill(os.Getpid(), sig))
}

func TestEveryForwardedSignalReachesTheChild(t *testing.T) {
	r := start(t, Config{}, "signals", "SIGTERM")
	r.expect("ready")
	for _, s := range signals.Forwarded() {
		sig := s.(syscall.Signal)
		switch sig {
		case syscall.SIGTERM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
			continue // TERM ends the child; job control stops this process (tested in the PID 1 tests)
		}
		kill(t, sig)
		r.expect("signal " + name(sig) + " ")
	}
	kill(t, syscall.SIGTERM)
	r.expect("signal SIGTERM ")
	assert.Equal(t, 0, r.wait())
}

// name is what testchild prints for sig.
func name(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(int(sig))
}

func TestRewrite(t *testing.T) {
	r := start(t, Config{Rewrite: map[syscall.Signal]syscall.Signal{
		syscall.SIGTERM: syscall.SIGUSR1, // by name, the HAProxy case
		syscall.SIGHUP:  syscall.Signal(12),
		syscall.SIGINT:  0,
	}}, "signals", "SIGQUIT")
	r.expect("ready")

	// TO=0 drops FROM. A forwarded SIGINT would come before the marker,
	// SIGWINCH: it is sent first, and of two pending signals the lower
	// number is delivered first.
	kill(t, syscall.SIGINT)
	kill(t, syscall.SIGWINCH)
	r.expect("signal SIGWINCH ")
	waitLog(t, r.log, "dropped signal (rewritten to 0)")

	kill(t, syscall.SIGTERM) // by name
	r.expect("signal SIGUSR1 ")
	kill(t, syscall.SIGHUP) // by number
	r.expect("signal SIGUSR2 ")
	kill(t, syscall.SIGQUIT)
	r.expect("signal SIGQUIT ")
	assert.Equal(t, 0, r.wait())
	assert.Empty(t, r.lines.Rest(t), "nothing after SIGQUIT")
}

func TestChildKilledBySignal(t *testing.T) {
	r := start(t, Config{Rewrite: map[syscall.Signal]syscall.Signal{syscall.SIGHUP: syscall.SIGKILL}}, "signals")
	r.expect("ready")
	kill(t, syscall.SIGHUP)
	assert.Equal(t, 128+9, r.wait())
	assert.Contains(t, r.log.String(), "child killed by signal")
}

func TestOrphansAreReaped(t *testing.T) {
	r := start(t, Config{}, "orphan")
	line := r.expect("orphan ")
	r.expect("ready")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "orphan "))
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), ppid(t, pid), "the orphan is reparented to us, a child subreaper")

	require.NoError(t, r.stdin.Close()) // the orphan exits; the child goes on
	waitLog(t, r.log, fmt.Sprintf("reaped orphan pid=%d ", pid))
	_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
	assert.True(t, os.IsNotExist(err), "the orphan was reaped, not left a zombie")

	kill(t, syscall.SIGTERM)
	assert.Equal(t, 0, r.wait())
}

// ppid reads a process's parent from /proc.
func ppid(t *testing.T, pid int) int {
	st, ok := proctree.ReadStat(pid)
	require.True(t, ok, "process %d is gone", pid)
	return st.PPID
}

func TestProcessGroup(t *testing.T) {
	r := start(t, Config{ProcessGroup: true}, "group")
	// The leader says "member PID" and "ready", the member "ready", in
	// whatever order the two processes get to it.
	var member int
	var first []string
	for range 3 {
		line := r.lines.Next(t, `"member PID" or "ready"`)
		if pid, ok := strings.CutPrefix(line, "member "); ok {
			var err error
			member, err = strconv.Atoi(pid)
			require.NoError(t, err)
			line = "member"
		}
		first = append(first, line)
	}
	require.ElementsMatch(t, []string{"member", "ready", "ready"}, first)
	kill(t, syscall.SIGHUP)
	r.expect("signal SIGHUP ")
	r.expect("signal SIGHUP ")
	// The leader exits on stdin EOF; the member stays until the group gets SIGTERM.
	require.NoError(t, r.stdin.Close())
	assert.Equal(t, 0, r.wait())
	r.expect("signal SIGTERM ")
	assert.Equal(t, 0, unreaped(member), "the member got SIGTERM after the leader exited")
}

// unreaped waits for pid to be gone and says 0, or returns pid after waitLimit.
func unreaped(pid int) int {
	if testutil.Until(waitLimit, func() bool {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return true
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		return false
	}) {
		return 0
	}
	return pid
}

func TestTermDelay(t *testing.T) {
	// The SIGHUP must be forwarded while the SIGTERM is held: the delay is
	// long beside the test's steps between the two, even if it stalls for a
	// second.
	const delay = 2 * time.Second
	r := start(t, Config{TermDelay: delay}, "signals", "SIGTERM")
	r.expect("ready")
	sent := time.Now()
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, "holding SIGTERM")
	kill(t, syscall.SIGHUP) // the child keeps getting other signals meanwhile
	r.expect("signal SIGHUP ")
	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "SIGTERM held for --term-delay")
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), "holding SIGTERM")
}

func TestTermDelayEndedBySecondTerm(t *testing.T) {
	r := start(t, Config{TermDelay: time.Hour}, "signals", "SIGTERM")
	r.expect("ready")
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, "holding SIGTERM")
	kill(t, syscall.SIGTERM)
	r.expect("signal SIGTERM ")
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), "reason=\"second SIGTERM received\"")
}

// The stop signal is the first SIGTERM, SIGINT or SIGQUIT, whichever the
// kubelet sends (the image's STOPSIGNAL): each is held for --term-delay,
// delivered as its rewrite, and arms --kill-after.
func TestStopSignalIsHeldAndArmsKillAfter(t *testing.T) {
	// The delay is long beside the test's own steps, so that a signal
	// forwarded at once comes visibly before it, even on a loaded machine;
	// --kill-after leaves the child, stalled as it may be, the time to say
	// which signal it got before the SIGKILL.
	const delay, after = 2 * time.Second, time.Second
	for _, tc := range []struct {
		sig     syscall.Signal
		rewrite map[syscall.Signal]syscall.Signal
		got     string // what the child gets
	}{
		{syscall.SIGQUIT, nil, "SIGQUIT"},
		{syscall.SIGINT, nil, "SIGINT"},
		{syscall.SIGQUIT, map[syscall.Signal]syscall.Signal{syscall.SIGQUIT: syscall.SIGTERM}, "SIGTERM"},
	} {
		t.Run(tc.got+" for "+signals.Name(tc.sig), func(t *testing.T) {
			// The child prints its signals and never exits of them: only
			// --kill-after ends it.
			r := start(t, Config{TermDelay: delay, KillAfter: after, Rewrite: tc.rewrite}, "signals")
			r.expect("ready")
			sent := time.Now()
			kill(t, tc.sig)
			got := r.signalTime(tc.got)
			assert.GreaterOrEqual(t, got.Sub(sent), delay, "%s held for --term-delay", signals.Name(tc.sig))
			assert.Equal(t, 137, r.wait(), "--kill-after armed by the delivery")
			// The delivery came delay after sent at the earliest (the
			// child's own clock says when it saw it, later), and the
			// SIGKILL after it.
			assert.GreaterOrEqual(t, time.Since(sent), delay+after, "SIGKILL --kill-after the delivery")
			assert.Empty(t, r.lines.Rest(t), "one signal delivered")
			assert.Regexp(t, `(?s)holding `+signals.Name(tc.sig)+` while the child keeps serving.*`+
				`delivering termination signal .*signal=`+signals.Name(tc.sig)+`.*reason="term delay elapsed".*`+
				`sending SIGKILL`, r.log.String())
		})
	}
}

// A second SIGTERM, SIGINT or SIGQUIT during the hold ends it: the held
// signal is delivered, as its rewrite, and the second is not (one stop, one
// signal: an HAProxy asked to stop softly with USR1 must not then get INT).
// Later ones are forwarded as usual.
func TestSecondStopSignalEndsTheHold(t *testing.T) {
	usr1 := map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGUSR1}
	for _, tc := range []struct {
		first, second syscall.Signal
		rewrite       map[syscall.Signal]syscall.Signal
		held          string // what the child gets at the end of the hold
		reason        string
	}{
		{syscall.SIGTERM, syscall.SIGINT, usr1, "SIGUSR1", "SIGINT received"},
		{syscall.SIGTERM, syscall.SIGQUIT, usr1, "SIGUSR1", "SIGQUIT received"},
		{syscall.SIGQUIT, syscall.SIGTERM, nil, "SIGQUIT", "SIGTERM received"},
		{syscall.SIGINT, syscall.SIGINT, nil, "SIGINT", "second SIGINT received"},
	} {
		t.Run(signals.Name(tc.first)+" then "+signals.Name(tc.second), func(t *testing.T) {
			r := start(t, Config{TermDelay: time.Hour, Rewrite: tc.rewrite}, "signals")
			r.expect("ready")
			kill(t, tc.first)
			waitLog(t, r.log, "holding "+signals.Name(tc.first))
			kill(t, tc.second)
			r.expect("signal " + tc.held + " ")
			waitLog(t, r.log, `reason="`+tc.reason+`"`)
			kill(t, syscall.SIGINT) // after the stop: forwarded as usual
			r.expect("signal SIGINT ")
			require.NoError(t, r.stdin.Close())
			assert.Equal(t, 0, r.wait())
			assert.Empty(t, r.lines.Rest(t), "nothing else reached the child")
		})
	}
}

func TestKillAfter(t *testing.T) {
	const after = 200 * time.Millisecond
	r := start(t, Config{KillAfter: after}, "ignore-term")
	r.expect("ready")
	sent := time.Now()
	kill(t, syscall.SIGTERM)
	assert.Equal(t, 137, r.wait())
	assert.GreaterOrEqual(t, time.Since(sent), after)
	assert.Contains(t, r.log.String(), "sending SIGKILL")
}

func TestKillAfterCountsFromTheDeliveredTerm(t *testing.T) {
	const delay, after = 200 * time.Millisecond, 200 * time.Millisecond
	r := start(t, Config{TermDelay: delay, KillAfter: after}, "ignore-term")
	r.expect("ready")
	sent := time.Now()
	kill(t, syscall.SIGTERM)
	assert.Equal(t, 137, r.wait())
	assert.GreaterOrEqual(t, time.Since(sent), delay+after)
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"/nonexistent"}, exitcode.NotFound},
		{[]string{"no-such-command-proxy-await"}, exitcode.NotFound},
		{[]string{"/proc/version"}, exitcode.NotExecutable},
		{[]string{"/"}, exitcode.NotExecutable},
	} {
		sigs := Notify()
		_, err := (&Supervisor{sigs: sigs, log: logging.Discard()}).Supervise(Config{Args: tc.args})
		Stop(sigs)
		var se *StartError
		require.ErrorAs(t, err, &se, "%v", tc.args)
		assert.Equal(t, tc.code, se.Code, "%v", tc.args)
	}
}

func waitLog(t *testing.T, log *testutil.Buffer, want string) {
	t.Helper()
	log.WaitFor(t, want, waitLimit)
}
