package shutdown

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// answers serves the given statuses in turn, repeating the last one.
type answers struct {
	statuses []int
	posts    atomic.Int64
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	n := int(a.posts.Add(1)) - 1
	status := a.statuses[min(n, len(a.statuses)-1)]
	if status == http.StatusFound {
		w.Header().Set("Location", "/elsewhere")
	}
	w.WriteHeader(status)
}

func post(t *testing.T, timeout time.Duration, urls ...string) (error, string) {
	var buf testutil.Buffer
	err := Post(context.Background(), urls, timeout, logging.New(&buf, "text", 0))
	return err, buf.String()
}

func server(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/shutdown"
}

func TestAccepted(t *testing.T) {
	a := &answers{statuses: []int{200}}
	err, log := post(t, time.Second, server(t, a))
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.posts.Load())
	assert.Contains(t, log, "proxy shutdown requested")
	assert.Contains(t, log, "status=200")
}

func TestServerErrorsAreRetried(t *testing.T) {
	a := &answers{statuses: []int{503, 500, 200}}
	err, _ := post(t, 5*time.Second, server(t, a))
	require.NoError(t, err)
	assert.Equal(t, int64(3), a.posts.Load())
}

func TestServerErrorsUntilTheDeadline(t *testing.T) {
	a := &answers{statuses: []int{503}}
	err, log := post(t, 300*time.Millisecond, server(t, a))
	require.Error(t, err)
	assert.Greater(t, a.posts.Load(), int64(1))
	assert.Contains(t, log, "proxy shutdown failed")
	assert.Contains(t, log, "503 Service Unavailable")
}

func TestNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var followed atomic.Bool
			a := &answers{statuses: []int{status}}
			mux := http.NewServeMux()
			mux.Handle("/shutdown", a)
			mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Store(true) })
			err, log := post(t, 5*time.Second, server(t, mux))
			require.Error(t, err)
			assert.Equal(t, int64(1), a.posts.Load(), "not retried")
			assert.False(t, followed.Load(), "a redirect is never followed")
			assert.Contains(t, log, "error: proxy shutdown failed")
			assert.Contains(t, log, fmt.Sprintf("status=%d", status))
		})
	}
}

func TestRefusedMeansGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	start := time.Now()
	err, log := post(t, 5*time.Second, "http://"+addr+"/shutdown")
	require.NoError(t, err, "a proxy that is gone already needs no shutdown")
	assert.Less(t, time.Since(start), 4*time.Second, "a refused connection is not retried until the deadline")
	assert.Equal(t, 1, strings.Count(log, "proxy already gone"), "logged once")
	assert.NotContains(t, log, "error:")
}

func TestHangingProxyGivesUpInTime(t *testing.T) {
	var posts atomic.Int64
	hang := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		<-r.Context().Done()
	})
	start := time.Now()
	err, log := post(t, 1500*time.Millisecond, server(t, hang))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second, "gives up at --shutdown-timeout")
	assert.GreaterOrEqual(t, posts.Load(), int64(2), "an attempt that times out is retried")
	assert.Contains(t, log, "gave up after --shutdown-timeout")
}

func TestEveryURLIsPosted(t *testing.T) {
	a, b := &answers{statuses: []int{200}}, &answers{statuses: []int{404}}
	err, _ := post(t, time.Second, server(t, a), server(t, b))
	require.Error(t, err)
	assert.Equal(t, int64(1), a.posts.Load())
	assert.Equal(t, int64(1), b.posts.Load())
}

func TestLibraryLogsOnlyAtDebug(t *testing.T) {
	a := &answers{statuses: []int{503, 200}}
	err, log := post(t, 5*time.Second, server(t, a))
	require.NoError(t, err)
	assert.NotContains(t, log, "[DEBUG]")
	assert.NotContains(t, log, "retrying")
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		assert.True(t, strings.HasPrefix(line, "proxy-await: "), "stray line %q", line)
	}

	var buf testutil.Buffer
	require.NoError(t, Post(context.Background(), []string{server(t, &answers{statuses: []int{500, 200}})},
		5*time.Second, logging.New(&buf, "text", -4)))
	assert.Contains(t, buf.String(), "proxy-await: debug: shutdown: retrying request")
}
