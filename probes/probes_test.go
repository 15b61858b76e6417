package probes

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// app is the pod's app as the checks reach it: it answers with status and
// notes each client's address.
type app struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	clients []netip.AddrPort
}

func newApp(t *testing.T) *app {
	a := &app{status: http.StatusOK}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.clients = append(a.clients, netip.MustParseAddrPort(r.RemoteAddr))
		if a.status == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(a.status)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *app) answer(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = status
}

func (a *app) seen() []netip.AddrPort {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]netip.AddrPort(nil), a.clients...)
}

func listen(t *testing.T, appProbe string) *Server {
	t.Helper()
	s, err := Listen(Options{Port: 0, App: appProbe, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// probe is what the kubelet sees: the status and the body.
func probe(t *testing.T, s *Server, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr().String()+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// statuses is the answer of /ready, /live and /startup, in that order.
func statuses(t *testing.T, s *Server) [3]int {
	var out [3]int
	for i, p := range []string{ReadyPath, LivePath, StartupPath} {
		out[i], _ = probe(t, s, http.MethodGet, p)
	}
	return out
}

func TestPhases(t *testing.T) {
	a := newApp(t)
	s := listen(t, a.URL+"/healthz")
	const ok, down = http.StatusOK, http.StatusServiceUnavailable

	// Waiting for the proxy: alive, not started, not ready.
	assert.Equal(t, [3]int{down, ok, down}, statuses(t, s))
	assert.Empty(t, a.seen(), "the app is checked only once it runs")

	s.Started()
	assert.Equal(t, [3]int{ok, ok, ok}, statuses(t, s))
	a.answer(http.StatusInternalServerError)
	assert.Equal(t, [3]int{down, down, down}, statuses(t, s))
	a.answer(http.StatusFound) // a redirect is not followed, and is not 2xx
	assert.Equal(t, [3]int{down, down, down}, statuses(t, s))
	a.answer(http.StatusNoContent)
	assert.Equal(t, [3]int{ok, ok, ok}, statuses(t, s))

	s.Stopping()
	assert.Equal(t, [3]int{down, ok, ok}, statuses(t, s))
	s.Started() // the stop signal is not undone
	assert.Equal(t, [3]int{down, ok, ok}, statuses(t, s))
}

func TestAnswers(t *testing.T) {
	a := newApp(t)
	s := listen(t, a.URL+"/")
	s.Started()
	code, body := probe(t, s, http.MethodGet, ReadyPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	code, _ = probe(t, s, http.MethodHead, LivePath)
	assert.Equal(t, http.StatusOK, code)
	code, _ = probe(t, s, http.MethodPost, ReadyPath)
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, _ = probe(t, s, http.MethodGet, "/ready/more")
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = probe(t, s, http.MethodGet, "/healthz")
	assert.Equal(t, http.StatusNotFound, code)

	a.answer(http.StatusTeapot)
	code, body = probe(t, s, http.MethodGet, StartupPath)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "the app's check answered 418 I'm a teapot\n", body)
}

func TestAppGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	for _, appProbe := range []string{"http://" + addr + "/", "tcp:" + strings.Split(addr, ":")[1]} {
		s := listen(t, appProbe)
		s.Started()
		code, body := probe(t, s, http.MethodGet, LivePath)
		assert.Equal(t, http.StatusServiceUnavailable, code, appProbe)
		assert.Contains(t, body, "connection refused", appProbe)
	}
}

func TestTCPCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	peers := make(chan netip.AddrPort, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- netip.MustParseAddrPort(c.RemoteAddr().String())
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s := listen(t, "tcp:"+port)
	s.Started()
	assert.Equal(t, [3]int{200, 200, 200}, statuses(t, s))
	for range 3 {
		assert.True(t, s.Own(<-peers), "each check's connection is proxy-await's own")
	}
}

func TestWithoutAppProbe(t *testing.T) {
	s := listen(t, "")
	assert.Equal(t, [3]int{503, 200, 503}, statuses(t, s))
	s.Started()
	assert.Equal(t, [3]int{200, 200, 200}, statuses(t, s))
	s.Stopping()
	assert.Equal(t, [3]int{503, 200, 200}, statuses(t, s))
}

// The app sees the checks come from addresses that Own knows, and nobody
// else's.
func TestOwn(t *testing.T) {
	a := newApp(t)
	s := listen(t, a.URL+"/")
	s.Started()
	statuses(t, s)
	seen := a.seen()
	require.Len(t, seen, 3)
	for _, c := range seen {
		assert.True(t, s.Own(c), c.String())
	}
	resp, err := http.Get(a.URL)
	require.NoError(t, err)
	resp.Body.Close()
	other := a.seen()[3]
	assert.False(t, s.Own(other), "a client of the app that is not proxy-await: %s", other)
	assert.False(t, s.Own(netip.MustParseAddrPort("[::ffff:127.0.0.1]:1")))
}
