package wrapper

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proxyloss"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// fakeWatch is a watch of the proxy whose loss the test reports.
type fakeWatch struct {
	lost    chan proxyloss.Loss
	stopped atomic.Int32 // calls of Stop
}

func newFakeWatch() *fakeWatch { return &fakeWatch{lost: make(chan proxyloss.Loss, 1)} }

func (w *fakeWatch) Lost() <-chan proxyloss.Loss { return w.lost }
func (w *fakeWatch) Stop()                       { w.stopped.Add(1) }

// lose reports the loss of the proxy at url, as readiness.Watch does.
func (w *fakeWatch) lose() {
	w.lost <- proxyloss.Loss{URL: "http://127.0.0.1:4191/ready", Failing: 2 * time.Second, Err: errors.New("connection refused")}
}

const (
	childStarted = `proxy-await: debug: child started child_pid=*`
	lostLine     = `proxy-await: error: proxy lost: stopping the command, then exiting 69 url=http://127.0.0.1:4191/ready failing=* error="connection refused"`
)

// A loss while the child serves stops it at once, with SIGTERM as its
// rewrite, and the run exits 69 whatever the child's code: --term-delay
// does not hold it (the proxy is gone, so serving longer only fails
// requests).
func TestProxyLostStopsTheChild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		args    []string
		got     string // the signal the child gets
		forward string // its line in the log
	}{
		{"SIGTERM", Config{}, []string{"exit-on", "0", "SIGTERM"}, "SIGTERM",
			`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="proxy lost"`},
		{"child exits 3", Config{}, []string{"exit-on", "3", "SIGTERM"}, "SIGTERM",
			`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="proxy lost"`},
		{"rewritten", Config{Rewrite: map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGUSR1}},
			[]string{"exit-on", "0", "SIGUSR1"}, "SIGUSR1",
			`proxy-await: delivering termination signal signal=SIGTERM child_pid=* as=SIGUSR1 reason="proxy lost"`},
		{"not held", Config{TermDelay: time.Hour}, []string{"exit-on", "0", "SIGTERM"}, "SIGTERM",
			`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="proxy lost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFakeWatch()
			tc.cfg.Proxy = w
			r := start(t, tc.cfg, tc.args[0], tc.args[1:]...)
			r.expect("ready")
			w.lose()
			r.expect("signal " + tc.got + " ")
			assert.Equal(t, 69, r.wait())
			code := tc.args[1]
			assert.Equal(t, []string{childStarted, lostLine, tc.forward, "proxy-await: child exited child_pid=* exit_code=" + code}, testutil.LogLines(r.log.String()))
			assert.Equal(t, int32(1), w.stopped.Load(), "the watch ended at the loss")
		})
	}
}

// --kill-after counts from the loss's stop, and a stop signal that comes
// after it is forwarded as any later signal: the kubelet's TERM, once the
// pod fails, reaches the child too.
func TestProxyLostThenStopSignal(t *testing.T) {
	w := newFakeWatch()
	r := start(t, Config{Proxy: w, KillAfter: time.Second, TermDelay: time.Hour}, "signals")
	r.expect("ready")
	lost := time.Now()
	w.lose()
	r.expect("signal SIGTERM ")
	kill(t, syscall.SIGTERM)
	r.expect("signal SIGTERM ")
	assert.Equal(t, 69, r.wait(), "killed by SIGKILL, and still 69")
	assert.GreaterOrEqual(t, time.Since(lost), time.Second, "--kill-after from the loss")
	assert.Equal(t, []string{
		childStarted,
		lostLine,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="proxy lost"`,
		`proxy-await: forwarding signal signal=SIGTERM child_pid=*`,
		`proxy-await: warning: child still running after the termination signal: sending SIGKILL child_pid=* kill_after=1s`,
		`proxy-await: child killed by signal child_pid=* signal=SIGKILL exit_code=137`,
	}, testutil.LogLines(r.log.String()))
}

// A stop signal before the loss ends the watch: the proxy may be shutting
// down then, and a loss that the watch still reports is not acted on. The
// run exits with the child's code.
func TestStopSignalEndsTheWatch(t *testing.T) {
	w := newFakeWatch()
	r := start(t, Config{Proxy: w, TermDelay: time.Hour}, "signals")
	r.expect("ready")
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, "holding SIGTERM")
	assert.Equal(t, int32(1), w.stopped.Load(), "the watch ended at the stop signal")
	w.lose() // as a watch whose loss raced the signal would
	kill(t, syscall.SIGTERM)
	r.expect("signal SIGTERM ")
	require.NoError(t, r.stdin.Close())
	assert.Equal(t, 0, r.wait())
	assert.Equal(t, []string{
		childStarted,
		`proxy-await: debug: no longer watching the proxy: the stop signal arrived`,
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1h0m0s`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=* reason="second SIGTERM received"`,
		`proxy-await: child exited child_pid=* exit_code=0`,
	}, testutil.LogLines(r.log.String()))
}

// A child that exits by itself ends the watch too.
func TestChildExitEndsTheWatch(t *testing.T) {
	w := newFakeWatch()
	r := start(t, Config{Proxy: w}, "exit", "3")
	assert.Equal(t, 3, r.wait())
	assert.Equal(t, int32(1), w.stopped.Load())
}
