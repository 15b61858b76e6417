package readiness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proxy-await/proxy-await/internal/answer"
)

// StatusError is a probe that the proxy answered with a status other than
// 2xx: the proxy is up, not ready.
type StatusError struct {
	Code   int
	Status string
}

func (e *StatusError) Error() string { return "answered " + e.Status }

// answered says whether a probe's outcome was an HTTP answer from the proxy.
func answered(err error) bool {
	var status *StatusError
	return err == nil || errors.As(err, &status)
}

// A prober sends one URL's probes with an http.Client of its own, for http
// and https alike: no redirect is followed (a 3xx is an answer like any
// other), and informational 1xx answers are skipped. It keeps one
// connection alive from probe to probe; net/http sends a probe again, once,
// on a new connection when the proxy closed the kept-alive one before an
// answer began, and drops a connection on which bytes come that no request
// asked for. Each answer is bounded by answer.Conn: at most answer.Max
// bytes, and a head that has not ended by then never reaches net/http's
// parser. In the wait a 2xx is the URL's last probe: its body is never read;
// the watch (keepReady) reads it, to keep the connection for the next.
//
// The probe goes straight to the URL's host, never through an HTTP proxy
// named by the environment: the endpoint is the pod's own.
type prober struct {
	transport *http.Transport
	client    *http.Client
	request   *http.Request // every probe sends the same
	timeout   time.Duration
	keepReady bool // a 2xx is not the last probe (Watch): read its body to keep the connection

	mu    sync.Mutex
	conns []*answer.Conn // the connections dialed and not seen closed yet: one, mostly
}

func newProber(rawURL string, timeout time.Duration) (*prober, error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		// Not url.Parse's error, which quotes the URL, password and all.
		return nil, errors.New("not a valid URL")
	}
	// The client sends the URL's user:password as Basic auth, as the
	// shutdown's does.
	req.Header.Set("User-Agent", "proxy-await")
	req.Header.Set("Accept", "*/*")
	p := &prober{request: req, timeout: timeout}
	p.transport = &http.Transport{
		Proxy:              nil,
		DialContext:        p.dial,
		DialTLSContext:     p.dialTLS,
		DisableCompression: true, // the request says what it accepts, and the body is not read
	}
	p.client = &http.Client{
		Transport:     p.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return p, nil
}

// probe sends one GET and reads its answer. It returns nil when the URL
// answered 2xx, a *StatusError for any other answer, and otherwise what
// failed, in plain words. When the wait ends (ctx), it returns ctx's error
// itself, and no other error it returns is one of ctx's. --probe-timeout
// bounds every stage: connect, TLS handshake, the answer's head and, for
// an answer that keeps the connection, its body.
func (p *prober) probe(ctx context.Context) error {
	st := &stage{deadline: time.Now().Add(p.timeout)}
	if d, ok := ctx.Deadline(); ok && d.Before(st.deadline) {
		st.deadline = d // --timeout's end comes first
	}
	probeCtx, cancel := context.WithDeadline(context.WithValue(ctx, stageKey{}, st), st.deadline)
	defer cancel()
	resp, err := p.client.Do(p.request.WithContext(probeCtx))
	if err != nil {
		return p.failure(ctx, st, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.keepOrDrop(probeCtx, resp)
		return &StatusError{Code: resp.StatusCode, Status: resp.Status}
	}
	if p.keepReady {
		p.keepOrDrop(probeCtx, resp)
		return nil
	}
	resp.Body.Close() // unread: the connection goes with it
	return nil
}

// keepOrDrop ends an answer that is not ready, or a ready one that
// another probe follows (Watch). Read to its end, within the
// answer's bound and the probe's time, its body keeps the connection for
// the next probe, once what came past the answer has been seen
// (answer.Conn.Settle); what cannot keep it is not waited for: a body that
// ends with the connection (net/http marks it Close), or another protocol
// (101). A body that fails costs only the connection.
func (p *prober) keepOrDrop(ctx context.Context, resp *http.Response) {
	if resp.Close || resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body.Close()
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The answer came on one of the prober's connections; any other is
	// idle, and settled already.
	p.mu.Lock()
	p.conns = slices.DeleteFunc(p.conns, (*answer.Conn).Closed)
	conns := slices.Clone(p.conns)
	p.mu.Unlock()
	for _, c := range conns {
		c.Settle(ctx)
	}
}

// stage is where a probe stands, for a dial that net/http runs apart from
// the probe: the probe's deadline, and whether its TLS handshake began and
// has not finished.
type stage struct {
	deadline    time.Time
	handshaking atomic.Bool
}

type stageKey struct{}

func stageOf(ctx context.Context) *stage {
	if st, ok := ctx.Value(stageKey{}).(*stage); ok {
		return st
	}
	return &stage{}
}

// dial connects for a probe, by its deadline: net/http dials on a context
// of its own, which the probe's end does not cancel.
func (p *prober) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{Deadline: stageOf(ctx).deadline}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return p.bound(conn), nil
}

// bound is conn as answer.Conn bounds its answers, one of the prober's.
func (p *prober) bound(conn net.Conn) *answer.Conn {
	c := answer.NewConn(conn)
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	return c
}

// dialTLS connects and shakes hands for a probe, by its deadline. The
// handshake is a stage of its own, so that a server that accepts and never
// answers it is reported as such; answer.Conn counts what the proxy says
// rather than its records.
func (p *prober) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	st := stageOf(ctx)
	conn, err := (&net.Dialer{Deadline: st.deadline}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(conn, &tls.Config{ServerName: host})
	_ = tc.SetDeadline(st.deadline)
	st.handshaking.Store(true)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, handshakeError{err}
	}
	st.handshaking.Store(false)
	_ = tc.SetDeadline(time.Time{}) // later probes are bounded by their own contexts
	return p.bound(tc), nil
}

// handshakeError is a TLS handshake that failed. It keeps its cause from
// http.Client, which words a plain HTTP answer to the handshake as a
// scheme mismatch and drops the cause; the messages say what the cause is.
type handshakeError struct{ error }

func (e handshakeError) Unwrap() error { return e.error }

// failure says why a probe got no answer: the context's error when the wait
// ended, a timeout with its bound and the stage it cut, or the cause in
// plain words.
func (p *prober) failure(ctx context.Context, st *stage, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case answer.Expired(ctx): // cut by --timeout, not --probe-timeout
		return context.DeadlineExceeded
	case !timedOut(err):
		return answer.Plain(err)
	case st.handshaking.Load():
		return &answer.Error{Msg: fmt.Sprintf("TLS handshake did not finish within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
	}
	return &answer.Error{Msg: fmt.Sprintf("no answer within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
}

// timedOut says whether err is a timeout at any depth: the probe's context
// ran out, or a dial or handshake gave up on the probe's deadline.
func timedOut(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
			return true
		}
	}
	return false
}

// errProbeTimeout is what a probe that ran out of --probe-timeout unwraps
// to: not the context's DeadlineExceeded, which means that the wait ended.
var errProbeTimeout = errors.New("probe timed out")

// close drops the kept-alive connection, and a dial still under way.
func (p *prober) close() { p.transport.CloseIdleConnections() }
