// Package shutdown tells the proxy to exit once the application is done, so
// that a Job's pod can complete.
//
// It POSTs every shutdown URL at the same time, each until it answers 2xx or
// the shutdown's time (--shutdown-timeout) runs out: that budget bounds the
// whole shutdown, retries included, and one attempt may use all that is left
// of it, so a proxy that is slow to answer is waited for rather than asked
// again. Timeouts, dropped connections and 5xx answers are retried with
// backoff; 3xx (never followed), 4xx and TLS failures are failures that
// retrying would not fix. A refused connection means the proxy has exited
// only if it was seen running (it answered a readiness probe, or accepted a
// connection during this shutdown); otherwise it may not have started yet,
// and it is asked again until the budget runs out. An answer is read up to
// 64 KiB; its body is read only after a 404, up to 512 bytes, to tell
// Linkerd's switched-off endpoint, and otherwise never waited for.
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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/proxy-await/proxy-await/internal/answer"
)

// Retry backoff bounds: short, since the whole shutdown has a few seconds.
const (
	retryWaitMin = 25 * time.Millisecond
	retryWaitMax = 500 * time.Millisecond
)

// Options says what to POST and how.
type Options struct {
	URLs    []string
	Timeout time.Duration // bounds the whole shutdown, retries included
	// ProxyAnswered says that the proxy was seen running before the
	// shutdown (its readiness URLs answered): a refused connection then
	// means that it has exited.
	ProxyAnswered bool
	Logger        *slog.Logger
}

// NotEnabledHint is what to do when the proxy's shutdown endpoint is
// switched off, as Linkerd's is by default.
const NotEnabledHint = "enable it (Linkerd: annotation config.linkerd.io/proxy-admin-shutdown: enabled, " +
	"or the Helm value proxy.enableShutdownEndpoint=true), or run the proxy as a native sidecar, " +
	"where -S is not needed"

// neverAnsweredHint follows a shutdown that found nothing listening, from
// a proxy never seen running.
const neverAnsweredHint = "the proxy never answered: is the pod meshed (is the sidecar injected), " +
	"and is --proxy (or --shutdown-url) right?"

// wrongURLHint follows a 404 or 405: something answers there, but not a
// shutdown endpoint that takes a POST.
const wrongURLHint = "is --shutdown-url this proxy's shutdown endpoint, and --proxy the right preset?"

// errGone ends the retries of a URL whose proxy was seen running and now
// refuses connections: it has exited, which is what the POST was for. Post
// counts it as success.
var errGone = errors.New("connection refused: the proxy has exited")

// Post POSTs every URL, each until it answers 2xx or opts.Timeout runs out,
// and logs the outcome of each. It returns an error joining every URL's
// failure; a proxy found gone is a success.
func Post(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	errs := make([]error, len(opts.URLs))
	var wg sync.WaitGroup
	for i, u := range opts.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = postOne(ctx, u, opts)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// target is one URL's shutdown: what has been learnt from its attempts.
type target struct {
	url  string
	log  *slog.Logger
	seen atomic.Bool // the proxy was seen running; set by dials too
	n    int         // attempts so far
	last string      // the last attempt's answer or error, in plain words
}

func postOne(ctx context.Context, url string, opts Options) error {
	log := opts.Logger
	start := time.Now()
	t := &target{url: url, log: log}
	t.seen.Store(opts.ProxyAnswered)
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
	case err != nil && ctx.Err() != nil:
		msg := "proxy did not shut down within " + opts.Timeout.String()
		args := []any{"event", "shutdown_failed", "url", url, "elapsed", elapsed, "last", t.last}
		if t.last == "connection refused" && !t.seen.Load() {
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
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		log.Info("proxy shutdown requested", "event", "shutdown_sent", "url", url,
			"status", resp.StatusCode, "elapsed", elapsed)
		return nil
	case notEnabled(resp):
		msg := "the proxy's shutdown endpoint is not enabled"
		log.Error(msg, "event", "shutdown_failed", "url", url, "status", resp.StatusCode,
			"elapsed", elapsed, "hint", NotEnabledHint)
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

// notEnabled recognises the answer of a Linkerd proxy whose shutdown
// endpoint is switched off: 404 "shutdown endpoint is not enabled".
func notEnabled(resp *http.Response) bool {
	if resp.StatusCode != http.StatusNotFound {
		return false
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return strings.Contains(string(body), "shutdown endpoint is not enabled")
}

// client is a retrying HTTP client for one URL: no HTTP proxy from the
// environment, no redirects, no keep-alive (each attempt's connection
// carries one answer, which answer.Conn bounds), and no time limit of its
// own: the context's deadline is the budget.
func (t *target) client() *retryablehttp.Client {
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

func (t *target) connect(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err == nil {
		t.seen.Store(true) // something listens: the proxy has started
	}
	return conn, err
}

func (t *target) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := t.connect(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return answer.NewConn(conn), nil
}

func (t *target) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
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

// checkRetry is the retry policy of the package comment. It also keeps the
// last outcome, for the line that reports a shutdown that ran out of time,
// and logs each attempt at debug level.
func (t *target) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	t.n++
	switch {
	case err == nil:
		t.seen.Store(true)
		t.last = resp.Status
		t.log.Debug("shutdown POST answered", "event", "shutdown_attempt", "url", t.url,
			"attempt", t.n, "status", resp.StatusCode)
	case ctx.Err() != nil || answer.Expired(ctx):
		// An attempt cut by the deadline says nothing of the proxy: the
		// last outcome stands.
		if t.last == "" {
			t.last = "no answer"
		}
	default:
		t.last = answer.Describe(err)
		t.log.Debug("shutdown POST failed", "event", "shutdown_attempt", "url", t.url,
			"attempt", t.n, "error", t.last)
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
	case errors.Is(err, syscall.ECONNREFUSED) && t.seen.Load():
		return false, errGone
	case errors.Is(err, answer.ErrTooLarge), answer.IsTLS(err):
		return false, err
	}
	// Timeouts, resets, and a refused connection from a proxy never seen
	// running: it may still answer.
	return true, nil
}
