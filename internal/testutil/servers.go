package testutil

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http/httpproxy"
	"golang.org/x/sys/unix"
)

// RawServer accepts TCP connections on a free loopback port and hands each to
// serve, in a goroutine of its own, with a reader for the requests; the
// connection is closed when serve returns. It is for servers that misbehave
// in ways net/http will not: endless headers, unsolicited answers, resets.
// It returns the address and a count of the connections accepted.
func RawServer(t testing.TB, serve func(conn net.Conn, r *bufio.Reader)) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conn.Close()
				serve(conn, bufio.NewReader(conn))
			}()
		}
	}()
	return ln.Addr().String(), &conns
}

// ReadRequest reads the next request from r and drops its body; it returns
// nil when the client closed the connection or sent something else.
func ReadRequest(r *bufio.Reader) *http.Request {
	req, err := http.ReadRequest(r)
	if err != nil {
		return nil
	}
	req.Body.Close()
	return req
}

// CountingProxy is an HTTP proxy that forwards nothing: it answers 502 to
// every request, CONNECT included, and counts them. Pointing HTTP_PROXY and
// HTTPS_PROXY at it shows whether a client goes through the environment's
// proxy.
func CountingProxy(t testing.TB) (string, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// EnvironmentProxy is http.ProxyFromEnvironment without its cache: Go reads
// the proxy variables once per process, so a test run again (-count) would
// see the first run's proxy, long gone.
func EnvironmentProxy(r *http.Request) (*url.URL, error) {
	return httpproxy.FromEnvironment().ProxyFunc()(r.URL)
}

// RefusingAddr is a loopback address where every connection is refused: a
// TCP socket bound to it and never listening keeps the port from anyone
// else until the test ends, which a closed listener would not.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
}
