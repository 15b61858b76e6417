package lifecycle

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/readiness"
	"github.com/proxy-await/proxy-await/shutdown"
	"github.com/proxy-await/proxy-await/wrapper"
)

// passMark starts and ends every password the fuzz target tries: nothing
// else it prints contains it, so a match is never innocent, and a part of a
// password shown from either end shows it.
const passMark = "Qz7"

// secretSeeds are passwords with what confuses a reader of URLs: commas (a
// list's separator), "@" and ":" (userinfo's), percent-escapes valid and
// not, the characters that end an authority, and a comma followed by the
// start of another URL.
var secretSeeds = []string{
	"secret", "pa,ss", "p@ss", "p:ss", "p%40ss", "p%2C,ss", "p%zzss", "p%4", "pa/ss", "pa?ss", "pa#ss",
	",http://127.0.0.1:1/ready", "a,,b", "p ss", "1234", "p@127.0.0.1:1/x,", "p=ss",
}

// endpoints are loopback servers that fail in each way a readiness probe or
// a shutdown POST can: refused, 503 (retried until the budget), 404, 404
// "shutdown endpoint is not enabled", no answer at all, and 200.
type endpoints struct {
	refused, unavailable, notFound, notEnabled, hang, ok string
}

func startEndpoints(t testing.TB) endpoints {
	status := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	hang, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		for testutil.ReadRequest(r) != nil { // never answered; ends when the client leaves
		}
	})
	return endpoints{
		refused:     testutil.RefusingAddr(t),
		unavailable: status(http.StatusServiceUnavailable, "not ready\n"),
		notFound:    status(http.StatusNotFound, "not found\n"),
		notEnabled:  status(http.StatusNotFound, "shutdown endpoint is not enabled\n"),
		hang:        hang,
		ok:          status(http.StatusOK, "ok\n"),
	}
}

