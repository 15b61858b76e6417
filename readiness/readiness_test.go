package readiness

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/answer"
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

// refusingURL is a loopback URL that refuses every connection until the
// test ends: a port merely closed could be taken by anyone meanwhile.
func refusingURL(t *testing.T) string {
	return "http://" + testutil.RefusingAddr(t) + "/ready"
}

// cancelWhen is a context cancelled once cond holds (polled), or after 20 s
// so that a broken wait fails the test instead of hanging it: tests end a
// wait on what the servers saw, never after a fixed time.
func cancelWhen(t *testing.T, cond func() bool) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		defer cancel()
		testutil.Until(testutil.WaitLimit, cond)
	}()
	return ctx
}

// opts polls urls with a probe timeout no probe reaches on a loaded machine:
// a probe timed out would be sent again, and a test that counts probes, or
// reads the last error, would see one it did not expect. No progress line
// comes either, in the log of a test that reads it line by line, unless the
// test asks for them.
func opts(urls ...string) Options {
	return Options{URLs: urls, MaxInterval: 20 * time.Millisecond, ProbeTimeout: bound,
		ProgressEvery: time.Hour, Logger: logging.Discard()}
}

func TestFirstProbeAtOnce(t *testing.T) {
	e := &endpoint{}
	url := serve(t, e)
	res, err := Await(context.Background(), opts(url))
	require.NoError(t, err)
	assert.Equal(t, Result{Answered: []string{url}}, res)
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
	_, err := Await(context.Background(), opts(serve(t, e)))
	require.NoError(t, err)
	require.Equal(t, int64(6), e.probes.Load())
	// The pauses are at least the schedule's (timers never fire early).
	want := []time.Duration{5, 10, 20, 20, 20}
	for i := 1; i < len(e.times); i++ {
		assert.GreaterOrEqual(t, e.times[i].Sub(e.times[i-1]), want[i-1]*time.Millisecond, "pause %d", i)
	}
}

func TestRedirectIsNotReady(t *testing.T) {
	var followed atomic.Bool
	var redirects atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		redirects.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) { followed.Store(true) })
	ctx := cancelWhen(t, func() bool { return redirects.Load() >= 3 })
	res, err := Await(ctx, opts(serve(t, mux)))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "answered 302 Found", res.errors())
	assert.False(t, followed.Load(), "a redirect must never be followed")
}

func TestEveryURLMustBeReady(t *testing.T) {
	a, b := &endpoint{}, &endpoint{notReady: 1 << 30}
	ctx := cancelWhen(t, func() bool { return a.probes.Load() >= 1 && b.probes.Load() >= 3 })
	urlA, urlB := serve(t, a), serve(t, b)
	res, err := Await(ctx, opts(urlA, urlB))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(1), a.probes.Load(), "a ready URL is not probed again")
	assert.Equal(t, []string{urlB}, res.urls(), "only the URL not ready is pending")

	c, d := &endpoint{notReady: 3}, &endpoint{notReady: 1}
	_, err = Await(context.Background(), opts(serve(t, c), serve(t, d)))
	require.NoError(t, err)
	assert.Equal(t, int64(4), c.probes.Load())
	assert.Equal(t, int64(2), d.probes.Load())
}

// The shutdown reads "connection refused" as "the proxy has exited" only if
// the proxy answered: Await says which URLs it answered.
func TestAwaitSaysWhetherTheProxyAnswered(t *testing.T) {
	notReady, refused := serve(t, &endpoint{notReady: 1 << 30}), refusingURL(t)
	for _, tc := range []struct {
		name     string
		urls     []string
		answered []string
		errors   string
	}{
		{"not ready", []string{notReady}, []string{notReady}, "answered 503 Service Unavailable"},
		{"refused", []string{refused}, nil, "connection refused"},
		{"one of two refused", []string{notReady, refused}, []string{notReady}, "answered 503 Service Unavailable; connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// End the wait once every URL has failed a probe: the debug
			// line each first failure logs is the event to wait for.
			var log testutil.Buffer
			o := opts(tc.urls...)
			o.Logger = logging.New(&log, "text", slog.LevelDebug)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				defer cancel()
				testutil.Until(testutil.WaitLimit, func() bool {
					all := true
					for _, u := range tc.urls {
						all = all && strings.Contains(log.String(), "probe failed url="+u+" ")
					}
					return all
				})
			}()
			res, err := Await(ctx, o)
			assert.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, tc.answered, res.Answered)
			assert.Equal(t, tc.urls, res.urls())
			assert.Equal(t, tc.errors, res.errors())
			assert.Equal(t, tc.name == "refused", res.refused())
		})
	}
}

