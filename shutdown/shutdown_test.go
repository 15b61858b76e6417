package shutdown

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/proxies"
)

// notEnabledHint is the hint for Linkerd's switched-off shutdown endpoint.
var notEnabledHint = proxies.Lookup("linkerd").Off.Hint

func TestMain(m *testing.M) {
	cleanup := testutil.TrustTestServers()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// bound is how long a shutdown may take in tests where it must not run out
// of time: a shutdown that wrongly waited or retried fails with a timeout.
const bound = 10 * time.Second

// answers serves the given statuses in turn, repeating the last one, and
// counts the POSTs. It stays up after a 2xx, to count a second POST.
type answers struct {
	statuses []int
	delay    time.Duration // before each answer
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
	select {
	case <-time.After(a.delay):
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(status)
}

// post runs a shutdown with a text log at info level and returns its error
// and its log.
func post(t *testing.T, o Options) (error, string) {
	var buf testutil.Buffer
	if o.Logger == nil {
		o.Logger = logging.New(&buf, "text", 0)
	}
	err := Post(context.Background(), o)
	return err, buf.String()
}

func opts(timeout time.Duration, urls ...string) Options {
	return Options{Targets: Targets(urls...), Timeout: timeout}
}

func server(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/shutdown"
}

// closedPort is a loopback URL where nothing listens.
func closedPort(t *testing.T) string {
	return "http://" + testutil.RefusingAddr(t) + "/shutdown"
}

func TestAccepted(t *testing.T) {
	a := &answers{statuses: []int{200}}
	url := server(t, a)
	err, log := post(t, opts(bound, url))
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.posts.Load())
	assert.Regexp(t, `^proxy-await: proxy shutdown requested url=`+url+` status=200 elapsed=\S+\n$`, log)
}

// --shutdown-timeout bounds the whole shutdown, not each POST: a proxy that
// takes 1.5 s to answer is asked once, and succeeds.
func TestSlowAnswerWithinTheBudget(t *testing.T) {
	a := &answers{statuses: []int{200}, delay: 1500 * time.Millisecond}
	err, log := post(t, opts(bound, server(t, a)))
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.posts.Load(), "one POST")
	assert.Contains(t, log, "proxy shutdown requested")
}

func TestServerErrorsAreRetried(t *testing.T) {
	a := &answers{statuses: []int{503, 500, 200}}
	err, _ := post(t, opts(bound, server(t, a)))
	require.NoError(t, err)
	assert.Equal(t, int64(3), a.posts.Load())
}

// A shutdown that runs out of time says so in one wording, with what
// happened last.
func TestOutOfTimeSaysWhatHappenedLast(t *testing.T) {
	hang := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	var first atomic.Bool
	for _, tc := range []struct {
		name string
		url  string
		last string
		hint string
	}{
		{"503", server(t, &answers{statuses: []int{503}}), `last="503 Service Unavailable"`, ""},
		{"hang", server(t, hang), `last="no answer"`, ""},
		{"503, then an attempt cut by the deadline", server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if first.CompareAndSwap(false, true) {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			<-r.Context().Done()
		})), `last="503 Service Unavailable"`, ""},
		{"refused from a proxy never seen", closedPort(t), `last="connection refused"`,
			` (hint: the proxy never answered: is the pod meshed (is the sidecar injected), and is --proxy (or --shutdown-url) right?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 2 s, so that one attempt has ended by then even on a loaded
			// machine: the line reports the last one. In parallel, the
			// 2 s are spent once.
			t.Parallel()
			start := time.Now()
			err, log := post(t, Options{Targets: Targets(tc.url), Timeout: 2 * time.Second})
			require.Error(t, err)
			assert.Less(t, time.Since(start), bound, "gives up at --shutdown-timeout")
			assert.Regexp(t, `^proxy-await: error: proxy did not shut down within 2s url=`+tc.url+
				` elapsed=\S+ `+regexpQuote(tc.last+tc.hint)+`\n$`, log)
		})
	}
}

func regexpQuote(s string) string {
	return strings.NewReplacer("(", `\(`, ")", `\)`, "-", `\-`, "?", `\?`).Replace(s)
}

func TestNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var followed atomic.Bool
			a := &answers{statuses: []int{status}}
			mux := http.NewServeMux()
			mux.Handle("/shutdown", a)
			mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Store(true) })
			url := server(t, mux)
			err, log := post(t, opts(bound, url))
			require.Error(t, err)
			assert.Equal(t, int64(1), a.posts.Load(), "not retried")
			assert.False(t, followed.Load(), "a redirect is never followed")
			hint := ""
			if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
				hint = " " + regexpQuote("(hint: "+wrongURLHint+")")
			}
			assert.Regexp(t, fmt.Sprintf(`^proxy-await: error: proxy shutdown failed url=%s status=%d elapsed=\S+ error="answered %d %s"%s\n$`,
				url, status, status, http.StatusText(status), hint), log)
		})
	}
}

// Linkerd's proxy answers so when its shutdown endpoint is not enabled, the
// default since Linkerd 2.16.
func TestLinkerdShutdownEndpointNotEnabled(t *testing.T) {
	var posts atomic.Int64
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("shutdown endpoint is not enabled\n"))
	}))
	err, log := post(t, opts(bound, url))
	require.EqualError(t, err, "the proxy's shutdown endpoint is not enabled")
	assert.Equal(t, int64(1), posts.Load(), "not retried")
	assert.Regexp(t, `^proxy-await: error: the proxy's shutdown endpoint is not enabled url=`+url+
		` status=404 elapsed=\S+ \(hint: if the proxy runs as a native sidecar, drop -S: the kubelet stops it after the app; `+
		`otherwise enable the endpoint \(Linkerd: annotation config.linkerd.io/proxy-admin-shutdown: enabled, `+
		`or the Helm value proxy.enableShutdownEndpoint=true\)\)\n$`, log)

	var buf testutil.Buffer
	_ = Post(context.Background(), Options{Targets: Targets(url), Timeout: bound, Logger: logging.New(&buf, "json", 0)})
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(buf.String()), &rec))
	assert.Equal(t, "shutdown_failed", rec["event"])
	assert.Equal(t, "the proxy's shutdown endpoint is not enabled", rec["msg"])
	assert.Equal(t, notEnabledHint, rec["hint"])
}

