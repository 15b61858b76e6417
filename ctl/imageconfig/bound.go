package imageconfig

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// errPastBound is an answer longer than a fetch reads.
var errPastBound = errors.New("answer past the bound of what is read")

// bounded is the transport of one fetch: it reads no answer past limit
// bytes (the library itself reads a manifest up to 100 MiB), and remembers
// that it cut one, whatever the library makes of the error.
type bounded struct {
	next  http.RoundTripper
	limit int64
	hit   atomic.Bool
}

func (b *bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > b.limit {
		resp.Body.Close()
		b.hit.Store(true)
		return nil, errPastBound
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: b.limit, hit: &b.hit}
	return resp, nil
}

// boundedBody fails once more than its bound has come.
type boundedBody struct {
	io.ReadCloser
	left int64
	hit  *atomic.Bool
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: the answer may end here, or go on past it.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			b.hit.Store(true)
			return 0, errPastBound
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
