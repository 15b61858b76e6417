// Package readiness waits until a proxy's readiness endpoints all answer 2xx.
//
// It owns the polling: the first probe of every URL goes out at once, the
// interval then grows from 5 ms, doubling, up to a ceiling, so the application
// starts within milliseconds of the proxy turning ready without hammering a
// proxy that is slow to start. A redirect is never followed: 3xx means "not
// ready". While waiting, it logs the elapsed time and the last error every few
// seconds, so a pod stuck here says why.
package readiness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// FirstInterval is the pause after the first failed probe; it doubles on
// every further failure up to Options.MaxInterval.
const FirstInterval = 5 * time.Millisecond

// Options says what to poll and how.
type Options struct {
	URLs          []string
	MaxInterval   time.Duration // ceiling of the interval between two probes of a URL
	ProbeTimeout  time.Duration // timeout of one probe
	ProgressEvery time.Duration // how often to log that we are still waiting; 0 means 5s
	Logger        *slog.Logger
}

// Await returns nil once every URL has answered 2xx, or ctx's error when ctx
// ends first. A URL that has answered 2xx once is not probed again.
func Await(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	client := newClient(opts.ProbeTimeout)
	defer client.CloseIdleConnections()

	var (
		mu      sync.Mutex
		lastErr = make(map[string]error, len(opts.URLs))
		wg      sync.WaitGroup
	)
	for _, u := range opts.URLs {
		lastErr[u] = fmt.Errorf("no answer yet")
		wg.Add(1)
		go func() {
			defer wg.Done()
			poll(ctx, client, u, opts.MaxInterval, func(err error) {
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					delete(lastErr, u)
				} else {
					lastErr[u] = err
				}
			})
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()

	every := opts.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	progress := time.NewTicker(every)
	defer progress.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			if err := ctx.Err(); err != nil {
				return err
			}
			return nil
		case <-progress.C:
			mu.Lock()
			for u, err := range lastErr {
				opts.Logger.Info("still waiting for the proxy", "event", "readiness_waiting",
					"url", u, "elapsed", time.Since(start).Round(time.Millisecond), "error", err.Error(),
					"hint", "set --timeout to stop waiting forever")
			}
			mu.Unlock()
		case <-ctx.Done():
			<-done
			return ctx.Err()
		}
	}
}

// poll probes url until it answers 2xx or ctx ends, reporting each outcome.
func poll(ctx context.Context, client *http.Client, url string, max time.Duration, report func(error)) {
	var interval time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		err := probe(ctx, client, url)
		report(err)
		if err == nil {
			return
		}
		interval = nextInterval(interval, max)
		timer.Reset(interval)
	}
}

// nextInterval is the pause after a failed probe, given the previous one (0
// after the first probe): FirstInterval, then doubling, capped at max.
func nextInterval(prev, max time.Duration) time.Duration {
	next := FirstInterval
	if prev > 0 {
		next = prev * 2
	}
	return min(next, max)
}

// probe sends one GET and says why the answer is not "ready", if it is not.
func probe(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	// Drain a little so the connection can be reused by the next probe.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// newClient returns a client that never follows redirects and never goes
// through an HTTP proxy from the environment: the endpoints are the pod's own.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
