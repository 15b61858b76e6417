package readiness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/answer"
	"github.com/proxy-await/proxy-await/internal/urlport"
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

// A prober sends one URL's probes over one kept-alive connection, for http
// and https alike. net/http writes the request and reads the answers, but
// the prober drives them itself, on the polling goroutine: an
// http.Transport would hand every probe to the reader and writer goroutines
// of its connection, which costs a long wait tens of microseconds of CPU a
// probe. Each answer is bounded by answer.Conn: at most answer.Max bytes,
// and a head that has not ended by then never reaches net/http's parser.
// There is no client, so no redirect to follow: a 3xx is an answer like any
// other. A 2xx is the URL's last probe: its body is never read.
//
// The probe goes straight to the URL's host, never through an HTTP proxy
// named by the environment: the endpoint is the pod's own.
type prober struct {
	addr    string
	tls     *tls.Config // nil for http
	request []byte      // the GET, as net/http writes it
	timeout time.Duration
	conn    *answer.Conn // the kept-alive connection, nil between two
	reader  *bufio.Reader
}

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
	// Every probe sends the same request: written once.
	var request bytes.Buffer
	if err := req.Write(&request); err != nil {
		return nil, errors.New("not a valid URL")
	}
	p := &prober{request: request.Bytes(), timeout: timeout, reader: bufio.NewReader(nil)}
	if req.URL.Scheme == "https" {
		p.tls = &tls.Config{ServerName: req.URL.Hostname()}
	}
	p.addr = net.JoinHostPort(req.URL.Hostname(), urlport.Of(req.URL))
	return p, nil
}

// probe sends one GET and reads its answer. It returns nil when the URL
// answered 2xx, a *StatusError for any other answer, and otherwise what
// failed, in plain words. When the wait ends (ctx), it returns ctx's error
// itself, and no other error it returns is one of ctx's.
//
// A kept-alive connection that the proxy closed after its last answer (an
// HTTP/1.1 server may, with or without "Connection: close"), or as the
// request came, fails the exchange before any of an answer: the probe then
// sends its request again on a new connection, once, as net/http retries a
// GET, rather than fail and wait an interval for the next probe.
func (p *prober) probe(ctx context.Context) error {
	// One deadline on the connection bounds the whole probe, every stage
	// and a second try included; a context with a timeout would add a
	// runtime timer, and its wake-ups, to every probe.
	deadline := time.Now().Add(p.timeout)
	reused := p.conn != nil
	for {
		if p.conn == nil {
			if err := p.dial(ctx, deadline); err != nil {
				return p.failure(ctx, err)
			}
		}
		resp, err := p.exchangeOn(ctx, deadline)
		switch {
		case errors.Is(err, errStale) && reused:
			reused = false
			continue
		case err != nil:
			return p.failure(ctx, err)
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			return &StatusError{Code: resp.StatusCode, Status: resp.Status}
		}
		return nil
	}
}

// exchangeOn is exchange on the open connection with the probe's deadline;
// an ended context (a signal, --timeout) interrupts it at once. A
// connection that cannot carry the next probe is closed.
func (p *prober) exchangeOn(ctx context.Context, deadline time.Time) (*http.Response, error) {
	conn := p.conn
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	resp, reuse, err := p.exchange()
	stop()
	if !reuse {
		p.close()
	}
	return resp, err
}

// errStale is an exchange that failed before any of an answer came back,
// because the connection was closed: on a kept-alive connection, the proxy
// closed it after its last answer.
var errStale = errors.New("connection closed before an answer")

// exchange writes the request and reads the answer's head with net/http,
// skipping 1xx answers. It reads the body of an answer that is not 2xx to
// its end, to keep the connection for the next probe; a 2xx is the last
// probe of this URL, and its body is never waited for. It says whether the
// connection can carry the next probe.
func (p *prober) exchange() (*http.Response, bool, error) {
	if _, err := p.conn.Write(p.request); err != nil {
		return nil, false, staleIfClosed(err)
	}
	// answer.Conn hands on a head only once it is whole: a connection
	// closed before a byte of it is one closed before an answer.
	if _, err := p.reader.Peek(1); err != nil {
		return nil, false, staleIfClosed(err)
	}
	for {
		resp, err := http.ReadResponse(p.reader, nil) // nil: the answer to a GET
		switch {
		case err != nil:
			return nil, false, err
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return resp, false, nil // not HTTP any more: drop the connection
		case resp.StatusCode >= 100 && resp.StatusCode <= 199:
			p.conn.ExpectHead() // informational: the answer's own head follows
			continue
		case resp.StatusCode >= 200 && resp.StatusCode <= 299, resp.Close:
			// What cannot keep the connection is not waited for: a
			// body that ends with the connection (no length), which
			// net/http marks Close.
			return resp, false, nil
		}
		// Read to its end, within the answer's bound and the probe's
		// time, the body keeps the connection for the next probe; a body
		// that fails costs only the connection, and so do bytes past it,
		// which no request asked for.
		_, err = io.Copy(io.Discard, resp.Body)
		return resp, err == nil && p.reader.Buffered() == 0 && p.conn.Buffered() == 0, nil
	}
}

// staleIfClosed is errStale for an error that says the connection was
// closed, and err otherwise.
func staleIfClosed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: %w", errStale, err)
	}
	return err
}

// handshakeError is a TLS handshake that failed.
type handshakeError struct{ error }

func (e handshakeError) Unwrap() error { return e.error }

func (p *prober) dial(ctx context.Context, deadline time.Time) error {
	conn, err := (&net.Dialer{Deadline: deadline}).DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return err
	}
	if p.tls != nil {
		// The handshake is a stage of its own, so that a server that
		// accepts and never answers it is reported as such; answer.Conn
		// counts what the proxy says rather than its records.
		tc := tls.Client(conn, p.tls)
		_ = tc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return handshakeError{err}
		}
		conn = tc
	}
	p.conn = answer.NewConn(conn)
	p.reader.Reset(p.conn)
	return nil
}

// failure says why a probe got no answer: the context's error when the wait
// ended, a timeout with its bound and the stage it cut, or the cause in
// plain words.
func (p *prober) failure(ctx context.Context, err error) error {
	var (
		ne        net.Error
		handshake handshakeError
	)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case answer.Expired(ctx): // cut by --timeout, not --probe-timeout
		return context.DeadlineExceeded
	case !errors.As(err, &ne) || !ne.Timeout():
		return answer.Plain(err)
	case errors.As(err, &handshake):
		return &answer.Error{Msg: fmt.Sprintf("TLS handshake did not finish within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
	}
	return &answer.Error{Msg: fmt.Sprintf("no answer within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
}

// errProbeTimeout is what a probe that ran out of --probe-timeout unwraps
// to: not the context's DeadlineExceeded, which means that the wait ended.
var errProbeTimeout = errors.New("probe timed out")

func (p *prober) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
		p.reader.Reset(nil)
	}
}
