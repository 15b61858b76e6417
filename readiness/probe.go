package readiness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
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

// A prober sends one URL's probes through net/http, on one kept-alive
// connection for http and https alike. The transport is used directly, not
// through a client, so there is no redirect to follow: a 3xx is an answer
// like any other. Each answer is bounded by answer.Conn: at most answer.Max
// bytes, and a head that has not ended by then never reaches net/http's
// parser. A 2xx is the URL's last probe: its body is never read.
//
// The probe goes straight to the URL's host, never through an HTTP proxy
// named by the environment: the endpoint is the pod's own.
type prober struct {
	req       *http.Request
	tls       *tls.Config
	timeout   time.Duration
	transport *http.Transport
	trace     *httptrace.ClientTrace
	conn      *answer.Conn // the connection of the probe under way
}

// attempt is one probe under way. net/http dials with a context of its own,
// which keeps the request's values but not its deadline: the dial finds the
// probe's context here, and says how far it got.
type attempt struct {
	ctx       context.Context
	handshake atomic.Bool // the TLS handshake is under way
}

type attemptKey struct{}

func newProber(rawURL string, timeout time.Duration) (*prober, error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		// Not url.Parse's error, which quotes the URL, password and all.
		return nil, errors.New("not a valid URL")
	}
	req.Header.Set("User-Agent", "proxy-await")
	req.Header.Set("Accept", "*/*")
	if u := req.URL.User; u != nil {
		// The URL's user:password, as Basic auth, as net/http's client
		// sends them with the shutdown POST.
		pass, _ := u.Password()
		req.SetBasicAuth(u.Username(), pass)
	}
	p := &prober{req: req, timeout: timeout, tls: &tls.Config{ServerName: req.URL.Hostname()}}
	p.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		DialTLSContext:         p.dialTLS,
		MaxIdleConnsPerHost:    1,
		MaxResponseHeaderBytes: answer.Max,
		DisableCompression:     true,
	}
	p.trace = &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { p.conn = info.Conn.(*answer.Conn) },
		Got1xxResponse: func(int, textproto.MIMEHeader) error {
			p.conn.ExpectHead() // the answer's own head follows
			return nil
		},
	}
	return p, nil
}

// probe sends one GET and reads its answer. It returns nil when the URL
// answered 2xx, a *StatusError for any other answer, and otherwise what
// failed, in plain words. When the wait ends (ctx), it returns ctx's error
// itself, and no other error it returns is one of ctx's.
//
// A kept-alive connection that the proxy closed after its last answer (an
// HTTP/1.1 server may, with or without "Connection: close") fails the next
// exchange: net/http then sends the GET again, once, on a new connection,
// rather than fail and wait an interval for the next probe.
func (p *prober) probe(ctx context.Context) error {
	a := &attempt{}
	var cancel context.CancelFunc
	a.ctx, cancel = context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req := p.req.WithContext(httptrace.WithClientTrace(context.WithValue(a.ctx, attemptKey{}, a), p.trace))
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		return p.failure(ctx, a, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil // closed unread: its connection goes
	}
	if !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols {
		// Read to its end, within the answer's bound and the probe's time,
		// the body keeps the connection for the next probe; a body that
		// fails costs only the connection. What cannot keep it is not
		// waited for: a body that ends with the connection (no length),
		// or another protocol, which the probe's time no longer bounds.
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return &StatusError{Code: resp.StatusCode, Status: resp.Status}
}

// failure says why a probe got no answer: the context's error when the wait
// ended, a timeout with its bound and the stage it cut, or the cause in
// plain words.
func (p *prober) failure(ctx context.Context, a *attempt, err error) error {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case answer.Expired(ctx): // cut by --timeout, not --probe-timeout
		return context.DeadlineExceeded
	case !errors.As(err, &ne) || !ne.Timeout():
		return answer.Plain(err)
	case a.handshake.Load():
		return &answer.Error{Msg: fmt.Sprintf("TLS handshake did not finish within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
	}
	return &answer.Error{Msg: fmt.Sprintf("no answer within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
}

// errProbeTimeout is what a probe that ran out of --probe-timeout unwraps
// to: not the context's DeadlineExceeded, which means that the wait ended.
var errProbeTimeout = errors.New("probe timed out")

func (p *prober) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	a := ctx.Value(attemptKey{}).(*attempt)
	conn, err := (&net.Dialer{}).DialContext(a.ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return answer.NewConn(conn), nil
}

// dialTLS connects and shakes hands itself, so that answer.Conn counts what
// the proxy says rather than its records, and so that a server that accepts
// and never answers the handshake is reported as such.
func (p *prober) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	a := ctx.Value(attemptKey{}).(*attempt)
	conn, err := (&net.Dialer{}).DialContext(a.ctx, network, addr)
	if err != nil {
		return nil, err
	}
	a.handshake.Store(true)
	tc := tls.Client(conn, p.tls)
	if err := tc.HandshakeContext(a.ctx); err != nil {
		conn.Close()
		return nil, err
	}
	a.handshake.Store(false)
	return answer.NewConn(tc), nil
}

func (p *prober) close() { p.transport.CloseIdleConnections() }
