package readiness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/answer"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

func TestMain(m *testing.M) {
	cleanup := testutil.TrustTestServers()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// bound is how long a probe may take in tests where it must not time out: a
// probe that waited for what it must not wait for fails with a timeout.
const bound = 10 * time.Second

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

func probeOnce(t *testing.T, url string, timeout time.Duration) error {
	p, err := newProber(url, timeout)
	require.NoError(t, err)
	defer p.close()
	return p.probe(context.Background())
}

func TestProbesShareOneConnection(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"sized body": func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		},
		"chunked body and trailer": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Trailer", "X-Why")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not "))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("ready\n"))
			w.Header().Set("X-Why", "starting")
		},
		"no body": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		},
		// Each answer has a 64 KiB bound of its own: five of 40 KiB
		// are 200 KiB on one connection.
		"40 KiB body": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(40<<10))
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(make([]byte, 40<<10))
		},
	} {
		t.Run(name, func(t *testing.T) {
			url, conns := countingServer(t, h)
			p, err := newProber(url, bound)
			require.NoError(t, err)
			defer p.close()
			for range 5 {
				assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
			}
			assert.Equal(t, int64(1), conns.Load())
		})
	}
}

func TestProbeReconnectsWhenTheServerCloses(t *testing.T) {
	url, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	p, err := newProber(url, bound)
	require.NoError(t, err)
	defer p.close()
	for range 3 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	}
	assert.Equal(t, int64(3), conns.Load())
}

func TestProbeDropsAConnectionWithALargeBody(t *testing.T) {
	body := strings.Repeat("x", 2*64<<10)
	url, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.(http.Flusher).Flush() // no Content-Length: chunked
		_, _ = w.Write([]byte(body))
	}))
	p, err := newProber(url, bound)
	require.NoError(t, err)
	defer p.close()
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	assert.Equal(t, int64(2), conns.Load(), "a body over 64 KiB is not read to its end: the connection goes")
}

// What follows an answer that cannot keep the connection is not waited
// for: a body that ends only with the connection, or another protocol.
// The status decides at once.
func TestProbeDoesNotWaitForWhatCannotKeepTheConnection(t *testing.T) {
	for answer, want := range map[string]string{
		"HTTP/1.1 503 Service Unavailable\r\n\r\nnot ":                                          "answered 503 Service Unavailable",
		"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n": "answered 101 Switching Protocols",
	} {
		addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
			if testutil.ReadRequest(r) != nil {
				_, _ = io.WriteString(conn, answer)
				_, _ = io.Copy(io.Discard, conn) // the rest never comes
			}
		})
		start := time.Now()
		assert.EqualError(t, probeOnce(t, "http://"+addr+"/ready", bound), want)
		assert.Less(t, time.Since(start), bound, "%s: the probe does not sit out --probe-timeout", want)
	}
}

// endless writes chunk to conn until the client closes the connection, and
// says so on closed.
func endless(conn net.Conn, chunk []byte, closed chan<- struct{}) {
	for {
		if _, err := conn.Write(chunk); err != nil {
			close(closed)
			return
		}
	}
}

// An endless header, in the answer or after a 1xx answer, fails the probe
// at 64 KiB, and never reaches net/http's header parser, which would
// allocate several times what it reads.
func TestEndlessHeaderCostsBoundedMemory(t *testing.T) {
	// Not 2xx: a 2xx decides without its body, but its headers are read.
	for name, head := range map[string]string{
		"answer":      "HTTP/1.1 503 Service Unavailable\r\nX-Endless: ",
		"after a 1xx": "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nX-Endless: ",
	} {
		t.Run(name, func(t *testing.T) {
			closed := make(chan struct{})
			chunk := []byte(strings.Repeat("a", 32<<10))
			addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
				if testutil.ReadRequest(r) == nil {
					return
				}
				_, _ = io.WriteString(conn, head)
				endless(conn, chunk, closed)
			})
			p, err := newProber("http://"+addr+"/ready", bound)
			require.NoError(t, err)
			defer p.close()

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err = p.probe(context.Background())
			runtime.ReadMemStats(&after)
			assert.EqualError(t, err, "answer larger than 64 KiB")
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("one probe against an endless header allocated %d KiB", allocated>>10)
			assert.Less(t, allocated, uint64(128<<10), "an endless header costs 64 KiB and a little")
			<-closed // the connection is closed: the server's next write failed
		})
	}
}

func TestEndlessInformationalAnswers(t *testing.T) {
	closed := make(chan struct{})
	addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) != nil {
			endless(conn, []byte(strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 1000)), closed)
		}
	})
	assert.EqualError(t, probeOnce(t, "http://"+addr+"/ready", bound), "answer larger than 64 KiB")
	<-closed
}

