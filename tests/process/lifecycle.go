package process

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

func notReadyProbes(n int) func([]testutil.Request) bool {
	return func(rs []testutil.Request) bool {
		c := 0
		for _, r := range rs {
			if r.Method == "GET" && r.Status == 503 {
				c++
			}
		}
		return c >= n
	}
}

func (Tests) TestStartsOnlyAfterProxyIsReady(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-ready-after", "never")
	p := startPA(t, nil, append([]string{"--ready-url", fp.URL("/ready")}, child("args", "started")...)...)

	fp.WaitFor("three not-ready probes", notReadyProbes(3))
	p.silent("the proxy is not ready")
	fp.Signal(syscall.SIGUSR1)
	p.expect("started")
	assert.Equal(t, 0, p.wait())

	var turned, firstOK bool
	for _, r := range fp.Requests() {
		switch {
		case r.Note == "turned ready":
			turned = true
		case r.Path == "/ready" && r.Status == 200:
			require.True(t, turned, "a probe saw ready before the proxy turned ready")
			firstOK = true
		}
	}
	assert.True(t, firstOK, "no probe saw the proxy ready")
}

// exitCodeCases are the exit codes that the child's end decides
// (docs/reference.md#exit-codes); the PID 1 tests run them again with
// proxy-await as a namespace's init.
var exitCodeCases = []struct {
	name string
	args []string
	want int
}{
	{"exit 0", child("exit", "0"), 0},
	{"exit 1", child("exit", "1"), 1},
	{"exit 3", child("exit", "3"), 3},
	{"exit 255", child("exit", "255"), 255},
	{"killed by SIGKILL", []string{"--", "sh", "-c", "kill -KILL $$"}, 137},
	{"killed by SIGTERM", []string{"--", "sh", "-c", "kill -TERM $$"}, 143},
	{"killed by SIGSEGV", []string{"--", "sh", "-c", "kill -SEGV $$"}, 139},
	{"not found", []string{"--", "/nonexistent/command"}, 127},
	{"not found in PATH", []string{"--", "no-such-command-proxy-await"}, 127},
	{"an empty string", []string{"--", ""}, 127},
	{"not executable", []string{"--", "/proc/version"}, 126},
	{"a directory", []string{"--", "/"}, 126},
}

func (Tests) TestExitCodes(t *testing.T) {
	for _, tc := range exitCodeCases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPA(t, nil, append([]string{"--proxy", "none"}, tc.args...)...)
			assert.Equal(t, tc.want, p.wait())
		})
	}
}

