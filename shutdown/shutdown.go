// Package shutdown tells the proxy to exit once the application is done, so
// that a Job's pod can complete.
//
// It POSTs every shutdown URL at the same time, each until it answers 2xx or
// the shared deadline passes. Timeouts, dropped connections and 5xx answers
// are retried with backoff; a refused connection means the proxy is already
// gone and is not retried; 3xx (never followed) and 4xx answers are failures
// that retrying would not fix.
package shutdown

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// AttemptTimeout bounds one POST, so that a proxy that accepts the connection
// and never answers is asked again before the deadline.
const AttemptTimeout = time.Second

// Retry backoff bounds: short, since the whole shutdown has a few seconds.
const (
	retryWaitMin = 25 * time.Millisecond
	retryWaitMax = 500 * time.Millisecond
)

// ErrProxyGone reports that the proxy refused the connection: it has exited
// already, which is what the POST was for.
var ErrProxyGone = errors.New("connection refused: the proxy is not running")

// Post POSTs every URL, each until it answers 2xx or timeout runs out, and
// logs the outcome of each. It returns an error joining every URL's failure
// (ErrProxyGone counts as success and is not returned).
func Post(ctx context.Context, urls []string, timeout time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = postOne(ctx, u, log)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func postOne(ctx context.Context, url string, log *slog.Logger) error {
	start := time.Now()
	var lastStatus string
	client := newClient(log, func(resp *http.Response) { lastStatus = resp.Status })
	defer client.HTTPClient.CloseIdleConnections()

	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	resp, err := client.Do(req)
	elapsed := time.Since(start).Round(time.Millisecond)
	switch {
	case errors.Is(err, ErrProxyGone):
		log.Info("proxy already gone, nothing to shut down", "event", "shutdown_proxy_gone",
			"url", url, "elapsed", elapsed)
		return nil
	case err != nil:
		if lastStatus != "" {
			err = fmt.Errorf("%w (last answer %s)", err, lastStatus)
		}
		log.Error("proxy shutdown failed", "event", "shutdown_failed", "url", url,
			"elapsed", elapsed, "error", err.Error())
		return fmt.Errorf("%s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		log.Error("proxy shutdown failed", "event", "shutdown_failed", "url", url,
			"status", resp.StatusCode, "elapsed", elapsed, "error", "answered "+resp.Status)
		return fmt.Errorf("%s: answered %s", url, resp.Status)
	}
	log.Info("proxy shutdown requested", "event", "shutdown_sent", "url", url,
		"status", resp.StatusCode, "elapsed", elapsed)
	return nil
}

func newClient(log *slog.Logger, sawResponse func(*http.Response)) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient: &http.Client{
			Timeout:       AttemptTimeout,
			Transport:     &http.Transport{Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		Logger:       debugLogger{log},
		RetryWaitMin: retryWaitMin,
		RetryWaitMax: retryWaitMax,
		RetryMax:     1 << 20, // bounded by the context's deadline, not a count
		CheckRetry:   checkRetry,
		Backoff:      retryablehttp.DefaultBackoff,
		ResponseLogHook: func(_ retryablehttp.Logger, resp *http.Response) {
			sawResponse(resp)
		},
		ErrorHandler: func(resp *http.Response, err error, _ int) (*http.Response, error) {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, err
		},
	}
}

// checkRetry is the retry policy of SPEC.md's shutdown step.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, fmt.Errorf("gave up after --shutdown-timeout: %w", ctxErr)
	}
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, ErrProxyGone
		}
		return true, nil // timeouts, resets: the proxy may still answer
	}
	return resp.StatusCode >= 500, nil
}

// debugLogger keeps the library's own lines at debug level under our prefix.
type debugLogger struct{ log *slog.Logger }

func (l debugLogger) Error(msg string, kv ...any) { l.log.Debug("shutdown: "+msg, kv...) }
func (l debugLogger) Info(msg string, kv ...any)  { l.log.Debug("shutdown: "+msg, kv...) }
func (l debugLogger) Debug(msg string, kv ...any) { l.log.Debug("shutdown: "+msg, kv...) }
func (l debugLogger) Warn(msg string, kv ...any)  { l.log.Debug("shutdown: "+msg, kv...) }
