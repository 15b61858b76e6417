// Package shutdown tells the proxy to exit once the application is done, so
// that a Job's pod can complete.
//
// It POSTs every shutdown URL at the same time, each until it answers 2xx or
// the shutdown's time (--shutdown-timeout) runs out: that budget bounds the
// whole shutdown, retries included, and one attempt may use all that is left
// of it, so a proxy that is slow to answer is waited for rather than asked
// again. Timeouts, dropped connections and 5xx answers are retried with
// backoff; 3xx (never followed), 4xx and TLS failures are failures that
// retrying would not fix. An answer is read up to 64 KiB; its body is read
// only after a 404, up to 512 bytes, to tell Linkerd's switched-off endpoint,
// and otherwise never waited for.
//
// A refused connection means that the proxy has exited only when nothing of
// it answers any more: the URL's own host and port answered before (during
// the readiness wait, or an earlier attempt of this shutdown reached it), or
// the proxy's readiness URLs, which answered before, now refuse too. Then it
// is said once and not retried. While a readiness URL of the proxy still
// accepts connections, the proxy runs and its shutdown endpoint is missing
// (Cloud SQL Auth Proxy without --quitquitquit, consul-dataplane on another
// graceful port): it is asked again until the budget runs out, and then an
// error names the likely cause for that proxy, for the Job would otherwise
// hang while the log says all is well. A proxy never seen running may not
// have started yet, and is asked again until the budget runs out.
package shutdown

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/proxy-await/proxy-await/internal/answer"
	"github.com/proxy-await/proxy-await/internal/urlport"
	"github.com/proxy-await/proxy-await/proxies"
)

// Retry backoff bounds: short, since the whole shutdown has a few seconds.
const (
	retryWaitMin = 25 * time.Millisecond
	retryWaitMax = 500 * time.Millisecond
)

// readyCheckTimeout bounds one look at whether a readiness URL still accepts
// connections, after a refused POST.
const readyCheckTimeout = time.Second

// Options says what to POST and how.
type Options struct {
	Targets []Target
	// Answered are the readiness URLs that gave an HTTP answer during the
	// wait: a proxy was running at their host and port.
	Answered []string
	Timeout  time.Duration // bounds the whole shutdown, retries included
	Logger   *slog.Logger
}

// Target is one shutdown URL and what is known of the proxy behind it.
type Target struct {
	URL string
	// Preset names the proxy (a --proxy preset), "" when the URLs do not
	// say: the error for a missing shutdown endpoint names its likely
	// cause for that proxy.
	Preset string
	// Ready are the proxy's readiness URLs: while one still accepts
	// connections, a refused shutdown URL is a missing endpoint, not a
	// proxy gone. Only this proxy's: another proxy's would make one that
	// is gone look as if it ran on. None: the URL's own host and port alone
	// tell.
	Ready []string
}

// MissingHint names the likely cause, for the proxy of preset, of a shutdown
// URL that refuses connections while the proxy still answers, and the
// remedy: the proxy's own, where the proxy table has one.
func MissingHint(preset string) string {
	if p := proxies.Lookup(preset); p != nil && p.MissingHint != "" {
		return p.MissingHint
	}
	return "check --shutdown-url: the proxy still answers at its readiness URL, but nothing listens at this one"
}

// neverAnsweredHint follows a shutdown that found nothing listening, from
// a proxy never seen running.
const neverAnsweredHint = "the proxy never answered: is the pod meshed (is the sidecar injected), " +
	"and is --proxy (or --shutdown-url) right?"

// wrongURLHint follows a 404 or 405: something answers there, but not a
// shutdown endpoint that takes a POST.
const wrongURLHint = "is --shutdown-url this proxy's shutdown endpoint, and --proxy the right preset?"

// errGone ends the retries of a URL whose proxy has exited, which is what
// the POST was for. Post counts it as success.
var errGone = errors.New("connection refused: the proxy has exited")

