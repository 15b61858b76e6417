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
	"log/slog"
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

	var (
		mu      sync.Mutex
		lastErr = make(map[string]error, len(opts.URLs))
		wg      sync.WaitGroup
	)
	// Every URL is in the map before any poller can report into it.
	for _, u := range opts.URLs {
		lastErr[u] = fmt.Errorf("no answer yet")
	}
	for _, u := range opts.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			poll(ctx, u, opts.ProbeTimeout, opts.MaxInterval, func(err error) {
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

// poll probes rawURL until it answers 2xx or ctx ends, reporting each outcome.
func poll(ctx context.Context, rawURL string, timeout, max time.Duration, report func(error)) {
	p, err := newProber(rawURL, timeout)
	if err != nil {
		report(err)
		<-ctx.Done()
		return
	}
	defer p.close()
	var interval time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		err := p.probe(ctx)
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
