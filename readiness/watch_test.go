package readiness

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/proxyloss"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// switchable is a readiness endpoint whose answer the test sets, and which
// tells each probe it answered on probes.
type switchable struct {
	status atomic.Int64
	probes chan int // the status of each answer, as it is sent
}

func newSwitchable(status int) *switchable {
	s := &switchable{probes: make(chan int, 1024)}
	s.status.Store(int64(status))
	return s
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	status := int(s.status.Load())
	w.WriteHeader(status)
	_, _ = w.Write([]byte("ready\n"))
	s.probes <- status
}

// answered waits for the next n probes, each answered status.
func (s *switchable) answered(t *testing.T, n, status int) {
	t.Helper()
	for range n {
		select {
		case got := <-s.probes:
			require.Equal(t, status, got, "a probe answered another status")
		case <-time.After(bound):
			t.Fatalf("no probe within %s", bound)
		}
	}
}

// watchLog is a watch's log, in text.
func watchLog() (*testutil.Buffer, WatchOptions) {
	buf := &testutil.Buffer{}
	return buf, WatchOptions{ProbeTimeout: bound, Logger: logging.New(buf, "text", -4)}
}

// startWatch runs Watch with opts until the test ends.
func startWatch(t *testing.T, opts WatchOptions) *Watcher {
	w := Watch(opts)
	t.Cleanup(w.Stop)
	return w
}

// loss waits for the watch's loss.
func loss(t *testing.T, w *Watcher) proxyloss.Loss {
	t.Helper()
	select {
	case l := <-w.Lost():
		return l
	case <-time.After(bound):
		t.Fatalf("no loss within %s", bound)
		return proxyloss.Loss{}
	}
}

// noLoss fails the test if the watch has reported a loss.
func noLoss(t *testing.T, w *Watcher, why string) {
	t.Helper()
	select {
	case l := <-w.Lost():
		t.Fatalf("%s, yet the watch lost %s after %s: %v", why, l.URL, l.Failing, l.Err)
	default:
	}
}

func lines(buf *testutil.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// A proxy that answers 503 from some point on is lost once every probe has
// failed for --proxy-lost, and not before.
func TestWatchLosesAProxyThatTurnsNotReady(t *testing.T) {
	ep := newSwitchable(http.StatusOK)
	url := serve(t, ep)
	buf, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{url}, []string{url}, 300*time.Millisecond
	w := startWatch(t, opts)
	ep.answered(t, 2, http.StatusOK)
	ep.status.Store(http.StatusServiceUnavailable)
	ep.answered(t, 1, http.StatusServiceUnavailable)
	failedAt := time.Now()

	l := loss(t, w)
	assert.GreaterOrEqual(t, time.Since(failedAt), 300*time.Millisecond-watchInterval(opts.Lost),
		"lost before --proxy-lost had passed since the first failed probe")
	assert.GreaterOrEqual(t, l.Failing, 300*time.Millisecond)
	assert.Equal(t, url, l.URL)
	var status *StatusError
	require.ErrorAs(t, l.Err, &status)
	assert.Equal(t, http.StatusServiceUnavailable, status.Code)
	assert.Equal(t, []string{
		`proxy-await: debug: watching the proxy url=` + url + ` proxy_lost=300ms`,
		`proxy-await: warning: proxy not ready: the command is stopped if this lasts --proxy-lost url=` + url +
			` proxy_lost=300ms error="answered 503 Service Unavailable"`,
	}, lines(buf))
}

// A failure shorter than --proxy-lost is forgiven, and the next one counts
// from its own start.
func TestWatchForgivesAShortFailure(t *testing.T) {
	ep := newSwitchable(http.StatusOK)
	url := serve(t, ep)
	buf, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{url}, []string{url}, time.Second
	w := startWatch(t, opts)
	ep.answered(t, 1, http.StatusOK)
	ep.status.Store(http.StatusServiceUnavailable)
	ep.answered(t, 1, http.StatusServiceUnavailable)
	ep.status.Store(http.StatusOK)
	ep.answered(t, 1, http.StatusOK)
	noLoss(t, w, "the proxy failed for one probe")

	ep.status.Store(http.StatusServiceUnavailable)
	l := loss(t, w)
	assert.GreaterOrEqual(t, l.Failing, time.Second)
	log := lines(buf)
	require.Len(t, log, 4, "log:\n%s", buf.String())
	assert.Regexp(t, `^proxy-await: proxy ready again url=`+url+` failing=\d+ms$`, log[2])
	assert.Equal(t, log[1], log[3], "the second failure is logged as the first")
}

// A proxy that is gone refuses the connection: that is a failed probe too.
func TestWatchLosesAProxyThatExits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	url := srv.URL + "/ready"
	_, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{url}, []string{url}, 200*time.Millisecond
	w := startWatch(t, opts)
	srv.Close()
	l := loss(t, w)
	assert.True(t, errors.Is(l.Err, syscall.ECONNREFUSED), "%v", l.Err)
	assert.Equal(t, "connection refused", l.Err.Error())
}

