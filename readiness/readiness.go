// Package readiness waits until a proxy's readiness endpoints all answer 2xx.
//
// It owns the polling: the first probe of every URL goes out at once, the
// interval then grows from 5 ms, doubling, up to a ceiling, so the application
// starts within milliseconds of the proxy turning ready without hammering a
// proxy that is slow to start. A redirect is never followed: 3xx means "not
// ready". An answer is read up to 64 KiB, and a 2xx decides on its status
// line and headers, without waiting for the body. While waiting, it logs the
// elapsed time and the last error every few seconds, so a pod stuck here says
// why; with debug logging, each probe error is logged when it changes. When
// the wait runs out of time, Result.LogTimeout says so.
//
// Await also reports which URLs the proxy answered at all, which tells the
// shutdown whether a refused connection means the proxy has exited or has not
// started yet. Once the command runs, Watch goes on probing, about once a
// second, and says when a URL has failed every probe for --proxy-lost.
package readiness

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/answer"
	hintpkg "github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/proxies"
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
	// RefusedHintAfter is how long a URL must refuse connections before a
	// progress line asks whether the proxy is there at all; 0 means 10s.
	RefusedHintAfter time.Duration
	// Timeout is the caller's --timeout, 0 for none: the progress line's
	// hint depends on it.
	Timeout time.Duration
	// Presets names the preset of each URL whose proxy the configuration
	// knows: a URL that refuses connections gets that proxy's hint.
	Presets map[string]string
	Logger  *slog.Logger
}

// Result is what the wait learnt about the proxy.
type Result struct {
	// Answered are the URLs that gave an HTTP answer (any status) at least
	// once, in Options.URLs' order: a proxy was running there.
	Answered []string
	// Pending are the URLs that had not answered 2xx when the wait ended,
	// in Options.URLs' order, each with its last error in plain words.
	Pending []Pending
}

// Pending is a URL that was not ready when the wait ended.
type Pending struct {
	URL    string
	Err    error
	Preset string // the preset of the proxy behind URL; "" when the configuration does not say
}

// urls and errors format Pending for a log line: the URLs as a list (the
// logger shows each without its password), the errors in the same order,
// separated by "; ".
func (r Result) urls() []string {
	s := make([]string, len(r.Pending))
	for i, p := range r.Pending {
		s[i] = p.URL
	}
	return s
}

func (r Result) errors() string {
	s := make([]string, len(r.Pending))
	for i, p := range r.Pending {
		s[i] = p.Err.Error()
	}
	return strings.Join(s, "; ")
}

// refused says whether every pending URL's last probe was refused and none
// of them ever answered: nothing listens where the proxy should be.
func (r Result) refused() bool {
	if len(r.Pending) == 0 {
		return false
	}
	for _, p := range r.Pending {
		if !errors.Is(p.Err, syscall.ECONNREFUSED) || slices.Contains(r.Answered, p.URL) {
			return false
		}
	}
	return true
}

// refusedHint is the hint for a proxy port that refuses connections.
const refusedHint = "is the pod meshed (is the sidecar injected), and is --proxy the right preset?"

// refusedHintFor is the hint for a readiness URL of the preset's proxy that
// refuses connections: the proxy's own, where the proxy table has one.
func refusedHintFor(preset string) string {
	if p := proxies.Lookup(preset); p != nil && p.RefusedHint != "" {
		return p.RefusedHint
	}
	return refusedHint
}

// refusedHints is the hint for the pending URLs when they all refused, as
// refused says: each proxy's hint once.
func (r Result) refusedHints() string {
	var hints []string
	for _, p := range r.Pending {
		if h := refusedHintFor(p.Preset); !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	return strings.Join(hints, "; ")
}

// Hint is what to do about a probe error that waiting longer does not fix,
// and "" for the others: a readiness path that is not there (404), an
// answer larger than any readiness endpoint sends, a TLS failure that the
// same certificate or server will repeat.
func Hint(err error) string {
	var (
		status *StatusError
		record tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &status) && status.Code == http.StatusNotFound:
		return "nothing answers at this path: is the readiness URL this proxy's, and --proxy the right preset?"
	case errors.Is(err, answer.ErrTooLarge):
		return "no readiness endpoint answers with that much: is the readiness URL this proxy's?"
	case errors.As(err, &record):
		return "the port does not speak TLS: write the readiness URL with http://"
	case answer.IsTLS(err):
		return "the proxy's certificate does not verify here: probe its http:// endpoint, or trust its CA with SSL_CERT_FILE"
	}
	return ""
}

// hint is the hint of the first pending URL whose error waiting does not
// fix; "" when waiting may still help every one.
func (r Result) hint() string {
	for _, p := range r.Pending {
		if h := Hint(p.Err); h != "" {
			return h
		}
	}
	return ""
}