// A 2xx status line decides: neither a huge body nor a slow one holds the
// probe back (it has a long timeout, which it would hit if it waited).
func TestReadyDoesNotWaitForTheBody(t *testing.T) {
	for name, answer := range map[string]func(net.Conn, chan<- struct{}){
		"100 MB body": func(conn net.Conn, closed chan<- struct{}) {
			_, _ = fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 100<<20)
			endless(conn, make([]byte, 1<<20), closed)
		},
		"slow drip": func(conn net.Conn, closed chan<- struct{}) {
			_, _ = fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nr\r\n")
			<-time.After(time.Hour) // the next byte never comes before the client leaves
		},
	} {
		t.Run(name, func(t *testing.T) {
			closed := make(chan struct{}, 1)
			addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
				if testutil.ReadRequest(r) != nil {
					answer(conn, closed)
				}
			})
			start := time.Now()
			require.NoError(t, probeOnce(t, "http://"+addr+"/ready", bound))
			t.Logf("ready after %s", time.Since(start))
		})
	}
}

// An unsolicited 100 Continue before the answer must not leave the answer
// in the connection for the next probe to read.
func TestInformationalAnswersAreSkipped(t *testing.T) {
	addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		answers := []string{
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nContent-Length: 10\r\n\r\nnot ready\n",
			"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nready\n",
		}
		for _, a := range answers {
			if testutil.ReadRequest(r) == nil {
				return
			}
			_, _ = conn.Write([]byte(a))
		}
	})
	p, err := newProber("http://"+addr+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	assert.EqualError(t, p.probe(context.Background()), "answered 500 Internal Server Error")
	assert.NoError(t, p.probe(context.Background()))
	assert.Equal(t, int64(1), conns.Load(), "one kept-alive connection throughout")
}

func TestProbeSendsTheURLsCredentials(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if user, pass, ok := r.BasicAuth(); !ok || user != "probe" || pass != "s3cret:x" {
					http.Error(w, "who are you", http.StatusUnauthorized)
				}
			})
			srv := httptest.NewUnstartedServer(h)
			if scheme == "https" {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			authed := strings.Replace(srv.URL, "://", "://probe:s3cret%3Ax@", 1) + "/ready"
			assert.NoError(t, probeOnce(t, authed, bound))
			assert.EqualError(t, probeOnce(t, srv.URL+"/ready", bound), "answered 401 Unauthorized")
		})
	}
}

func TestProbeTimeoutMessage(t *testing.T) {
	url, _ := countingServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	assert.EqualError(t, probeOnce(t, url, 30*time.Millisecond), "no answer within --probe-timeout 30ms")
}

func TestProbeErrorsInPlainWords(t *testing.T) {
	assert.EqualError(t, probeOnce(t, refusingURL(t), bound), "connection refused")

	addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		testutil.ReadRequest(r)
		conn.(*net.TCPConn).SetLinger(0) // close with a reset
	})
	assert.EqualError(t, probeOnce(t, "http://"+addr+"/ready", bound), "connection reset")
}

// A context that ends while the probe waits for its answer ends the probe:
// the context ends once the request has arrived, so the probe is under way.
func TestProbeEndsWithItsContext(t *testing.T) {
	arrived := make(chan struct{})
	url, _ := countingServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	p, err := newProber(url, bound)
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	assert.ErrorIs(t, p.probe(ctx), context.Canceled)
	assert.Less(t, time.Since(start), bound, "a cancelled wait does not sit out --probe-timeout")
}

// deadlineOnly is a context whose deadline has passed while Err and Done do
// not show it yet: the moment between a timer's expiry and its context's
// cancellation, which a dial can see on a loaded machine.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }

// A probe cut by the wait's own deadline (--timeout) is not a probe that got
// no answer within --probe-timeout: the wait ended, and it says so.
func TestProbeCutByTheWaitDeadline(t *testing.T) {
	url, _ := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	p, err := newProber(url, time.Hour)
	require.NoError(t, err)
	defer p.close()
	ctx := deadlineOnly{context.Background(), time.Now().Add(-time.Millisecond)}
	assert.Equal(t, context.DeadlineExceeded, p.probe(ctx))
}

