package readiness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// A prober sends one URL's probes.
type prober interface {
	probe(ctx context.Context) error // nil when the URL answered 2xx
	close()
}

func newProber(rawURL string, timeout time.Duration) (prober, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" {
		return newConnProber(u, timeout), nil
	}
	return newClientProber(rawURL, timeout), nil
}

// connProber sends plain-HTTP probes over one kept-alive connection that it
// reads and writes itself. A probe every few milliseconds through net/http's
// client wakes its per-connection reader and writer goroutines each time;
// here a probe is one write and one read on the polling goroutine, which
// keeps the CPU and memory cost of a long wait small.
type connProber struct {
	addr    string
	request []byte
	timeout time.Duration
	conn    net.Conn
	reader  *bufio.Reader
}

func newConnProber(u *url.URL, timeout time.Duration) *connProber {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: proxy-await\r\nAccept: */*\r\n\r\n", u.RequestURI(), u.Host)
	return &connProber{addr: addr, request: []byte(req), timeout: timeout}
}

// maxBody is the most of an answer's body read to keep its connection; a
// larger body (no readiness endpoint sends one) closes the connection.
const maxBody = 64 << 10

func (p *connProber) probe(ctx context.Context) error {
	// One deadline on the connection bounds the whole probe; a context with
	// a timeout would add a runtime timer, and its wake-ups, to every probe.
	deadline := time.Now().Add(p.timeout)
	if p.conn == nil {
		dialer := net.Dialer{Deadline: deadline}
		conn, err := dialer.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			return timeoutError(err, p.timeout)
		}
		p.conn, p.reader = conn, bufio.NewReaderSize(conn, 4096)
	}
	conn := p.conn
	_ = conn.SetDeadline(deadline)
	// An ended context (a signal, --timeout) interrupts the exchange at once.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	status, reuse, err := p.exchange()
	if !reuse || err != nil {
		p.close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return timeoutError(err, p.timeout)
	}
	if status.StatusCode < 200 || status.StatusCode > 299 {
		return fmt.Errorf("answered %s", status.Status)
	}
	return nil
}

// timeoutError says what a timeout means here; other errors pass unchanged.
func timeoutError(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer within --probe-timeout %s", timeout)
	}
	return err
}

// exchange writes the request and reads the answer, saying whether the
// connection can carry the next probe.
func (p *connProber) exchange() (*http.Response, bool, error) {
	if _, err := p.conn.Write(p.request); err != nil {
		return nil, false, err
	}
	resp, err := http.ReadResponse(p.reader, nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, false, err
	}
	return resp, !resp.Close && n <= maxBody, nil
}

func (p *connProber) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn, p.reader = nil, nil
	}
}

// clientProber sends HTTPS probes through net/http.
type clientProber struct {
	url    string
	client *http.Client
}

func newClientProber(rawURL string, timeout time.Duration) *clientProber {
	return &clientProber{url: rawURL, client: &http.Client{
		Timeout: timeout,
		// Never through an HTTP proxy from the environment: the endpoint is
		// the pod's own.
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (p *clientProber) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
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

func (p *clientProber) close() { p.client.CloseIdleConnections() }
