package answer

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// What Go's HTTP client returns, wrapped as it wraps it, in plain words.
func TestDescribe(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:4191/shutdown", Err: &net.OpError{
			Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{wrap(syscall.ECONNREFUSED), "connection refused"},
		{wrap(syscall.ECONNRESET), "connection reset"},
		{wrap(syscall.ENETUNREACH), "network is unreachable"},
		{&url.Error{Op: "Post", URL: "x", Err: io.EOF}, "connection closed before an answer"},
		{fmt.Errorf("reading: %w", ErrTooLarge), "answer larger than 64 KiB"},
		{&url.Error{Op: "Post", URL: "x", Err: x509.UnknownAuthorityError{}}, "TLS: certificate signed by unknown authority"},
		{&url.Error{Op: "Get", URL: "x", Err: &net.DNSError{Name: "proxy.invalid", Err: "no such host", IsNotFound: true}},
			"cannot resolve proxy.invalid: no such host"},
		{&url.Error{Op: "Post", URL: "x", Err: context.DeadlineExceeded}, "timed out"},
		{&Error{Msg: "no answer within --probe-timeout 1s", Err: os.ErrDeadlineExceeded}, "no answer within --probe-timeout 1s"},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", errors.New(`malformed HTTP status code "20"`)),
			`malformed HTTP status code "20"`},
	} {
		got := Describe(tc.err)
		assert.Equal(t, tc.want, got, "%v", tc.err)
		for _, jargon := range []string{"dial tcp", "Post ", "context deadline exceeded", "x509:", "http://"} {
			assert.NotContains(t, got, jargon)
		}
	}
	assert.True(t, errors.Is(Plain(wrap(syscall.ECONNREFUSED)), syscall.ECONNREFUSED), "a plain error keeps its cause")
}

// A real refused dial, as the probes and POSTs meet it.
func TestDescribeARealDial(t *testing.T) {
	// No timeout: a refused dial fails at once, and one that timed out on a
	// loaded machine would say something else.
	_, err := net.Dial("tcp", testutil.RefusingAddr(t))
	require.Error(t, err)
	assert.Equal(t, "connection refused", Describe(err))
}
