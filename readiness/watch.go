package readiness

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/proxy-await/proxy-await/internal/proxyloss"
)

// WatchOptions says what Watch keeps probing while the command runs
// (--proxy-lost), and when a proxy is lost.
type WatchOptions struct {
	// URLs are the readiness URLs; each counts alone, so that losing any
	// one is losing a proxy, whichever proxy it stands for.
	URLs []string
	// Ready are those of URLs that answered 2xx already. The others (not
	// ready when the wait ended, with --timeout-fatal=false) are watched
	// from their first 2xx: a proxy never found is not lost.
	Ready []string
	// Lost is how long every probe of a URL must have failed for its
	// proxy to be lost.
	Lost         time.Duration
	ProbeTimeout time.Duration // timeout of one probe, as the wait's
	Logger       *slog.Logger
}

// A Watcher probes each readiness URL about once a second, one goroutine a
// URL, and reports the first proxy lost on Lost. It decides nothing else: what a
// loss does to the command is the supervisor's to say.
type Watcher struct {
	losses chan proxyloss.Loss // holds the first loss, for the supervisor to take
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Watch starts watching opts.URLs; Stop ends it.
func Watch(opts WatchOptions) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{losses: make(chan proxyloss.Loss, 1), cancel: cancel}
	every := watchInterval(opts.Lost)
	for _, u := range opts.URLs {
		p, err := newProber(u, opts.ProbeTimeout)
		if err != nil {
			continue // the wait found it ready, so it parses: never here
		}
		p.keepReady = true
		ws := &urlWatch{url: u, after: opts.Lost, log: opts.Logger}
		if slices.Contains(opts.Ready, u) {
			ws.start()
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer p.close()
			w.followURL(ctx, p, ws, every)
		}()
	}
	return w
}

// watchInterval is the time between two probes of a URL: a second, or less
// for a --proxy-lost under two seconds, so that two probes at least fall
// within it.
func watchInterval(after time.Duration) time.Duration {
	return max(min(time.Second, after/2), 10*time.Millisecond)
}

// Lost yields the first loss, once. A nil Watcher never loses anything.
func (w *Watcher) Lost() <-chan proxyloss.Loss {
	if w == nil {
		return nil
	}
	return w.losses
}

// Stop ends every probe and returns once the goroutines are gone. It may be
// called more than once, and on a nil Watcher.
func (w *Watcher) Stop() {
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
}

// followURL probes one URL every interval, counting from each probe's send,
// until its proxy is lost or ctx ends.
func (w *Watcher) followURL(ctx context.Context, p *prober, ws *urlWatch, every time.Duration) {
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sent := time.Now()
		err := p.probe(ctx)
		if ctx.Err() != nil {
			return // stopped: an interrupted probe says nothing
		}
		if loss, gone := ws.record(sent, err); gone {
			select {
			case w.losses <- loss:
			default: // another URL's loss came first
			}
			return
		}
		timer.Reset(max(every-time.Since(sent), 0))
	}
}

// urlState is where the watch of one URL stands.
type urlState int

const (
	unseen  urlState = iota // not ready yet: a failure does not count
	healthy                 // the last probe answered 2xx
	failing                 // every probe since `since` failed
)

// urlWatch is what the watch knows of one URL; only its goroutine touches
// it.
type urlWatch struct {
	url   string
	after time.Duration // --proxy-lost: how long its probes fail before its proxy is lost
	log   *slog.Logger
	state urlState
	since time.Time // failing: when the first failed probe was sent
}

// record is the outcome err of a probe sent at sent. It says whether the
// proxy is lost, and how: a probe that failed alone for --proxy-lost (one
// that timed out, with a --proxy-lost under --probe-timeout) is enough.
func (ws *urlWatch) record(sent time.Time, err error) (proxyloss.Loss, bool) {
	switch {
	case err == nil && ws.state == unseen:
		ws.start()
		return proxyloss.Loss{}, false
	case err == nil && ws.state == failing:
		ws.recover()
		return proxyloss.Loss{}, false
	case err == nil, ws.state == unseen:
		return proxyloss.Loss{}, false
	case ws.state == healthy:
		ws.fail(sent, err)
	}
	if failing := time.Since(ws.since); failing >= ws.after {
		return proxyloss.Loss{URL: ws.url, Failing: failing.Round(time.Millisecond), Err: err}, true
	}
	return proxyloss.Loss{}, false
}

// start counts the URL's failures from now on.
func (ws *urlWatch) start() {
	ws.state = healthy
	ws.log.Debug("watching the proxy", "event", "proxy_watch_started", "url", ws.url, "proxy_lost", ws.after)
}

// fail begins a run of failed probes, which ends the command if it lasts
// --proxy-lost.
func (ws *urlWatch) fail(sent time.Time, err error) {
	ws.state, ws.since = failing, sent
	ws.log.Warn("proxy not ready: the command is stopped if this lasts --proxy-lost", "event", "proxy_failing",
		"url", ws.url, "proxy_lost", ws.after, "error", err.Error())
}

// recover ends a run of failed probes shorter than --proxy-lost.
func (ws *urlWatch) recover() {
	ws.log.Info("proxy ready again", "event", "proxy_recovered", "url", ws.url,
		"failing", time.Since(ws.since).Round(time.Millisecond))
	ws.state, ws.since = healthy, time.Time{}
}