// exitsOnPOST is the URL of a proxy that takes one POST, stops listening and
// ends that connection with end: every later connection is refused.
func exitsOnPOST(t *testing.T, end func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		testutil.ReadRequest(bufio.NewReader(conn))
		ln.Close()
		end(conn)
	}()
	return "http://" + ln.Addr().String() + "/shutdown"
}

// A refused connection means the proxy has exited only if it was seen
// running: it answered the readiness probes, or this shutdown reached it.
func TestRefused(t *testing.T) {
	const gone = `^proxy-await: proxy already gone, nothing to shut down url=\S+ elapsed=\S+\n$`
	t.Run("after readiness answered", func(t *testing.T) {
		start := time.Now()
		url := closedPort(t)
		err, log := post(t, Options{Targets: Targets(url), Answered: []string{strings.Replace(url, "/shutdown", "/ready", 1)}, Timeout: bound})
		require.NoError(t, err, "a proxy that is gone already needs no shutdown")
		assert.Less(t, time.Since(start), bound, "not retried until the deadline")
		assert.Regexp(t, gone, log)
	})
	t.Run("after the shutdown reached the proxy", func(t *testing.T) {
		// The proxy answers 503 and exits: its port refuses from then on.
		url := exitsOnPOST(t, func(conn net.Conn) {
			_, _ = conn.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"))
			conn.Close()
		})
		err, log := post(t, opts(bound, url))
		require.NoError(t, err)
		assert.Regexp(t, gone, log)
	})
	t.Run("after the proxy reset the shutdown's connection", func(t *testing.T) {
		// The proxy exits without an answer (a reset), and its port
		// refuses from then on.
		url := exitsOnPOST(t, func(conn net.Conn) {
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		})
		err, log := post(t, opts(bound, url))
		require.NoError(t, err)
		assert.Regexp(t, gone, log)
	})
	t.Run("from a proxy never seen", func(t *testing.T) {
		// The proxy starts late: the first POSTs are refused, a later
		// one reaches it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		var buf testutil.Buffer
		done := make(chan error, 1)
		go func() {
			done <- Post(context.Background(), Options{Targets: Targets("http://" + addr + "/shutdown"), Timeout: bound,
				Logger: logging.New(&buf, "text", -4)})
		}()
		// Start the proxy once a refused POST has been logged.
		buf.WaitFor(t, `error="connection refused"`, bound)
		a := &answers{statuses: []int{200}}
		srv := httptest.NewUnstartedServer(a)
		srv.Listener.Close()
		srv.Listener, err = net.Listen("tcp", addr)
		require.NoError(t, err)
		srv.Start()
		t.Cleanup(srv.Close)
		require.NoError(t, <-done)
		assert.Equal(t, int64(1), a.posts.Load())
		assert.Contains(t, buf.String(), "proxy shutdown requested")
	})
}

