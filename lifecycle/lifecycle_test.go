package lifecycle_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

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

// exitCodeCases are the exit codes that the child's end decides
// (docs/reference.md#exit-codes), as testdata/script/exit-codes.txtar has
// them: the PID 1 tests run them with proxy-await as a namespace's init.
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

// Tests of the line that ends a wait on --timeout or --shutdown-timeout give
// it 2 s, so that a probe or a POST has ended by then even on a loaded
// machine: the line reports the last one's outcome ("no answer yet" for a
// readiness wait when none has ended). They run in parallel, so the 2 s are
// spent once.
const waitForAProbe = "2s"

// A readiness port that refused every connection: the timeout line asks
// whether the proxy is there at all.
func TestReadinessTimeoutRefused(t *testing.T) {
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
func TestReadinessTimeoutRefusedCloudSQL(t *testing.T) {
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
func TestTimeoutHintFitsTheError(t *testing.T) {
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
func TestUnaskedBytesWriteNothing(t *testing.T) {
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

func TestSigtermReachesTheChild(t *testing.T) {
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("signals", "SIGTERM")...)...)
	p.expect("ready")
	p.signal(syscall.SIGTERM)
	p.expect("signal SIGTERM")
	assert.Equal(t, 0, p.wait(), "the child handled SIGTERM and exited 0")
}

func TestTerminationWhileWaiting(t *testing.T) {
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