func (Tests) TestShutdownPostedOnceWithShutdownFlag(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up") // stays up to count a second POST
	p := startPA(t, nil, append([]string{"-S", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
		child("exit", "7")...)...)
	assert.Equal(t, 7, p.wait())
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	assert.Contains(t, p.stderr.String(), "proxy shutdown requested")
}

func (Tests) TestNoShutdownWithoutFlag(t *testing.T) {
	fp := testutil.StartFakeProxy(t)
	p := startPA(t, nil, append([]string{steadyProbe, "10s", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
		child("exit", "0")...)...)
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
	assert.Equal(t, 1, fp.Count("GET", "/ready"))
}

// Tests of the line that ends a wait on --timeout or --shutdown-timeout give
// it 2 s, so that a probe or a POST has ended by then even on a loaded
// machine: the line reports the last one's outcome ("no answer yet" for a
// readiness wait when none has ended). They run in parallel, so the 2 s are
// spent once.
const waitForAProbe = "2s"

func (Tests) TestReadinessTimeout(t *testing.T) {
	t.Parallel()
	fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
	p := startPA(t, nil, append([]string{"-S", "-t", waitForAProbe, "--ready-url", fp.URL("/ready"),
		"--shutdown-url", fp.URL("/shutdown")}, child("args", "started")...)...)
	assert.Equal(t, 69, p.wait())
	assert.Empty(t, p.restLines, "the child must not start")
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"), "shutdown is POSTed on the timeout path too")
	// The timeout line says why, even when the wait was too short for a
	// progress line.
	assert.Contains(t, p.stderr.String(), "proxy-await: error: proxy not ready: giving up timeout="+waitForAProbe+" url="+fp.URL("/ready")+
		` error="answered 503 Service Unavailable" (hint: raise --timeout, or set --timeout-fatal=false to start the command anyway)`+"\n")
}

func (Tests) TestReadinessTimeoutNotFatal(t *testing.T) {
	t.Parallel()
	fp := testutil.StartFakeProxy(t, "-ready-after", "never")
	p := startPA(t, nil, append([]string{"-t", waitForAProbe, "--timeout-fatal=false", "--ready-url", fp.URL("/ready")},
		child("exit", "4")...)...)
	assert.Equal(t, 4, p.wait())
	assert.Contains(t, p.stderr.String(), "proxy-await: warning: proxy not ready: starting the command anyway timeout="+waitForAProbe+" url="+
		fp.URL("/ready")+` error="answered 503 Service Unavailable"`+"\n")
}

// A readiness port that refused every connection: the timeout line asks
// whether the proxy is there at all.
func (Tests) TestReadinessTimeoutRefused(t *testing.T) {
	t.Parallel()
	url := "http://" + testutil.RefusingAddr(t) + "/ready"
	p := startPA(t, nil, append([]string{"-t", waitForAProbe, "--ready-url", url}, child("args", "started")...)...)
	assert.Equal(t, 69, p.wait())
	assert.Contains(t, p.stderr.String(), "proxy-await: error: proxy not ready: giving up timeout="+waitForAProbe+" url="+url+
		` error="connection refused" (hint: connection refused for the whole wait: is the pod meshed (is the sidecar injected), and is --proxy the right preset?)`+"\n")
}

// Cloud SQL Auth Proxy serves /startup only when started with
// --health-check: without it the readiness port refuses for ever, in a pod
// that has the proxy. For the cloudsql preset the hint names that flag, on
// the timeout line as on the progress line.
func (Tests) TestReadinessTimeoutRefusedCloudSQL(t *testing.T) {
	t.Parallel()
	url := "http://" + testutil.RefusingAddr(t) + "/startup"
	p := startPA(t, nil, append([]string{"--proxy", "cloudsql", "-t", waitForAProbe, "--ready-url", url}, child("args", "started")...)...)
	assert.Equal(t, 69, p.wait())
	assert.Contains(t, p.stderr.String(), "proxy-await: error: proxy not ready: giving up timeout="+waitForAProbe+" url="+url+
		` error="connection refused" (hint: connection refused for the whole wait: is cloud-sql-proxy in the pod, and started with --health-check `+
		`(without it, it serves no /startup on its --http-port, 9090 by default)?)`+"\n")
}

// The timeout line says "raise --timeout" only where waiting longer can
// help: for an error that every probe will repeat, its hint says what to
// fix instead.
func (Tests) TestTimeoutHintFitsTheError(t *testing.T) {
	t.Parallel()
	fp := testutil.StartFakeProxy(t, "-stay-up")
	untrusted := testutil.NewUntrustedTLSServer(t, http.NotFoundHandler())
	huge, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		if testutil.ReadRequest(r) == nil {
			return
		}
		header := []byte("HTTP/1.1 503 Service Unavailable\r\nX-Endless: " + strings.Repeat("a", 96<<10))
		_, _ = conn.Write(header)
		_, _ = io.Copy(io.Discard, conn)
	})
	for _, tc := range []struct {
		name, url, err, hint string
	}{
		{"404", fp.URL("/no-such-path"), "answered 404 Not Found",
			"nothing answers at this path: is the readiness URL this proxy's, and --proxy the right preset?"},
		{"certificate", untrusted.URL + "/ready", "TLS: certificate signed by unknown authority",
			"the proxy's certificate does not verify here: probe its http:// endpoint, or trust its CA with SSL_CERT_FILE"},
		{"over 64 KiB", "http://" + huge + "/ready", "answer larger than 64 KiB",
			"no readiness endpoint answers with that much: is the readiness URL this proxy's?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startPA(t, nil, append([]string{"-t", waitForAProbe, "--ready-url", tc.url}, child("args", "started")...)...)
			assert.Equal(t, 69, p.wait())
			assert.Equal(t, "proxy-await: waiting for the proxy: --ready-url url="+tc.url+"\n"+
				"proxy-await: error: proxy not ready: giving up timeout="+waitForAProbe+" url="+tc.url+
				` error="`+tc.err+`" (hint: `+tc.hint+`)`+"\n", p.stderr.String())
		})
	}
}