// Answers that would cost memory or time without a bound: an endless
// header fails at 64 KiB and is not retried; a 2xx decides without its body.
func TestAnswersAreBounded(t *testing.T) {
	chunk := []byte(strings.Repeat("a", 32<<10))
	for _, tc := range []struct {
		name    string
		answer  string // then chunk, endlessly, if endless
		endless bool
		err     string
	}{
		{"endless header", "HTTP/1.1 200 OK\r\nX-Endless: ", true, "answer larger than 64 KiB"},
		{"100 MB body", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 100<<20), true, ""},
		{"slow drip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nr\r\n", false, ""},
		{"100 Continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conns := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
				if testutil.ReadRequest(r) == nil {
					return
				}
				_, _ = conn.Write([]byte(tc.answer))
				for tc.endless {
					if _, err := conn.Write(chunk); err != nil {
						return
					}
				}
				<-time.After(bound) // the slow drip's next byte, after the client has left
			})
			url := "http://" + addr + "/shutdown"
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err, log := post(t, opts(bound, url))
			runtime.ReadMemStats(&after)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Contains(t, log, "proxy shutdown requested")
			} else {
				require.EqualError(t, err, tc.err)
				assert.Regexp(t, `^proxy-await: error: proxy shutdown failed url=\S+ elapsed=\S+ error="`+tc.err+`"\n$`, log)
			}
			assert.Equal(t, int64(1), conns.Load(), "one POST")
			// answer.Conn hands net/http's header parser no head that has
			// not ended: an endless header costs its 64 KiB and a little.
			t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(160<<10), "bounded memory")
		})
	}
}

func TestResetIsRetried(t *testing.T) {
	var n atomic.Int64
	addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) == nil {
			return
		}
		if n.Add(1) == 1 {
			conn.(*net.TCPConn).SetLinger(0) // the first POST: reset
			return
		}
		_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	})
	var buf testutil.Buffer
	require.NoError(t, Post(context.Background(), Options{Targets: Targets("http://" + addr + "/shutdown"), Timeout: bound,
		Logger: logging.New(&buf, "text", -4)}))
	assert.Equal(t, int64(2), n.Load())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, buf.String())
	assert.Regexp(t, `^proxy-await: debug: shutdown POST failed url=\S+ attempt=1 error="connection reset"$`, lines[0])
	assert.Regexp(t, `^proxy-await: debug: shutdown POST answered url=\S+ attempt=2 status=200$`, lines[1])
	assert.Regexp(t, `^proxy-await: proxy shutdown requested url=\S+ status=200 elapsed=\S+$`, lines[2])
}

// A certificate that fails verification fails the same way on every
// attempt: it is said at once, in plain words, and not retried.
func TestTLSFailureSaysWhy(t *testing.T) {
	var posts atomic.Int64
	srv := testutil.NewUntrustedTLSServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { posts.Add(1) }))
	err, log := post(t, opts(bound, srv.URL+"/shutdown"))
	require.EqualError(t, err, "TLS: certificate signed by unknown authority")
	assert.Regexp(t, `^proxy-await: error: proxy shutdown failed url=\S+ elapsed=\S+ error="TLS: certificate signed by unknown authority"\n$`, log)
	assert.Zero(t, posts.Load())

	good := &answers{statuses: []int{200}}
	tlsSrv := httptest.NewTLSServer(good)
	t.Cleanup(tlsSrv.Close)
	err, _ = post(t, opts(bound, tlsSrv.URL+"/shutdown"))
	require.NoError(t, err, "a trusted certificate passes")
	assert.Equal(t, int64(1), good.posts.Load())
}

func TestCredentialsAreSentNotLogged(t *testing.T) {
	a := &answers{statuses: []int{200}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "admin" || pass != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		a.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var buf testutil.Buffer
	err := Post(context.Background(), Options{Targets: Targets(strings.Replace(srv.URL, "://", "://admin:s3cret@", 1) + "/shutdown"),
		Timeout: bound, Logger: logging.New(&buf, "text", -4)})
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.posts.Load())
	assert.Contains(t, buf.String(), "url=http://admin:xxxxx@")
	assert.NotContains(t, buf.String(), "s3cret")
}