// Post POSTs every target's URL, each until it answers 2xx or opts.Timeout
// runs out, and logs the outcome of each. It returns an error joining every
// URL's failure; a proxy found gone is a success.
func Post(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	errs := make([]error, len(opts.Targets))
	var wg sync.WaitGroup
	for i, tg := range opts.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = newURLShutdown(tg, opts).post(ctx, opts.Timeout)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// urlShutdown is one URL's shutdown: what is known of its proxy, and where its
// attempts stand.
type urlShutdown struct {
	Target
	log   *slog.Logger
	own   string   // the URL's host:port
	ready []string // the host:port of each readiness URL of the proxy but own

	seen  atomic.Int32 // a seen: what of the proxy has answered; dials raise it too
	state state        // what the last attempt found
	// readyAt is the readiness URL that accepted connections at the last
	// look after a refused attempt that told either way; "" if none did.
	readyAt string
	n       int    // attempts so far
	last    string // the last attempt's answer or error, in plain words
}

// seen is what of a URL's proxy has answered, during the readiness wait
// or an attempt of the shutdown. It only grows.
type seen int32

const (
	nothing  seen = iota // nothing of it: the proxy may not have started yet
	itsReady             // a readiness URL of the proxy, not the URL's own host and port
	itsOwn               // the URL's own host and port
)

// state is where a URL's attempts stand: what the last one that was not
// cut by the deadline found.
type state int

const (
	trying   state = iota // no attempt has ended yet
	answered              // an HTTP answer: a 2xx or a 4xx ends the shutdown, a 5xx is asked again
	failed                // no answer, for a reason that may pass: a timeout, a reset
	refused               // nothing listens at the URL: the proxy may not have started, or it runs without this endpoint
	missing               // nothing listens at the URL while a readiness URL of the proxy accepts connections: it runs without this endpoint
	gone                  // nothing listens where the proxy answered before: it has exited, and the shutdown is done
)

func newURLShutdown(tg Target, opts Options) *urlShutdown {
	t := &urlShutdown{Target: tg, log: opts.Logger, own: hostPort(tg.URL)}
	for _, r := range tg.Ready {
		if hp := hostPort(r); hp != t.own && !slices.Contains(t.ready, hp) {
			t.ready = append(t.ready, hp)
		}
	}
	for _, a := range opts.Answered {
		switch {
		case hostPort(a) == t.own:
			t.saw(itsOwn)
		case slices.Contains(tg.Ready, a):
			t.saw(itsReady)
		}
	}
	return t
}

// saw raises what is known to have answered to s.
func (t *urlShutdown) saw(s seen) {
	for {
		old := t.seen.Load()
		if old >= int32(s) || t.seen.CompareAndSwap(old, int32(s)) {
			return
		}
	}
}

func (t *urlShutdown) seenSoFar() seen { return seen(t.seen.Load()) }

// gotAnswer is an attempt that got an HTTP answer (its connection raised
// what was seen to the URL's own host and port).
func (t *urlShutdown) gotAnswer(resp *http.Response) {
	t.state, t.last = answered, resp.Status
	t.log.Debug("shutdown POST answered", "event", "shutdown_attempt", "url", t.URL,
		"attempt", t.n, "status", resp.StatusCode)
}

// gotNoAnswer is an attempt that failed for another reason than a refused
// connection.
func (t *urlShutdown) gotNoAnswer(err error) {
	t.state, t.last = failed, answer.Describe(err)
	t.log.Debug("shutdown POST failed", "event", "shutdown_attempt", "url", t.URL,
		"attempt", t.n, "error", t.last)
}

// gotRefused is an attempt that found nothing listening at the URL. The
// proxy is gone if nothing of it answers any more (the package comment's
// rule): its own host and port answered before, or its readiness URLs,
// which answered before, now refuse too. While one of them accepts
// connections, the endpoint is missing.
func (t *urlShutdown) gotRefused(ctx context.Context, err error) {
	t.state, t.last = refused, answer.Describe(err)
	t.log.Debug("shutdown POST failed", "event", "shutdown_attempt", "url", t.URL,
		"attempt", t.n, "error", t.last)
	if t.seenSoFar() == itsOwn {
		t.state = gone
		return
	}
	switch answering, refusing := t.readyNow(ctx); {
	case answering != "":
		t.saw(itsReady)
		t.readyAt = answering
	case refusing && t.seenSoFar() == itsReady:
		t.state, t.readyAt = gone, ""
		return
	case refusing:
		t.readyAt = ""
	}
	if t.readyAt != "" {
		t.state = missing
	}
}

// cut is an attempt cut by the deadline: it says nothing new of the proxy,
// and the last outcome stands; but nothing listening where the proxy
// answered before is still a proxy gone.
func (t *urlShutdown) cut(err error) {
	if t.last == "" {
		t.last = "no answer"
	}
	if errors.Is(err, syscall.ECONNREFUSED) && t.seenSoFar() == itsOwn {
		t.state = gone
	}
}

// hostPort is where rawURL connects to: its host and port, the scheme's
// default port if it names none; "" if it does not parse.
func hostPort(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), urlport.Of(u))
}