// The timeout line says what follows the wait, and its hint fits the
// error: "raise --timeout" only where waiting longer can help and the
// command is not started anyway.
func TestTimeoutLine(t *testing.T) {
	const a, b = "http://127.0.0.1:4191/ready", "http://127.0.0.1:15021/healthz/ready"
	notReady := &StatusError{Code: http.StatusServiceUnavailable, Status: "503 Service Unavailable"}
	notFound := &StatusError{Code: http.StatusNotFound, Status: "404 Not Found"}
	refused := &answer.Error{Msg: "connection refused", Err: syscall.ECONNREFUSED}
	const (
		raise      = ` (hint: raise --timeout, or set --timeout-fatal=false to start the command anyway)`
		neverThere = ` (hint: connection refused for the whole wait: is the pod meshed (is the sidecar injected), and is --proxy the right preset?)`
	)
	for _, tc := range []struct {
		name           string
		res            Result
		fatal, command bool
		want           string
	}{
		{"giving up", Result{Answered: []string{a}, Pending: []Pending{{URL: a, Err: notReady}}}, true, true,
			`error: proxy not ready: giving up timeout=1s url=` + a + ` error="answered 503 Service Unavailable"` + raise},
		{"starting anyway", Result{Answered: []string{a}, Pending: []Pending{{URL: a, Err: notReady}}}, false, true,
			`warning: proxy not ready: starting the command anyway timeout=1s url=` + a + ` error="answered 503 Service Unavailable"`},
		{"done waiting", Result{Answered: []string{a}, Pending: []Pending{{URL: a, Err: notReady}}}, false, false,
			`warning: proxy not ready: done waiting timeout=1s url=` + a + ` error="answered 503 Service Unavailable"`},
		{"refused throughout", Result{Pending: []Pending{{URL: a, Err: refused}}}, true, true,
			`error: proxy not ready: giving up timeout=1s url=` + a + ` error="connection refused"` + neverThere},
		{"refused after answering", Result{Answered: []string{a}, Pending: []Pending{{URL: a, Err: refused}}}, true, true,
			`error: proxy not ready: giving up timeout=1s url=` + a + ` error="connection refused"` + raise},
		{"404", Result{Answered: []string{a, b}, Pending: []Pending{{URL: a, Err: notReady}, {URL: b, Err: notFound}}}, false, true,
			`warning: proxy not ready: starting the command anyway timeout=1s url=` + a + `,` + b +
				` error="answered 503 Service Unavailable; answered 404 Not Found"` +
				` (hint: nothing answers at this path: is the readiness URL this proxy's, and --proxy the right preset?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf testutil.Buffer
			tc.res.LogTimeout(logging.New(&buf, "text", slog.LevelInfo), time.Second, tc.fatal, tc.command)
			assert.Equal(t, "proxy-await: "+tc.want+"\n", buf.String())
		})
	}
}

// A wait that ends before any probe has ended says that nothing answered
// yet, not that the port refused or that a probe timed out.
func TestWaitEndsBeforeAnyProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	res, err := Await(ctx, opts(refusingURL(t)))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "no answer yet", res.errors())
	assert.False(t, res.refused())
	assert.Empty(t, res.Answered)
}

func TestProbeTimeout(t *testing.T) {
	var probes atomic.Int64
	hang := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		<-r.Context().Done()
	})
	o := opts(serve(t, hang))
	o.ProbeTimeout = 20 * time.Millisecond
	ctx := cancelWhen(t, func() bool { return probes.Load() >= 3 })
	res, err := Await(ctx, o)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "no answer within --probe-timeout 20ms", res.errors())
	assert.Greater(t, probes.Load(), int64(1), "a probe that hangs is abandoned and sent again")
}

// With -v, each probe error is logged once, when it changes.
func TestDistinctProbeErrorsAtDebug(t *testing.T) {
	var n atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) {
		case 1, 2, 3:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 4, 5:
			w.WriteHeader(http.StatusInternalServerError)
		case 6:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	var buf testutil.Buffer
	o := opts(url)
	o.Logger = logging.New(&buf, "text", -4)
	_, err := Await(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`proxy-await: debug: probe failed url=` + url + ` error="answered 503 Service Unavailable"`,
		`proxy-await: debug: probe failed url=` + url + ` error="answered 500 Internal Server Error"`,
		`proxy-await: debug: probe failed url=` + url + ` error="answered 503 Service Unavailable"`,
	}, strings.Split(strings.TrimSpace(buf.String()), "\n"))
}

// logWatch reads a log as Await writes it, and notes when it first saw each
// line: a line seen at T was written at T or before.
type logWatch struct {
	buf   testutil.Buffer
	lines []string
	seen  []time.Time
}

// until waits, at most bound, for done to hold for the lines seen so far.
func (w *logWatch) until(t *testing.T, what string, done func(lines []string) bool) {
	t.Helper()
	testutil.EventuallyWithin(t, bound, func() bool {
		s, now := w.buf.String(), time.Now()
		complete := strings.Split(s[:strings.LastIndex(s, "\n")+1], "\n")
		for _, line := range complete[len(w.lines) : len(complete)-1] {
			w.lines = append(w.lines, line)
			w.seen = append(w.seen, now)
		}
		return done(w.lines)
	}, "no %s; log:\n%s", what, &w.buf)
}

// after waits for the first line that starts with mark and n lines after
// it, and returns the index of that line.
func (w *logWatch) after(t *testing.T, mark string, n int) int {
	t.Helper()
	i := -1
	w.until(t, fmt.Sprintf("line %q and %d after it", mark, n), func(lines []string) bool {
		i = slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, mark) })
		return i >= 0 && len(lines) > i+n
	})
	return i
}

// progressLine matches a progress line about url, whatever its elapsed time
// (the first submatch), with its last error and hint ("" for none).
func progressLine(url, lastErr, hint string) *regexp.Regexp {
	re := `^proxy-await: still waiting for the proxy url=` + regexp.QuoteMeta(url) +
		` elapsed=(\S+) error="` + regexp.QuoteMeta(lastErr) + `"`
	if hint != "" {
		re += regexp.QuoteMeta(` (hint: ` + hint + `)`)
	}
	return regexp.MustCompile(re + `$`)
}

// probeFailed is the start of the debug line of a URL's first failed probe.
// The wait logs it as it sets the URL's last error, under the lock that a
// progress tick takes: every progress line before it says "no answer yet",
// every one after it reports that error.
const probeFailed = `proxy-await: debug: probe failed url=`

func awaitInBackground(t *testing.T, o Options) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_, _ = Await(ctx, o)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// The hint of the progress line fits the flags: "set --timeout" only when
// there is no --timeout.
func TestProgressHintFitsTheFlags(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		hint    string
	}{
		{0, "set --timeout to stop waiting forever"},
		{time.Hour, ""},
	} {
		t.Run(tc.timeout.String(), func(t *testing.T) {
			// The first answer waits for a progress line: the hint is on
			// lines with no answer yet and on lines with one.
			answer := make(chan struct{})
			url := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				select {
				case <-answer:
					rw.WriteHeader(http.StatusServiceUnavailable)
				case <-r.Context().Done():
				}
			}))
			w := &logWatch{}
			o := opts(url)
			o.ProgressEvery = 20 * time.Millisecond
			o.Timeout = tc.timeout
			o.Logger = logging.New(&w.buf, "text", slog.LevelDebug)
			awaitInBackground(t, o)
			w.after(t, "proxy-await: still waiting for the proxy ", 0)
			close(answer)
			i := w.after(t, probeFailed, 1)
			require.Positive(t, i)
			for _, line := range w.lines[:i] {
				assert.Regexp(t, progressLine(url, "no answer yet", tc.hint), line)
			}
			assert.Equal(t, probeFailed+url+` error="answered 503 Service Unavailable"`, w.lines[i])
			assert.Regexp(t, progressLine(url, "answered 503 Service Unavailable", tc.hint), w.lines[i+1])
		})
	}
}

// A port that refuses connections for RefusedHintAfter gets one hint asking
// whether the proxy is there at all, on the first progress line where the
// run of refusals is that long, less half a period of slack.
func TestRefusedHint(t *testing.T) {
	const every, hintAfter = 200 * time.Millisecond, time.Second
	url := refusingURL(t)
	w := &logWatch{}
	o := opts(url)
	o.ProgressEvery = every
	o.RefusedHintAfter = hintAfter
	o.Timeout = time.Hour
	o.Logger = logging.New(&w.buf, "text", slog.LevelDebug)
	// The run of refusals begins after this (the first probe is sent once
	// Await has started), and before its first refusal is seen in the log.
	begun := time.Now()
	awaitInBackground(t, o)
	i := w.after(t, probeFailed, 0)
	require.Equal(t, probeFailed+url+` error="connection refused"`, w.lines[i])
	refused := w.seen[i]

	plain := progressLine(url, "connection refused", "")
	hinted := progressLine(url, "connection refused", "connection refused for 1s: "+refusedHint)
	// Ten lines without the hint are well past its time: each line is a
	// later tick, a period after the one before.
	h := -1
	w.until(t, "the hint and two lines after it", func(lines []string) bool {
		h = slices.IndexFunc(lines[i+1:], hinted.MatchString)
		if h >= 0 {
			return len(lines) >= i+1+h+3
		}
		return len(lines) >= i+1+10
	})
	for _, line := range w.lines[:i] {
		assert.Regexp(t, progressLine(url, "no answer yet", ""), line)
	}
	lines, seen := w.lines[i+1:], w.seen[i+1:]
	require.GreaterOrEqual(t, h, 0, "no hint in %d progress lines:\n%s", len(lines), strings.Join(lines, "\n"))
	for k, line := range lines[:h+3] {
		if k == h {
			// Its tick came once the run had lasted long enough, and the run
			// began after begun.
			assert.GreaterOrEqual(t, seen[k].Sub(begun), hintAfter-every/2, "the hint came early: %s", line)
			continue
		}
		if !assert.Regexp(t, plain, line, "line %d after the first refusal", k) || k > h {
			continue
		}
		// A line before the hint: its tick came before the run had lasted
		// long enough. The tick came at begun+elapsed or later (elapsed is
		// rounded to the millisecond), and the run began before refused.
		elapsed, err := time.ParseDuration(plain.FindStringSubmatch(line)[1])
		require.NoError(t, err)
		assert.Less(t, begun.Add(elapsed).Sub(refused), hintAfter-every/2+time.Millisecond/2,
			"the hint came late, after %s", line)
	}
}

// Cloud SQL Auth Proxy is no mesh, and serves /startup only when started
// with --health-check: a URL of the cloudsql preset that refuses gets a
// hint that asks for that flag; the preset of each URL decides its own.
func TestRefusedHintNamesTheProxy(t *testing.T) {
	sql, mesh := refusingURL(t), refusingURL(t)
	w := &logWatch{}
	o := opts(sql, mesh)
	o.Presets = map[string]string{sql: "cloudsql", mesh: "istio"}
	o.ProgressEvery, o.RefusedHintAfter = 20*time.Millisecond, 20*time.Millisecond
	o.Timeout = time.Hour
	o.Logger = logging.New(&w.buf, "text", slog.LevelDebug)
	awaitInBackground(t, o)
	hinted := func(url string) func(string) bool {
		return func(l string) bool {
			return strings.Contains(l, "url="+url+" ") && strings.Contains(l, "(hint: connection refused for ")
		}
	}
	w.until(t, "a hint for each URL", func(lines []string) bool {
		return slices.ContainsFunc(lines, hinted(sql)) && slices.ContainsFunc(lines, hinted(mesh))
	})
	cloudsql := "connection refused for 20ms: is cloud-sql-proxy in the pod, and started with --health-check " +
		"(without it, it serves no /startup on its --http-port, 9090 by default)?"
	assert.Regexp(t, progressLine(sql, "connection refused", cloudsql), w.lines[slices.IndexFunc(w.lines, hinted(sql))])
	assert.Regexp(t, progressLine(mesh, "connection refused", "connection refused for 20ms: "+refusedHint),
		w.lines[slices.IndexFunc(w.lines, hinted(mesh))])

	res := Result{Pending: []Pending{{URL: sql, Preset: "cloudsql"}, {URL: mesh, Preset: "istio"}, {URL: "http://127.0.0.1:9/ready"}}}
	assert.Equal(t, refusedHintFor("cloudsql")+"; "+refusedHint, res.refusedHints(), "each proxy's hint once")
}

func TestPasswordsAreNotLogged(t *testing.T) {
	srv := httptest.NewServer(&endpoint{notReady: 1 << 30})
	t.Cleanup(srv.Close)
	url := func(password string) string {
		return strings.Replace(srv.URL, "://", "://probe:"+password+"@", 1) + "/ready"
	}
	w := &logWatch{}
	o := opts(url("s3cret"))
	o.ProgressEvery = 20 * time.Millisecond
	o.Logger = logging.New(&w.buf, "text", slog.LevelDebug)
	awaitInBackground(t, o)
	i := w.after(t, probeFailed, 1)
	hint := "set --timeout to stop waiting forever"
	for _, line := range w.lines[:i] {
		assert.Regexp(t, progressLine(url("xxxxx"), "no answer yet", hint), line)
	}
	assert.Equal(t, probeFailed+url("xxxxx")+` error="answered 503 Service Unavailable"`, w.lines[i])
	assert.Regexp(t, progressLine(url("xxxxx"), "answered 503 Service Unavailable", hint), w.lines[i+1])
	assert.NotContains(t, w.buf.String(), "s3cret")
}

// Go's HTTP client would send a probe of http://0.0.0.0:PORT through the
// proxy that HTTP_PROXY names (only localhost and loopback addresses are
// exempt), yet on Linux that address reaches the loopback server directly:
// a probe that honoured the environment would reach the counting proxy.
func TestEnvironmentProxyIgnored(t *testing.T) {
	proxy, proxied := testutil.CountingProxy(t)
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(v, proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	srv := httptest.NewServer(&endpoint{})
	t.Cleanup(srv.Close)
	url := strings.Replace(srv.URL, "127.0.0.1", "0.0.0.0", 1) + "/ready"
	// The control: Go's default rules proxy this URL.
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: testutil.EnvironmentProxy}}).Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, int64(1), proxied.Load(), "Go's default client goes through the proxy for %s", url)

	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	_, err = Await(ctx, opts(url))
	require.NoError(t, err)

	tlsSrv := httptest.NewUnstartedServer(&endpoint{})
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake it fails is the point
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	assert.EqualError(t, probeOnce(t, strings.Replace(tlsSrv.URL, "127.0.0.1", "0.0.0.0", 1)+"/ready", bound),
		"TLS: certificate is valid for 127.0.0.1, ::1, not 0.0.0.0", "the probe reached the server itself")
	assert.Equal(t, int64(1), proxied.Load(), "no probe went through the proxy")
}

// A port that refused connections and now takes them but never finishes a
// TLS handshake: the progress lines report the handshake, and the refusal
// and its hint are gone with it. (A probe timeout used to read as the end
// of the wait, and was dropped: the lines said "no answer yet", or the
// stale refusal, for the whole wait.) The probe timeout is long beside a
// connect on loopback, which a loaded machine may stall: a connect cut by
// it is no answer at all, another error than the handshake's.
func TestNewerErrorReplacesARefusal(t *testing.T) {
	for _, scheme := range []string{"https", "http"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			addr, listen := silentListener(t)
			url := scheme + "://" + addr + "/ready"
			w := &logWatch{}
			o := opts(url)
			o.ProbeTimeout = time.Second
			o.ProgressEvery = 20 * time.Millisecond
			o.RefusedHintAfter = time.Millisecond // every refused line would carry it
			o.Timeout = time.Hour
			o.Logger = logging.New(&w.buf, "text", slog.LevelDebug)
			awaitInBackground(t, o)
			i := w.after(t, probeFailed, 0)
			require.Equal(t, probeFailed+url+` error="connection refused"`, w.lines[i])
			listen()
			want := "no answer within --probe-timeout 1s"
			if scheme == "https" {
				want = "TLS handshake did not finish within --probe-timeout 1s"
			}
			j := w.after(t, probeFailed+url+` error="`+want+`"`, 2)
			assert.Regexp(t, progressLine(url, want, ""), w.lines[j+1])
			assert.Regexp(t, progressLine(url, want, ""), w.lines[j+2])
		})
	}
}