func TestHTTPSProbes(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p, err := newProber(srv.URL+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	for range 3 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	}
	assert.Equal(t, int64(1), conns.Load(), "https probes share one connection too")

	// The handshake's deadline is not the connection's: a probe sent once
	// the first one's --probe-timeout has passed, counted from its start,
	// still goes out on it. The timeout is what is tested, and a second
	// leaves a TLS handshake under -race on a loaded machine its time,
	// which a tenth of one did not.
	const timeout = time.Second
	p, err = newProber(srv.URL+"/ready", timeout)
	require.NoError(t, err)
	defer p.close()
	began := time.Now()
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	time.Sleep(time.Until(began.Add(timeout + 10*time.Millisecond)))
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	assert.Equal(t, int64(2), conns.Load(), "one connection for the second prober's two probes")

	bad := testutil.NewUntrustedTLSServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	assert.EqualError(t, probeOnce(t, bad.URL+"/ready", bound), "TLS: certificate signed by unknown authority")
}

// silentListener is a loopback port that completes TCP connections and then
// says nothing: the kernel accepts them into the listen queue, and no one
// ever reads or writes. listen starts it; before, the port refuses every
// connection, as a proxy that has not bound its port yet.
func silentListener(t *testing.T) (addr string, listen func()) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	require.NoError(t, unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := unix.Getsockname(fd)
	require.NoError(t, err)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	return addr, func() { require.NoError(t, unix.Listen(fd, 1024)) }
}

// A TLS handshake that never finishes is reported as that, not as an answer
// that never came; over http:// the same port gets no answer. The probe
// timeout is long beside a connect on loopback, which a loaded machine may
// stall: a connect cut by it would be no answer at all.
func TestTLSHandshakeThatNeverFinishes(t *testing.T) {
	addr, listen := silentListener(t)
	listen()
	for scheme, want := range map[string]string{
		"https": "TLS handshake did not finish within --probe-timeout 1s",
		"http":  "no answer within --probe-timeout 1s",
	} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			assert.EqualError(t, probeOnce(t, scheme+"://"+addr+"/ready", time.Second), want)
		})
	}
}

// A proxy that closes its kept-alive connection after each answer, without
// "Connection: close" (as an HTTP/1.1 server may): every probe still gets
// the answer, on a new connection, instead of every other one failing on
// the closed one.
func TestProbeRetriesAConnectionClosedSinceTheLastAnswer(t *testing.T) {
	addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) != nil {
			_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 10\r\n\r\nnot ready\n")
		}
	})
	p, err := newProber("http://"+addr+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	for i := range 5 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable", "probe %d", i+1)
	}
	assert.Equal(t, int64(5), conns.Load(), "one connection a probe")

	// A new connection closed before an answer is the probe's failure: it is
	// not sent again.
	closing, conns := testutil.RawServer(t, func(_ net.Conn, r *bufio.Reader) { testutil.ReadRequest(r) })
	assert.EqualError(t, probeOnce(t, "http://"+closing+"/ready", bound), "connection closed before an answer")
	assert.Equal(t, int64(1), conns.Load())
}

// A proxy that closes a kept-alive connection as the next request comes
// in, rather than answer it (its idle timeout ran out as the request
// arrived): the probe is sent again on a new connection, once, and gets
// its answer there.
func TestProbeRetriesAConnectionClosedOnTheRequest(t *testing.T) {
	addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) != nil {
			_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 10\r\n\r\nnot ready\n")
		}
		testutil.ReadRequest(r) // then close, unanswered
	})
	p, err := newProber("http://"+addr+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	for i := range 5 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable", "probe %d", i+1)
	}
	assert.Equal(t, int64(5), conns.Load(), "each connection answers one probe and fails the next")
}

// Bytes past an answer, which no request asked for (a second answer to one
// request), are not taken for the next probe's answer: the connection they
// came on goes.
func TestProbeDropsAConnectionWithBytesPastTheAnswer(t *testing.T) {
	addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		unasked := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
		for testutil.ReadRequest(r) != nil {
			_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"+unasked)
			unasked = ""
		}
	})
	p, err := newProber("http://"+addr+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	for i := range 3 {
		assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable", "probe %d", i+1)
	}
	assert.Equal(t, int64(3), conns.Load(), "one connection a probe")
}