// LogTimeout says that the wait ran out of --timeout (timeout), with what
// the probes got last. fatal is --timeout-fatal: the command is not started;
// command says whether there is one to start. The hint says "raise
// --timeout" only where waiting longer can help.
func (r Result) LogTimeout(log *slog.Logger, timeout time.Duration, fatal, command bool) {
	args := []any{"event", "readiness_timeout", "timeout", timeout, "url", r.urls(), "error", r.errors()}
	switch hint := r.hint(); {
	case r.refused():
		args = append(args, "hint", "connection refused for the whole wait: "+r.refusedHints())
	case hint != "":
		args = append(args, "hint", hint)
	case fatal:
		args = append(args, "hint", "raise --timeout, or set --timeout-fatal=false to start the command anyway")
	}
	switch {
	case fatal:
		log.Error("proxy not ready: giving up", args...)
	case !command:
		log.Warn("proxy not ready: done waiting", args...)
	default:
		log.Warn("proxy not ready: starting the command anyway", args...)
	}
}

// state is what the wait knows of one URL.
type state struct {
	last         error     // nil once ready
	answered     bool      // an HTTP answer came, any status
	refusedSince time.Time // when the current run of refused probes began; zero if none
	hinted       bool      // the refused hint was given
}

// Await returns once every URL has answered 2xx (a nil error), or ctx's error
// when ctx ends first. A URL that has answered 2xx once is not probed again.
func Await(ctx context.Context, opts Options) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	w := newWait(opts)
	var wg sync.WaitGroup
	for _, u := range opts.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			poll(ctx, u, opts.ProbeTimeout, opts.MaxInterval, func(sent time.Time, err error) { w.record(u, sent, err) })
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()

	progress := time.NewTicker(w.every)
	defer progress.Stop()
	for {
		select {
		case <-done:
			return w.outcome(ctx)
		case now := <-progress.C:
			w.progress(now)
		case <-ctx.Done():
			<-done
			return w.outcome(ctx)
		}
	}
}

// wait is what Await knows of its URLs, shared by their pollers and its
// progress lines.
type wait struct {
	opts      Options
	start     time.Time
	every     time.Duration // between two progress lines
	hintAfter time.Duration // refused this long, a URL's progress line says why it may be

	mu     sync.Mutex
	states map[string]*state
}

func newWait(opts Options) *wait {
	w := &wait{opts: opts, start: time.Now(), every: opts.ProgressEvery, hintAfter: opts.RefusedHintAfter,
		states: make(map[string]*state, len(opts.URLs))}
	if w.every <= 0 {
		w.every = 5 * time.Second
	}
	if w.hintAfter <= 0 {
		w.hintAfter = 10 * time.Second
	}
	// Every URL is in the map before any poller can report into it.
	for _, u := range opts.URLs {
		w.states[u] = &state{last: errors.New("no answer yet")}
	}
	return w
}

// record is the outcome err of a probe of u sent at sent.
func (w *wait) record(u string, sent time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.states[u]
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		if s.refusedSince.IsZero() {
			s.refusedSince = sent
		}
	case err == context.Canceled || err == context.DeadlineExceeded:
		// The wait ended: an interrupted probe says nothing.
		// Only the context's own errors mean that (see probe):
		// a probe timeout is an error like any other.
		return
	default:
		s.refusedSince = time.Time{}
	}
	s.answered = s.answered || answered(err)
	if err != nil && err.Error() != s.last.Error() {
		w.opts.Logger.Debug("probe failed", "event", "readiness_probe", "url", u, "error", err.Error())
	}
	s.last = err
}

// progress logs a line for each URL not ready yet, with what would help.
func (w *wait) progress(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range w.opts.URLs {
		s := w.states[u]
		if s.last == nil {
			continue
		}
		hint := Hint(s.last)
		switch {
		case hint != "":
		// The tick may fire a hair before the run of refusals is
		// hintAfter long: half a period of slack.
		case !s.hinted && !s.refusedSince.IsZero() && now.Sub(s.refusedSince) >= w.hintAfter-w.every/2:
			s.hinted = true
			hint = "connection refused for " + w.hintAfter.String() + ": " + refusedHintFor(w.opts.Presets[u])
		case w.opts.Timeout == 0:
			hint = "set --timeout to stop waiting forever"
		}
		w.opts.Logger.Info("still waiting for the proxy", hintpkg.Attrs([]any{"event", "readiness_waiting", "url", u,
			"elapsed", now.Sub(w.start).Round(time.Millisecond), "error", s.last.Error()}, hint)...)
	}
}

// outcome is the wait's result once the pollers are done.
func (w *wait) outcome(ctx context.Context) (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var r Result
	for _, u := range w.opts.URLs {
		s := w.states[u]
		if s.answered {
			r.Answered = append(r.Answered, u)
		}
		if s.last != nil {
			r.Pending = append(r.Pending, Pending{URL: u, Err: s.last, Preset: w.opts.Presets[u]})
		}
	}
	if len(r.Pending) == 0 {
		return r, nil
	}
	return r, ctx.Err()
}

// poll probes rawURL until it answers 2xx or ctx ends, reporting each outcome
// with the time its probe was sent.
func poll(ctx context.Context, rawURL string, timeout, max time.Duration, report func(time.Time, error)) {
	p, err := newProber(rawURL, timeout)
	if err != nil {
		report(time.Now(), err)
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
		sent := time.Now()
		err := p.probe(ctx)
		report(sent, err)
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