// A proxy that sends more than its answer (a body longer than its
// Content-Length) makes net/http's transport drop the connection, and say
// so with the standard library's logger: stderr holds proxy-await's lines
// and nothing else.
func (Tests) TestUnaskedBytesWriteNothing(t *testing.T) {
	t.Parallel()
	addr, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		for testutil.ReadRequest(r) != nil {
			_, _ = io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nnot ready\n")
		}
	})
	url := "http://" + addr + "/ready"
	p := startPA(t, nil, append([]string{"-t", waitForAProbe, "--ready-url", url}, child("args", "started")...)...)
	assert.Equal(t, 69, p.wait())
	assert.Equal(t, "proxy-await: waiting for the proxy: --ready-url url="+url+"\n"+
		"proxy-await: error: proxy not ready: giving up timeout="+waitForAProbe+" url="+url+
		` error="answered 503 Service Unavailable" (hint: raise --timeout, or set --timeout-fatal=false to start the command anyway)`+"\n",
		p.stderr.String())
}

func (Tests) TestDisableVariablesSkipTheWait(t *testing.T) {
	for _, v := range []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"} {
		t.Run(v, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-ready-after", "never")
			p := startPA(t, []string{v + "=1"}, append([]string{"--ready-url", fp.URL("/ready")},
				child("exit", "5")...)...)
			assert.Equal(t, 5, p.wait())
			assert.Equal(t, 0, fp.Count("GET", "/ready"), "no probe when disabled")
		})
	}
	t.Run("empty value does not disable", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never")
		p := startPA(t, []string{"LINKERD_DISABLED="}, append([]string{"-t", "100ms", "--ready-url", fp.URL("/ready")},
			child("exit", "5")...)...)
		assert.Equal(t, 69, p.wait())
	})
}

func (Tests) TestStdinAndStdoutPassThrough(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("cat")...)...)
	_, err := fmt.Fprint(p.stdin, "line one\nline two\n")
	require.NoError(t, err)
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, []string{"line one", "line two"}, p.restLines)
	assert.NotContains(t, strings.Join(p.restLines, "\n"), "proxy-await", "our logs stay on stderr")
}

func (Tests) TestChildFlagsPassThrough(t *testing.T) {
	args := []string{"--help", "-v", "--", "-S", "--proxy=istio", "plain"}
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("args", args...)...)...)
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, args, p.restLines)

	// Without "--" too: flags stop at the first argument that is not one.
	p = startPA(t, nil, "--proxy", "none", "echo", "-S", "--version")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, []string{"-S --version"}, p.restLines)
}

func (Tests) TestSigtermReachesTheChild(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("signals", "SIGTERM")...)...)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGTERM")
	assert.Equal(t, 0, p.wait(), "the child handled SIGTERM and exited 0")
}

func (Tests) TestTerminationWhileWaiting(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
			p := startPA(t, nil, append([]string{"-S", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
				child("args", "started")...)...)
			fp.WaitFor("a not-ready probe", notReadyProbes(1))
			p.signal(syscall.SIGHUP) // logged and dropped
			p.signal(sig)
			assert.Equal(t, 128+int(sig), p.wait())
			assert.Empty(t, p.restLines, "the child must never start")
			assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
		})
	}
}

func (Tests) TestEnvironmentConfiguration(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	ready, shut := fp.URL("/ready"), fp.URL("/shutdown")

	t.Run("variables configure", func(t *testing.T) {
		p := startPA(t, []string{"PROXY_AWAIT_READY_URL=" + ready, "PROXY_AWAIT_SHUTDOWN_URL=" + shut,
			"PROXY_AWAIT_SHUTDOWN=true"}, child("exit", "0")...)
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	})
	t.Run("the flag wins", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		p := startPA(t, []string{"PROXY_AWAIT_READY_URL=" + fp.URL("/ready"), "PROXY_AWAIT_SHUTDOWN_URL=" + fp.URL("/shutdown"),
			"PROXY_AWAIT_SHUTDOWN=true"}, append([]string{steadyProbe, "10s", "--shutdown=false"}, child("exit", "0")...)...)
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
		assert.Equal(t, 1, fp.Count("GET", "/ready"))
	})
	t.Run("a bad variable is a usage error", func(t *testing.T) {
		p := startPA(t, []string{"PROXY_AWAIT_TERM_DELAY=soon"}, child("args", "started")...)
		assert.Equal(t, 2, p.wait())
		assert.Empty(t, p.restLines)
		assert.Equal(t, `proxy-await: invalid value "soon" for $PROXY_AWAIT_TERM_DELAY (--term-delay): not a duration (use 250ms, 1m30s, 2d or seconds)`,
			strings.SplitN(p.stderr.String(), "\n", 2)[0])
	})
}