func (t *urlShutdown) post(ctx context.Context, budget time.Duration) error {
	log, url := t.log, t.URL
	start := time.Now()
	client := t.client()

	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		log.Error("proxy shutdown failed", "event", "shutdown_failed", "url", url, "error", "not a valid URL")
		return errors.New("not a valid URL")
	}
	resp, err := client.Do(req)
	elapsed := time.Since(start).Round(time.Millisecond)
	switch {
	case errors.Is(err, errGone):
		log.Info("proxy already gone, nothing to shut down", "event", "shutdown_proxy_gone",
			"url", url, "elapsed", elapsed)
		return nil
	case err != nil && ctx.Err() != nil && t.state == missing:
		msg := "proxy still running: nothing listens at its shutdown URL"
		log.Error(msg, "event", "shutdown_failed", "url", url, "elapsed", elapsed, "ready_url", t.readyAt,
			"hint", MissingHint(t.Preset))
		return errors.New(msg)
	case err != nil && ctx.Err() != nil:
		msg := "proxy did not shut down within " + budget.String()
		args := []any{"event", "shutdown_failed", "url", url, "elapsed", elapsed, "last", t.last}
		if t.state == refused && t.seenSoFar() == nothing {
			args = append(args, "hint", neverAnsweredHint)
		}
		log.Error(msg, args...)
		return fmt.Errorf("%s (last: %s)", msg, t.last)
	case err != nil:
		msg := answer.Describe(err)
		log.Error("proxy shutdown failed", "event", "shutdown_failed", "url", url, "elapsed", elapsed, "error", msg)
		return errors.New(msg)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		log.Info("proxy shutdown requested", "event", "shutdown_sent", "url", url,
			"status", resp.StatusCode, "elapsed", elapsed)
		return nil
	}
	if off := switchedOff(resp); off != nil {
		msg := "the proxy's shutdown endpoint is not enabled"
		log.Error(msg, "event", "shutdown_failed", "url", url, "status", resp.StatusCode,
			"elapsed", elapsed, "hint", off.Hint)
		return errors.New(msg)
	}
	args := []any{"event", "shutdown_failed", "url", url, "status", resp.StatusCode, "elapsed", elapsed,
		"error", "answered " + resp.Status}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		args = append(args, "hint", wrongURLHint)
	}
	log.Error("proxy shutdown failed", args...)
	return fmt.Errorf("answered %s", resp.Status)
}

// switchedOff recognises the answer of a proxy whose shutdown endpoint is
// switched off, as the proxy table has it (Linkerd's 404 "shutdown
// endpoint is not enabled"), and returns it; nil for any other answer.
// It reads the body only when the status is such an answer's.
func switchedOff(resp *http.Response) *proxies.Answer {
	var body []byte
	for _, p := range proxies.All {
		if p.Off.Status == 0 || p.Off.Status != resp.StatusCode {
			continue
		}
		if body == nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 512))
		}
		if strings.Contains(string(body), p.Off.Body) {
			return &p.Off
		}
	}
	return nil
}

// client is a retrying HTTP client for one URL: no HTTP proxy from the
// environment, no redirects, no keep-alive (each attempt's connection
// carries one answer, which answer.Conn bounds), and no time limit of its
// own: the context's deadline is the budget.
func (t *urlShutdown) client() *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: &http.Transport{
				// Never through an HTTP proxy from the environment: the
				// endpoint is the pod's own.
				Proxy:             nil,
				DisableKeepAlives: true,
				DialContext:       t.dial,
				DialTLSContext:    t.dialTLS,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		RetryWaitMin: retryWaitMin,
		RetryWaitMax: retryWaitMax,
		RetryMax:     1 << 20, // bounded by the context's deadline, not a count
		CheckRetry:   t.checkRetry,
		Backoff:      retryablehttp.DefaultBackoff,
		ErrorHandler: func(resp *http.Response, err error, _ int) (*http.Response, error) {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, err
		},
	}
}

func (t *urlShutdown) connect(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err == nil {
		t.saw(itsOwn) // something listens: the proxy has started
	}
	return conn, err
}

func (t *urlShutdown) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := t.connect(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return answer.NewConn(conn), nil
}

func (t *urlShutdown) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := t.connect(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(conn, &tls.Config{ServerName: host})
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return answer.NewConn(tc), nil
}

// checkRetry is the retry policy of the package comment: it moves the
// URL's shutdown on by each attempt's outcome, and says whether to ask again.
func (t *urlShutdown) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	t.n++
	switch {
	case err == nil:
		t.gotAnswer(resp)
	case ctx.Err() != nil || answer.Expired(ctx):
		t.cut(err)
	case errors.Is(err, syscall.ECONNREFUSED):
		t.gotRefused(ctx, err)
	default:
		t.gotNoAnswer(err)
	}
	switch {
	case err == nil && resp.StatusCode < 500:
		return false, nil // an answer that decides, even on the deadline
	case ctx.Err() != nil:
		return false, ctx.Err()
	case err == nil:
		// The status decides: close the body, which retryablehttp would
		// otherwise read before the next attempt, however slow it comes.
		resp.Body.Close()
		return true, nil
	case t.state == gone:
		return false, errGone
	case errors.Is(err, answer.ErrTooLarge), answer.IsTLS(err):
		return false, err
	}
	// Timeouts, resets, and a refused connection from a proxy that still
	// runs or was never seen running: it may still answer.
	return true, nil
}

// readyNow looks whether the proxy's readiness URLs accept connections: it
// returns the first that does, or says whether every one refused. A look
// that ends otherwise (a timeout, the budget's end) tells neither.
func (t *urlShutdown) readyNow(ctx context.Context) (answering string, refusing bool) {
	if len(t.ready) == 0 {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	refusing = true
	for _, addr := range t.ready {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return t.readyURL(addr), false
		}
		refusing = refusing && errors.Is(err, syscall.ECONNREFUSED)
	}
	return "", refusing
}

// readyURL is the readiness URL at addr.
func (t *urlShutdown) readyURL(addr string) string {
	for _, r := range t.Ready {
		if hostPort(r) == addr {
			return r
		}
	}
	return ""
}
