package readiness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// endpoint is a readiness endpoint that is ready after notReady probes.
type endpoint struct {
	notReady int64
	probes   atomic.Int64
	mu       sync.Mutex
	times    []time.Time
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	e.times = append(e.times, time.Now())
	e.mu.Unlock()
	if e.probes.Add(1) <= e.notReady {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/ready"
}

func opts(urls ...string) Options {
	return Options{URLs: urls, MaxInterval: 20 * time.Millisecond, ProbeTimeout: time.Second, Logger: logging.Discard()}
}

func TestFirstProbeAtOnce(t *testing.T) {
	e := &endpoint{}
	require.NoError(t, Await(context.Background(), opts(serve(t, e))))
	assert.Equal(t, int64(1), e.probes.Load(), "a ready proxy is probed once")
}

func TestIntervalSchedule(t *testing.T) {
	var got []time.Duration
	var d time.Duration
	for range 7 {
		d = nextInterval(d, 50*time.Millisecond)
		got = append(got, d)
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms, 50 * ms}, got)
	assert.Equal(t, 2*ms, nextInterval(0, 2*ms), "the ceiling applies to the first interval too")
}

func TestProbesUntilReadyWithGrowingIntervals(t *testing.T) {
	e := &endpoint{notReady: 5}
	require.NoError(t, Await(context.Background(), opts(serve(t, e))))
	require.Equal(t, int64(6), e.probes.Load())
	// The pauses are at least the schedule's (timers never fire early).
	want := []time.Duration{5, 10, 20, 20, 20}
	for i := 1; i < len(e.times); i++ {
		assert.GreaterOrEqual(t, e.times[i].Sub(e.times[i-1]), want[i-1]*time.Millisecond, "pause %d", i)
	}
}

func TestRedirectIsNotReady(t *testing.T) {
	var followed atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) { followed.Store(true) })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Await(ctx, opts(serve(t, mux)))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, followed.Load(), "a redirect must never be followed")
}

func TestEveryURLMustBeReady(t *testing.T) {
	a, b := &endpoint{}, &endpoint{notReady: 1 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, Await(ctx, opts(serve(t, a), serve(t, b))), context.DeadlineExceeded)
	assert.Equal(t, int64(1), a.probes.Load(), "a ready URL is not probed again")

	c, d := &endpoint{notReady: 3}, &endpoint{notReady: 1}
	require.NoError(t, Await(context.Background(), opts(serve(t, c), serve(t, d))))
	assert.Equal(t, int64(4), c.probes.Load())
	assert.Equal(t, int64(2), d.probes.Load())
}

func TestProbeTimeout(t *testing.T) {
	var probes atomic.Int64
	hang := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		<-r.Context().Done()
	})
	o := opts(serve(t, hang))
	o.ProbeTimeout = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, Await(ctx, o), context.DeadlineExceeded)
	assert.Greater(t, probes.Load(), int64(1), "a probe that hangs is abandoned and sent again")
}

func TestProgressIsLogged(t *testing.T) {
	var buf testutil.Buffer
	o := opts(serve(t, &endpoint{notReady: 1 << 30}))
	o.ProgressEvery = 20 * time.Millisecond
	o.Logger = logging.New(&buf, "text", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = Await(ctx, o)
	assert.Contains(t, buf.String(), "proxy-await: still waiting for the proxy url=")
	assert.Contains(t, buf.String(), `error="answered 503 Service Unavailable"`)
	assert.Contains(t, buf.String(), "(hint: set --timeout to stop waiting forever)")
}

func TestEnvironmentProxyIgnored(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	require.NoError(t, Await(context.Background(), opts(serve(t, &endpoint{}))))
}