// A URL that was not ready when the command started (--timeout-fatal=false)
// is not lost before it has been ready: its failures count from its first
// 2xx.
func TestWatchCountsFromTheFirstReadyAnswer(t *testing.T) {
	ep := newSwitchable(http.StatusServiceUnavailable)
	url := serve(t, ep)
	buf, opts := watchLog()
	opts.URLs, opts.Lost = []string{url}, 200*time.Millisecond
	w := startWatch(t, opts)
	// Five probes, 100 ms apart: more than --proxy-lost of failures.
	ep.answered(t, 5, http.StatusServiceUnavailable)
	noLoss(t, w, "the proxy was never ready")
	assert.Empty(t, buf.String())

	ep.status.Store(http.StatusOK)
	ep.answered(t, 1, http.StatusOK)
	ep.status.Store(http.StatusServiceUnavailable)
	loss(t, w)
	assert.Equal(t, `proxy-await: debug: watching the proxy url=`+url+` proxy_lost=200ms`, lines(buf)[0])
}

// With several proxies, losing any one is a loss: the others still answer.
func TestWatchLosesAnyOneProxy(t *testing.T) {
	healthy, failing := newSwitchable(http.StatusOK), newSwitchable(http.StatusOK)
	healthyURL, failingURL := serve(t, healthy), serve(t, failing)
	_, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{healthyURL, failingURL}, []string{healthyURL, failingURL}, 200*time.Millisecond
	w := startWatch(t, opts)
	failing.status.Store(http.StatusServiceUnavailable)
	l := loss(t, w)
	assert.Equal(t, failingURL, l.URL)
	assert.NotEmpty(t, healthy.probes, "the other proxy was probed meanwhile")
}

// A probe that hangs is cut by --probe-timeout, and counts as failed.
func TestWatchProbesAreBoundedByTheProbeTimeout(t *testing.T) {
	var hang atomic.Bool
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	}))
	_, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost, opts.ProbeTimeout = []string{url}, []string{url}, 300*time.Millisecond, 100*time.Millisecond
	w := startWatch(t, opts)
	hang.Store(true)
	l := loss(t, w)
	assert.Equal(t, "no answer within --probe-timeout 100ms", l.Err.Error())
}

// A healthy proxy costs one connection for the whole run, not one a probe.
func TestWatchKeepsItsConnection(t *testing.T) {
	ep := newSwitchable(http.StatusOK)
	url, conns := countingServer(t, ep)
	_, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{url}, []string{url}, 100*time.Millisecond
	startWatch(t, opts)
	ep.answered(t, 5, http.StatusOK)
	assert.Equal(t, int64(1), conns.Load())
}

// Stop ends the probes: no goroutine of the watch is left, its
// connection's included, and a nil Watcher is a watch of nothing.
func TestWatchStop(t *testing.T) {
	ep := newSwitchable(http.StatusOK)
	url := serve(t, ep)
	_, opts := watchLog()
	opts.URLs, opts.Ready, opts.Lost = []string{url}, []string{url}, 100*time.Millisecond
	before := runtime.NumGoroutine()
	w := Watch(opts)
	ep.answered(t, 2, http.StatusOK)
	ep.status.Store(http.StatusServiceUnavailable)
	w.Stop()
	w.Stop()
	if !testutil.Until(bound, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left after Stop (%d before):\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
	noLoss(t, w, "the watch was stopped")

	var none *Watcher
	assert.Nil(t, none.Lost())
	none.Stop()
}

func TestWatchInterval(t *testing.T) {
	for after, want := range map[time.Duration]time.Duration{
		time.Minute:            time.Second,
		2 * time.Second:        time.Second,
		time.Second:            500 * time.Millisecond,
		200 * time.Millisecond: 100 * time.Millisecond,
		time.Millisecond:       10 * time.Millisecond,
	} {
		assert.Equal(t, want, watchInterval(after), "--proxy-lost %s", after)
	}
}
