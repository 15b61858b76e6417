package readiness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"syscall"
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

// A prober sends one URL's probes over one kept-alive connection that it
// reads and writes itself, for http and https alike. A probe every few
// milliseconds through net/http's client wakes its per-connection reader and
// writer goroutines each time; here a probe is one write and one read on the
// polling goroutine, which keeps the CPU and memory cost of a long wait
// small, and reading the answer itself is what bounds it: at most answer.Max
// bytes, and nothing past a 2xx status line.
//
// The probe goes straight to the URL's host, never through an HTTP proxy
// named by the environment: the endpoint is the pod's own.
type prober struct {
	addr    string
	tls     *tls.Config // nil for http
	request []byte
	timeout time.Duration
	conn    net.Conn
	budget  answer.Reader // what the current answer may still read
	reader  *bufio.Reader

	// An answer's head, and the readers that parse it: reused by every
	// probe.
	head       []byte
	headBytes  bytes.Reader
	headReader *bufio.Reader
}

func newProber(rawURL string, timeout time.Duration) (*prober, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Not url.Parse's error, which quotes the URL, password and all.
		return nil, errors.New("not a valid URL")
	}
	p := &prober{addr: u.Host, timeout: timeout, head: make([]byte, 0, 512), headReader: bufio.NewReader(nil)}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
		p.tls = &tls.Config{ServerName: u.Hostname()}
	}
	if u.Port() == "" {
		p.addr = net.JoinHostPort(u.Hostname(), port)
	}
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: proxy-await\r\nAccept: */*\r\n", u.RequestURI(), u.Host)
	if u.User != nil {
		// The URL's user:password, as Basic auth, as net/http sends them
		// with the shutdown POST.
		pass, _ := u.User.Password()
		fmt.Fprintf(&req, "Authorization: Basic %s\r\n",
			base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)))
	}
	req.WriteString("\r\n")
	p.request = []byte(req.String())
	return p, nil
}

// probe sends one GET and reads its answer. It returns nil when the URL
// answered 2xx, a *StatusError for any other answer, and otherwise what
// failed, in plain words. When the wait ends (ctx), it returns ctx's error
// itself, and no other error it returns is one of ctx's.
//
// A kept-alive connection that the proxy closed after its last answer (an
// HTTP/1.1 server may, with or without "Connection: close") fails the next
// exchange before any byte of an answer: the probe then sends its request
// again on a new connection, once, as net/http retries an idempotent
// request, rather than fail and wait an interval for the next probe.
func (p *prober) probe(ctx context.Context) error {
	// One deadline on the connection bounds the whole probe, a second try
	// included; a context with a timeout would add a runtime timer, and its
	// wake-ups, to every probe.
	deadline := time.Now().Add(p.timeout)
	reused := p.conn != nil
	for {
		if p.conn == nil {
			if err := p.dial(ctx, deadline); err != nil {
				return p.failure(ctx, err)
			}
		}
		status, reuse, err := p.exchangeOn(ctx, deadline)
		if !reuse {
			p.close()
		}
		switch {
		case status != nil && (status.StatusCode < 200 || status.StatusCode > 299):
			return &StatusError{Code: status.StatusCode, Status: status.Status}
		case errors.Is(err, errStale) && reused:
			reused = false
			continue
		case err != nil:
			return p.failure(ctx, err)
		}
		return nil
	}
}

// exchangeOn is exchange on the open connection with the probe's deadline;
// an ended context (a signal, --timeout) interrupts it at once.
func (p *prober) exchangeOn(ctx context.Context, deadline time.Time) (*http.Response, bool, error) {
	conn := p.conn
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	return p.exchange()
}

// errStale is an exchange that failed before any byte of an answer came
// back, because the connection was closed: on a kept-alive connection, the
// proxy closed it after its last answer.
var errStale = errors.New("connection closed before an answer")

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
		// accepts and never answers it is reported as such.
		tc := tls.Client(conn, p.tls)
		_ = tc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return handshakeError{err}
		}
		conn = tc
	}
	p.conn = conn
	p.budget = answer.Reader{R: conn}
	p.reader = bufio.NewReaderSize(&p.budget, 4096)
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
	case errors.As(err, &ne) && ne.Timeout() && errors.As(err, &handshake):
		return &answer.Error{Msg: fmt.Sprintf("TLS handshake did not finish within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
	case errors.As(err, &ne) && ne.Timeout():
		return &answer.Error{Msg: fmt.Sprintf("no answer within --probe-timeout %s", p.timeout), Err: errProbeTimeout}
	}
	return answer.Plain(err)
}

// errProbeTimeout is what a probe that ran out of --probe-timeout unwraps
// to: not the context's DeadlineExceeded, which means that the wait ended.
var errProbeTimeout = errors.New("probe timed out")

// exchange writes the request and reads the answer's status, skipping 1xx
// answers, at most answer.Max bytes in all. It reads the body of an answer
// that is not 2xx, to keep the connection for the next probe; a 2xx is the
// last probe of this URL, and its body is never waited for. It says whether
// the connection can carry the next probe. A status that was read is
// returned even when reading the body failed.
func (p *prober) exchange() (*http.Response, bool, error) {
	if _, err := p.conn.Write(p.request); err != nil {
		return nil, false, staleIfClosed(err)
	}
	// Bytes buffered already count towards this answer.
	p.budget.Left = int64(answer.Max - p.reader.Buffered())
	for first := true; ; first = false {
		resp, err := p.readHead()
		if err != nil && p.budget.Left <= 0 {
			// The cut may fall inside a line, which then reads as malformed.
			err = answer.ErrTooLarge
		}
		if err != nil && first && len(p.head) == 0 {
			err = staleIfClosed(err)
		}
		if err != nil {
			return nil, false, err
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return resp, false, nil // not HTTP any more: drop the connection
		case resp.StatusCode >= 100 && resp.StatusCode <= 199:
			continue // informational: the answer follows
		case resp.StatusCode >= 200 && resp.StatusCode <= 299:
			return resp, false, nil
		}
		return resp, p.skipBody(resp) == nil && !resp.Close, nil
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

// readHead reads an answer's status line and headers. It gathers them into
// a buffer of its own before parsing, since net/textproto, reading from the
// connection, would allocate several times what it reads: an endless header
// then costs the 64 KiB of the buffer and no more. A 2xx status line
// decides on its own: its headers are not waited for, and a connection
// closed right after it is still a 2xx.
func (p *prober) readHead() (*http.Response, error) {
	p.head = p.head[:0]
	for {
		line, err := p.reader.ReadSlice('\n')
		if len(p.head)+len(line) > cap(p.head) {
			// Grow once to the most an answer can be, rather than by
			// doubling, which would allocate twice that on the way.
			p.head = append(make([]byte, 0, max(answer.Max, len(p.head)+len(line))), p.head...)
		}
		p.head = append(p.head, line...)
		if err == nil && len(p.head) == len(line) {
			if code, status, ok := successLine(line); ok {
				return &http.Response{StatusCode: code, Status: status}, nil
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return nil, err
		case len(p.head) > len(line) && (len(line) == 1 || len(line) == 2 && line[0] == '\r'):
			// The blank line after the headers.
			p.headBytes.Reset(p.head)
			p.headReader.Reset(&p.headBytes)
			return http.ReadResponse(p.headReader, nil)
		}
	}
}

// successLine reads a 2xx status line, "HTTP/1.1 200 OK\r\n": the code, and
// the status as net/http gives it ("200 OK"). ok is false for any other
// line, which http.ReadResponse then parses with the headers.
func successLine(line []byte) (code int, status string, ok bool) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) < len("HTTP/1.1 200") || !bytes.HasPrefix(line, []byte("HTTP/1.")) || !isDigit(line[7]) || line[8] != ' ' {
		return 0, "", false
	}
	digits := line[9:12]
	if digits[0] != '2' || !isDigit(digits[1]) || !isDigit(digits[2]) || len(line) > 12 && line[12] != ' ' {
		return 0, "", false
	}
	code = 200 + int(digits[1]-'0')*10 + int(digits[2]-'0')
	return code, string(line[9:]), true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// skipBody reads an answer's body, which follows its head on the
// connection, to the end, so that the next answer starts where the next
// read does. A body with no length ends with the connection.
func (p *prober) skipBody(resp *http.Response) error {
	var body io.Reader
	switch {
	case !bodyAllowed(resp.StatusCode) || resp.ContentLength == 0:
		return nil
	case len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked":
		body = httputil.NewChunkedReader(p.reader)
	case resp.ContentLength >= 0:
		body = io.LimitReader(p.reader, resp.ContentLength)
	default:
		return errors.New("a body without a length")
	}
	_, err := io.Copy(io.Discard, body)
	if err == nil && len(resp.TransferEncoding) > 0 {
		// The trailer, if any, and the blank line that ends it.
		for {
			line, err := p.reader.ReadSlice('\n')
			if err != nil {
				return err
			}
			if len(line) <= 2 && strings.TrimSpace(string(line)) == "" {
				return nil
			}
		}
	}
	return err
}

// bodyAllowed says whether an answer with this status may have a body
// (RFC 9112, section 6.3).
func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && (status < 100 || status > 199)
}

func (p *prober) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn, p.reader = nil, nil
	}
}