func TestEveryURLIsPosted(t *testing.T) {
	a, b := &answers{statuses: []int{200}}, &answers{statuses: []int{404}}
	err, _ := post(t, opts(bound, server(t, a), server(t, b)))
	require.Error(t, err)
	assert.Equal(t, int64(1), a.posts.Load())
	assert.Equal(t, int64(1), b.posts.Load())
}

// Under --log-format json every line is one JSON object with an event,
// debug lines included; none is the HTTP library's own.
func TestEveryLineHasAnEvent(t *testing.T) {
	t.Parallel()
	var buf testutil.Buffer
	a := &answers{statuses: []int{503, 500, 200}}
	_ = Post(context.Background(), Options{Targets: Targets(server(t, a), closedPort(t)), Timeout: 2 * time.Second,
		Logger: logging.New(&buf, "json", -4)})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Greater(t, len(lines), 4)
	for _, line := range lines {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON object: %q", line)
		assert.NotEmpty(t, rec["event"], "no event: %q", line)
	}
}

// Go's HTTP client would send a POST to http://0.0.0.0:PORT through the
// proxy that HTTP_PROXY names (only localhost and loopback addresses are
// exempt), yet on Linux that address reaches the loopback server directly:
// a shutdown client that honoured the environment would reach the counting
// proxy and never the shutdown endpoint.
func TestEnvironmentProxyIgnored(t *testing.T) {
	proxy, proxied := testutil.CountingProxy(t)
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(v, proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	a := &answers{statuses: []int{200}}
	url := strings.Replace(server(t, a), "127.0.0.1", "0.0.0.0", 1)

	// The control: Go's default rules proxy this URL.
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: testutil.EnvironmentProxy}}).Post(url, "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, int64(1), proxied.Load(), "Go's default client goes through the proxy for %s", url)

	err, _ = post(t, opts(bound, url))
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.posts.Load(), "the POST reached the endpoint")
	assert.Equal(t, int64(1), proxied.Load(), "and not through the proxy")
}

// listening is the readiness URL of a proxy that accepts connections, and
// the function that stops it: from then on its port refuses them.
func listening(t *testing.T) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/ready", func() { ln.Close() }
}

// debugPost runs a shutdown with a text log at debug level, and returns its
// error and its log's lines.
func debugPost(t *testing.T, o Options) (error, []string) {
	var buf testutil.Buffer
	o.Logger = logging.New(&buf, "text", slog.LevelDebug)
	err := Post(context.Background(), o)
	return err, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// refusedAttempts says that lines, but the last, are each a refused attempt,
// numbered from 1: the shutdown asked again, and nothing else happened.
func refusedAttempts(t *testing.T, lines []string) {
	t.Helper()
	for i, l := range lines[:len(lines)-1] {
		assert.Regexp(t, fmt.Sprintf(`^proxy-await: debug: shutdown POST failed url=\S+ attempt=%d error="connection refused"$`, i+1), l)
	}
}

// While the proxy's readiness URL accepts connections, a shutdown URL that
// refuses them is a missing endpoint, not a proxy gone: it is asked again
// until the budget runs out, then an error names the likely cause for that
// proxy. The proxy may have answered during the wait or not (the wait was
// skipped): that it answers now is what counts.
func TestMissingShutdownEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, preset string
		answered     bool
		hint         string
	}{
		{"cloudsql", "cloudsql", true, "cloud-sql-proxy serves /quitquitquit only when started with --quitquitquit: add that flag to its arguments " +
			"(the endpoint is then on its --admin-port, 9091 by default)"},
		{"consul", "consul", true, "consul-dataplane serves /graceful_shutdown on its graceful port: 20600 as consul-k8s injects it (the pod annotation consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port moves it), " +
			"or 20300, consul-dataplane's own default; give the port it uses with --shutdown-url http://127.0.0.1:PORT/graceful_shutdown"},
		{"linkerd", "linkerd", true, notEnabledHint},
		{"istio", "istio", true, "check --shutdown-url: the proxy still answers at its readiness URL, but nothing listens at this one"},
		{"unknown proxy, wait skipped", "", false, "check --shutdown-url: the proxy still answers at its readiness URL, but nothing listens at this one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The budget must run out, after two attempts at least even
			// on a loaded machine; in parallel, it is spent once.
			t.Parallel()
			ready, _ := listening(t)
			url := closedPort(t)
			o := Options{Targets: []Target{{URL: url, Preset: tc.preset, Ready: []string{ready}}}, Timeout: 2 * time.Second}
			if tc.answered {
				o.Answered = []string{ready}
			}
			err, lines := debugPost(t, o)
			require.EqualError(t, err, "proxy still running: nothing listens at its shutdown URL")
			require.GreaterOrEqual(t, len(lines), 3, "asked again: %q", lines)
			refusedAttempts(t, lines)
			assert.Regexp(t, `^proxy-await: error: proxy still running: nothing listens at its shutdown URL url=`+url+
				` elapsed=\S+ ready_url=`+ready+` `+regexpQuote("(hint: "+tc.hint+")")+`$`, lines[len(lines)-1])
		})
	}
}