// FuzzPasswordNeverPrinted puts URLs whose password the fuzzer varies
// through every path of proxy-await that prints a URL, and finds the
// password nowhere in what they print, raw or percent-decoded: usage errors
// from flags, environment variables and scuttle's variables, and from words
// that hold a URL (a long flag typed with one dash), in text and JSON; and, when the URLs are accepted, the readiness wait and the
// shutdown against endpoints that refuse, answer 503, 404, not at all or
// 200, with debug logging, in text or JSON.
func FuzzPasswordNeverPrinted(f *testing.F) {
	for i, s := range secretSeeds {
		f.Add(s, uint8(i))
	}
	ep := startEndpoints(f)
	f.Fuzz(func(t *testing.T, fuzzed string, shape uint8) {
		pass := passMark + fuzzed + passMark
		withPass := func(addr, path string) string {
			switch shape % 3 {
			case 1:
				return "http://user:" + pass + "@" + addr + path + "?a=1,2"
			case 2:
				return "HTTP://user:" + pass + "@" + addr + path
			}
			return "http://user:" + pass + "@" + addr + path
		}
		format := []string{"text", "json"}[shape/3%2]
		var out testutil.Buffer

		// Usage errors: URLs that are wrong whatever the password, and
		// the lists of URLs below, which a password may make wrong.
		var ready, quit []string
		for _, addr := range []string{ep.refused, ep.unavailable, ep.notFound, ep.hang, ep.ok} {
			ready = append(ready, withPass(addr, "/ready"))
		}
		for _, addr := range []string{ep.refused, ep.unavailable, ep.notFound, ep.notEnabled, ep.hang, ep.ok} {
			quit = append(quit, withPass(addr, "/shutdown"))
		}
		bad := []string{withPass("10.0.0.1:1", "/q"), withPass("127.0.0.1:99999", "/q"), "ftp" + withPass("127.0.0.1:1", "/q")[4:]}
		for _, f := range []string{"text", "json"} {
			for _, u := range append(bad, ready[0]) {
				usageError(t, &out, "proxy-await", []string{"--log-format", f, "--shutdown-url", u, "--", "true"}, nil)
				usageError(t, &out, "proxy-await", []string{"--", "true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f,
					"PROXY_AWAIT_SHUTDOWN_URL": ready[1] + "," + u, "PROXY_AWAIT_READY_URL": u + "," + ready[2]})
				for _, v := range []string{"ENVOY_ADMIN_API", "ISTIO_QUIT_API", "GENERIC_QUIT_ENDPOINTS"} {
					usageError(t, &out, "scuttle", []string{"--", "true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f, v: u})
				}
				// Words that hold a URL: a long flag typed with one dash,
				// which pflag reads as short flags, short flags run into
				// the URL, an unknown flag, a flag or variable that takes
				// no URL, and a command named in a hint.
				for _, w := range []string{"-shutdown-urls=" + u, "-ready_url=" + u, "-url=" + u, "-x=" + u, "-Sx" + u,
					"--nosuch=" + u, "-S=" + u, "--proxy=" + u, "-r" + u} {
					usageError(t, &out, "proxy-await", []string{"--log-format", f, w, "--", "true"}, nil)
				}
				usageError(t, &out, "proxy-await", []string{"--install", "/pa", u}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f})
				usageError(t, &out, "proxy-await", []string{"true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f, "PROXY_AWAIT_TIMEOUT": u})
			}
		}

		// The endpoints that fail until the budget runs out get a short
		// one; the others answer at once, and the budget only guards a
		// hang.
		args := []string{"-v", "--log-format", format, "--proxy", "cloudsql", "-S", "--timeout", "30ms", "--timeout-fatal=false",
			"--probe-timeout", "10ms", "--shutdown-timeout", "60ms"}
		for _, u := range ready {
			args = append(args, "--ready-url", u)
		}
		for _, u := range quit[:2] { // refused, 503
			args = append(args, "--shutdown-url", u)
		}
		args = append(args, "--shutdown-url", quit[4]) // no answer
		c, err := config.Parse("proxy-await", append(args, "--", "true"), testutil.Getenv(nil))
		if err == nil {
			answering := *c
			answering.ShutdownURLs, answering.ShutdownTimeout = []string{quit[2], quit[3], quit[5]}, time.Minute
			lifecycle(t, &out, c, &answering)
		}
		noPassword(t, out.String(), pass)
	})
}

// usageError parses args and env as proxy-await does when invoked as name
// and, if they are refused, prints the usage error to out.
func usageError(t *testing.T, out *testutil.Buffer, name string, args []string, env map[string]string) {
	_, err := config.Parse(name, args, testutil.Getenv(env))
	var u *config.UsageError
	if errors.As(err, &u) {
		u.Report(out, logging.Prefix)
	} else {
		require.NoError(t, err)
	}
}

// lifecycle runs what prints URLs once they are accepted: the readiness
// wait (its start, each probe's failure, its timeout), --proxy-lost's
// watch, and the shutdown (every outcome), as run does, with c; a shutdown with answering, whose
// endpoints answer at once; and beside them the wait's progress lines,
// which come after seconds in a run, and a shutdown whose proxy has gone,
// which needs a proxy that answered first. The lines that come whatever the
// timing are all there: the paths did run.
func lifecycle(t *testing.T, out *testutil.Buffer, c, answering *config.Config) {
	log := logging.New(out, c.LogFormat, slog.LevelDebug)
	var wg sync.WaitGroup
	wg.Go(func() {
		code, start, proxy := awaitProxy(c, log, new(wrapper.Supervisor))
		assert.Equal(t, 0, code)
		assert.True(t, start)
		shutDown(c, log, 0, proxy.answered)
		shutDown(answering, log, 0, proxy.answered)
	})
	wg.Go(func() {
		// --proxy-lost's watch, of URLs taken for ready, that all fail.
		w := readiness.Watch(readiness.WatchOptions{URLs: c.ReadyURLs, Ready: c.ReadyURLs, Lost: 20 * time.Millisecond,
			ProbeTimeout: 10 * time.Millisecond, Logger: log})
		<-w.Lost()
		w.Stop()
	})
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, _ = readiness.Await(ctx, readiness.Options{URLs: c.ReadyURLs, MaxInterval: 5 * time.Millisecond,
			ProbeTimeout: 10 * time.Millisecond, ProgressEvery: 5 * time.Millisecond, RefusedHintAfter: 5 * time.Millisecond, Logger: log})
	})
	wg.Go(func() {
		gone := c.ShutdownURLs[0] // refused
		_ = shutdown.Post(context.Background(), shutdown.Options{Targets: []shutdown.Target{{URL: gone}},
			Answered: []string{gone}, Timeout: time.Minute, Logger: log})
	})
	wg.Wait()
	text := out.String()
	for _, line := range []string{"waiting for the proxy", "proxy not ready: starting the command anyway",
		"proxy did not shut down within", "proxy shutdown failed", "the proxy's shutdown endpoint is not enabled",
		"proxy shutdown requested", "proxy already gone", "watching the proxy", "proxy not ready: the command is stopped"} {
		assert.Contains(t, text, line)
	}
}

// noPassword fails if text shows any of pass, raw or percent-decoded.
func noPassword(t *testing.T, text, pass string) {
	t.Helper()
	forms := []string{passMark, pass}
	if dec, err := url.PathUnescape(pass); err == nil {
		forms = append(forms, dec)
	}
	for _, form := range forms {
		if i := strings.Index(text, form); i >= 0 {
			t.Fatalf("the password %q is printed as %q:\n%s", pass, form, text)
		}
	}
}