// A 2xx decides once its status line and headers are read: a connection
// closed or reset right after them, or a body that never comes, still make
// the URL ready. A status line alone is not an answer, nor is one that
// net/http does not read as HTTP.
func TestSuccessHeadDecides(t *testing.T) {
	for name, tc := range map[string]struct {
		head  string
		after func(net.Conn)
	}{
		"200 then close":                     {"HTTP/1.1 200 OK\r\n\r\n", func(net.Conn) {}},
		"204 then reset":                     {"HTTP/1.0 204 No Content\r\n\r\n", func(c net.Conn) { _ = c.(*net.TCPConn).SetLinger(0) }},
		"200 without a reason, then nothing": {"HTTP/1.1 200\r\nContent-Type: text/plain\r\n\r\n", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }},
	} {
		t.Run(name, func(t *testing.T) {
			addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
				if testutil.ReadRequest(r) != nil {
					_, _ = io.WriteString(conn, tc.head)
					tc.after(conn)
				}
			})
			assert.NoError(t, probeOnce(t, "http://"+addr+"/ready", bound))
		})
	}
	for head, want := range map[string]string{
		"HTTP/1.1 200 OK\r\n":      "connection closed before an answer",
		"HTTP/1.1 2000 OK\r\n\r\n": `malformed HTTP status code "2000"`,
		"HTTP/1.1 20 OK\r\n\r\n":   `malformed HTTP status code "20"`,
		"HTTP/1.1 200OK\r\n\r\n":   `malformed HTTP status code "200OK"`,
		"HTTPS/1.1 200 OK\r\n\r\n": `malformed HTTP version "HTTPS/1.1"`,
		"HTTP/1.1 503 OK\r\n\r\n":  "answered 503 OK",
	} {
		addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
			if testutil.ReadRequest(r) != nil {
				_, _ = io.WriteString(conn, head)
			}
		})
		assert.EqualError(t, probeOnce(t, "http://"+addr+"/ready", bound), want, "%q", head)
	}
}

// The hint fits the error: only errors that waiting cannot fix have one.
func TestHintFitsTheError(t *testing.T) {
	bad := testutil.NewUntrustedTLSServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	huge, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) != nil {
			endless(conn, []byte("HTTP/1.1 100 Continue\r\n\r\n"), make(chan struct{}))
		}
	})
	for _, tc := range []struct {
		url, err, hint string
	}{
		{bad.URL + "/ready", "TLS: certificate signed by unknown authority",
			"the proxy's certificate does not verify here: probe its http:// endpoint, or trust its CA with SSL_CERT_FILE"},
		{strings.Replace(plain.URL, "http:", "https:", 1) + "/ready", "TLS: the server does not speak TLS",
			"the port does not speak TLS: write the readiness URL with http://"},
		{plain.URL + "/ready", "answered 404 Not Found",
			"nothing answers at this path: is the readiness URL this proxy's, and --proxy the right preset?"},
		{"http://" + huge + "/ready", "answer larger than 64 KiB", "no readiness endpoint answers with that much: is the readiness URL this proxy's?"},
		{refusingURL(t), "connection refused", ""},
		{serve(t, &endpoint{notReady: 1 << 30}), "answered 503 Service Unavailable", ""},
	} {
		err := probeOnce(t, tc.url, bound)
		assert.EqualError(t, err, tc.err)
		assert.Equal(t, tc.hint, Hint(err), "%s", tc.err)
	}
	assert.Empty(t, Hint(&answer.Error{Msg: "no answer within --probe-timeout 1s", Err: errProbeTimeout}))
}

// The probe's request, byte for byte: what a proxy's access log shows, and
// no Accept-Encoding, since the body is never decoded.
func TestProbeRequest(t *testing.T) {
	requests := make(chan string, 1)
	addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		var req strings.Builder
		for {
			line, err := r.ReadString('\n')
			req.WriteString(line)
			if err != nil || line == "\r\n" {
				break
			}
		}
		requests <- req.String()
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	require.NoError(t, probeOnce(t, "http://probe:s3cret@"+addr+"/ready?x=1", bound))
	assert.Equal(t, "GET /ready?x=1 HTTP/1.1\r\nHost: "+addr+"\r\nUser-Agent: proxy-await\r\n"+
		"Accept: */*\r\nAuthorization: Basic cHJvYmU6czNjcmV0\r\n\r\n", <-requests)
}

// An answer past the bound on a kept-alive connection fails the probe
// there: its GET is not sent again on a new connection, which would read
// another 64 KiB.
func TestTooLargeOnAKeptAliveConnection(t *testing.T) {
	closed := make(chan struct{})
	addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) == nil {
			return
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		if testutil.ReadRequest(r) == nil {
			return
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nX-Endless: ")
		endless(conn, []byte(strings.Repeat("a", 1000)), closed)
	})
	p, err := newProber("http://"+addr+"/ready", bound)
	require.NoError(t, err)
	defer p.close()
	assert.EqualError(t, p.probe(context.Background()), "answered 503 Service Unavailable")
	assert.EqualError(t, p.probe(context.Background()), "answer larger than 64 KiB")
	<-closed
	assert.Equal(t, int64(1), conns.Load(), "the second probe went out once")
}
