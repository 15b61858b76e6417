// Package answer bounds what a proxy's HTTP answer can cost and says in plain
// words why an exchange with the proxy failed.
//
// readiness and shutdown both talk to a process proxy-await does not control:
// an answer is read up to Max bytes (status line, headers and body together),
// and a failure is described for the person reading the log ("connection
// refused", "TLS: certificate signed by unknown authority"), not as the chain
// of Go errors behind it.
package answer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Expired says whether ctx's deadline has passed, whether or not ctx has
// noticed yet: a dial gives up on the deadline by its own clock, a moment
// before ctx reports it, and that failure is the wait's end, not the
// proxy's.
func Expired(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Max is the most of one answer that is read: a readiness or shutdown
// endpoint answers in a few hundred bytes.
const Max = 64 << 10

// ErrTooLarge is the read error past Max bytes of one answer.
var ErrTooLarge = errors.New("answer larger than 64 KiB")

// Error is a failure told in plain words that still unwraps to its cause,
// so that errors.Is(err, syscall.ECONNREFUSED) keeps working.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Plain returns err told in plain words (see Describe), nil for nil.
func Plain(err error) error {
	var plain *Error
	if err == nil || errors.As(err, &plain) {
		return err
	}
	return &Error{Msg: Describe(err), Err: err}
}

// Describe says what went wrong in an exchange with the proxy, without the
// Go error chain around it ("Post \"http://...\": dial tcp ...: connect:").
// A timeout is "timed out": the caller knows which bound ran out.
func Describe(err error) string {
	var (
		plain  *Error
		dnsErr *net.DNSError
		netErr net.Error
		errno  syscall.Errno
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &plain):
		return plain.Msg
	case errors.Is(err, ErrTooLarge):
		return ErrTooLarge.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before an answer"
	case IsTLS(err):
		return tlsFailure(err)
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "cannot resolve " + dnsErr.Name + ": no such host"
		}
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return strings.TrimPrefix(innermost(err).Error(), "tls: ")
}

// IsTLS says whether err is a TLS handshake or certificate failure: the same
// certificate, or the same server, would fail again.
func IsTLS(err error) bool { return tlsFailure(err) != "" }

// tlsFailure describes a TLS handshake or certificate failure; "" when err
// is none.
func tlsFailure(err error) string {
	var (
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	switch {
	case errors.As(err, &certErr):
		return "TLS: " + strings.TrimPrefix(certErr.Err.Error(), "x509: ")
	case errors.As(err, &unknown):
		return "TLS: " + strings.TrimPrefix(unknown.Error(), "x509: ")
	case errors.As(err, &hostname):
		return "TLS: " + strings.TrimPrefix(hostname.Error(), "x509: ")
	case errors.As(err, &invalid):
		return "TLS: " + strings.TrimPrefix(invalid.Error(), "x509: ")
	case errors.As(err, &record):
		return "TLS: the server does not speak TLS"
	case errors.As(err, &alert):
		return "TLS: the server refused the handshake (" + alert.Error() + ")"
	}
	return ""
}

// innermost drops the wrappers that only say which call failed, or only
// put words before their cause ("net/http: HTTP/1.x transport connection
// broken: malformed HTTP status code").
func innermost(err error) error {
	for {
		var (
			urlErr *url.Error
			opErr  *net.OpError
		)
		switch cause := errors.Unwrap(err); {
		case errors.As(err, &urlErr):
			err = urlErr.Err
		case errors.As(err, &opErr):
			err = opErr.Err
		case cause != nil && strings.HasSuffix(err.Error(), ": "+cause.Error()):
			err = cause
		default:
			return err
		}
	}
}