// A proxy that answered during the wait and now refuses at its readiness
// URL and at its shutdown URL has gone: said once, not asked again.
func TestGoneWhenNothingOfTheProxyAnswers(t *testing.T) {
	ready := "http://" + testutil.RefusingAddr(t) + "/ready"
	url := closedPort(t)
	err, lines := debugPost(t, Options{Targets: []Target{{URL: url, Preset: "cloudsql", Ready: []string{ready}}},
		Answered: []string{ready}, Timeout: bound})
	require.NoError(t, err)
	require.Len(t, lines, 2, "one attempt: %q", lines)
	refusedAttempts(t, lines)
	assert.Regexp(t, `^proxy-await: proxy already gone, nothing to shut down url=`+url+` elapsed=\S+$`, lines[1])
}

// A proxy that goes away while its shutdown endpoint is missing is gone
// from the next refused attempt on: its readiness URL, which answered, now
// refuses too.
func TestGoneWhileAskedAgain(t *testing.T) {
	ready, stop := listening(t)
	url := closedPort(t)
	var buf testutil.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Post(context.Background(), Options{Targets: []Target{{URL: url, Preset: "consul", Ready: []string{ready}}},
			Timeout: bound, Logger: logging.New(&buf, "text", slog.LevelDebug)})
	}()
	buf.WaitFor(t, "attempt=2 ", bound) // asked again: its readiness URL answered
	stop()
	require.NoError(t, <-done)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	refusedAttempts(t, lines)
	assert.Regexp(t, `^proxy-await: proxy already gone, nothing to shut down url=`+url+` elapsed=\S+$`, lines[len(lines)-1])
}

// A proxy never seen running (its readiness URL refuses too, and never
// answered) may not have started: it is asked again until the budget runs
// out.
func TestNeverAnsweredIsAskedAgain(t *testing.T) {
	t.Parallel()
	ready := "http://" + testutil.RefusingAddr(t) + "/ready"
	url := closedPort(t)
	err, lines := debugPost(t, Options{Targets: []Target{{URL: url, Preset: "cloudsql", Ready: []string{ready}}},
		Timeout: 2 * time.Second})
	require.Error(t, err)
	require.GreaterOrEqual(t, len(lines), 3, "asked again: %q", lines)
	refusedAttempts(t, lines)
	assert.Regexp(t, `^proxy-await: error: proxy did not shut down within 2s url=`+url+` elapsed=\S+ last="connection refused" `+
		regexpQuote("(hint: "+neverAnsweredHint+")")+`$`, lines[len(lines)-1])
}

// A proxy whose readiness URL answered during the wait, and which cannot be
// reached either way now (its readiness URL neither accepts nor refuses),
// was seen running: when its shutdown URL refuses to the end, the log does
// not say that it never answered.
func TestRefusedAfterTheProxyWasSeen(t *testing.T) {
	ready := "http://no-such-host.invalid/ready"
	url := closedPort(t)
	err, log := post(t, Options{Targets: []Target{{URL: url, Ready: []string{ready}}}, Answered: []string{ready},
		Timeout: 300 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, log, `proxy did not shut down within 300ms`)
	assert.Contains(t, log, `last="connection refused"`)
	assert.NotContains(t, log, "never answered")
}

// deadlineOnly is a context whose deadline has passed while Err and Done do
// not show it yet: the moment between a timer's expiry and its context's
// cancellation.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }

// A connection refused as the budget runs out, at a URL whose host and port
// answered before, is still a proxy gone.
func TestRefusedAtTheDeadlineIsGone(t *testing.T) {
	tg := newURLShutdown(Target{URL: closedPort(t)}, Options{Logger: logging.Discard()})
	tg.saw(itsOwn)
	ctx := deadlineOnly{context.Background(), time.Now().Add(-time.Millisecond)}
	retry, err := tg.checkRetry(ctx, nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	assert.False(t, retry)
	assert.ErrorIs(t, err, errGone)
}
