package readiness

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer serves h and counts the connections it accepts.
func countingServer(t *testing.T, h http.Handler) (string, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/ready", &conns
}

func TestProbesShareOneConnection(t *testing.T) {
	url, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	p, err := newProber(url, time.Second)
	require.NoError(t, err)
	defer p.close()
	for range 5 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	}
	assert.Equal(t, int64(1), conns.Load())
}

func TestProbeReconnectsWhenTheServerCloses(t *testing.T) {
	url, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = w.Write([]byte("ready\n"))
	}))
	p, err := newProber(url, time.Second)
	require.NoError(t, err)
	defer p.close()
	for range 3 {
		require.NoError(t, p.probe(context.Background()))
	}
	assert.Equal(t, int64(3), conns.Load())
}

func TestProbeReadsChunkedAndLargeBodies(t *testing.T) {
	body := strings.Repeat("x", 2*maxBody)
	url, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: chunked
		_, _ = w.Write([]byte(body))
	}))
	p, err := newProber(url, time.Second)
	require.NoError(t, err)
	defer p.close()
	require.NoError(t, p.probe(context.Background()))
	require.NoError(t, p.probe(context.Background()))
	assert.Equal(t, int64(2), conns.Load(), "a body over maxBody is not read to its end: the connection goes")
}

func TestProbeTimeoutMessage(t *testing.T) {
	url, _ := countingServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	p, err := newProber(url, 30*time.Millisecond)
	require.NoError(t, err)
	defer p.close()
	assert.EqualError(t, p.probe(context.Background()), "no answer within --probe-timeout 30ms")
}

func TestProbeEndsWithItsContext(t *testing.T) {
	url, _ := countingServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	p, err := newProber(url, time.Hour)
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	assert.Error(t, p.probe(ctx))
	assert.Less(t, time.Since(start), 10*time.Second, "a cancelled wait does not sit out --probe-timeout")
}

func TestHTTPSProbeVerifiesTheCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	p, err := newProber(srv.URL+"/ready", time.Second)
	require.NoError(t, err)
	defer p.close()
	_, isClient := p.(*clientProber)
	assert.True(t, isClient, "https goes through net/http")
	assert.ErrorContains(t, p.probe(context.Background()), "certificate")
}
