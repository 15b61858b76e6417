package answer

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proxyEnd is the proxy's end of a Conn under test: it sends pieces, in
// the reads they come in, then endless copies of tail, or EOF without one.
// It counts what it sent.
type proxyEnd struct {
	net.Conn // nil: Conn only reads and writes
	pieces   []string
	tail     string
	sent     int
}

func (e *proxyEnd) Read(p []byte) (int, error) {
	var n int
	switch {
	case len(e.pieces) > 0:
		n = copy(p, e.pieces[0])
		if e.pieces[0] = e.pieces[0][n:]; e.pieces[0] == "" {
			e.pieces = e.pieces[1:]
		}
	case e.tail != "":
		for n < len(p) {
			n += copy(p[n:], e.tail)
		}
	default:
		return 0, io.EOF
	}
	e.sent += n
	return n, nil
}

func (e *proxyEnd) Write(p []byte) (int, error) { return len(p), nil }

// A head comes whole, however the proxy cut it, and alone: the body's bytes
// that came with it follow.
func TestConnHandsOnAHeadWhole(t *testing.T) {
	for _, head := range []string{
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\n",
		"HTTP/1.1 503 Service Unavailable\nContent-Length: 9\n\n",
	} {
		answer := head + "not ready"
		var pieces []string
		for i := 0; i < len(answer); i += 5 {
			pieces = append(pieces, answer[i:min(i+5, len(answer))])
		}
		c := NewConn(&proxyEnd{pieces: pieces})
		p := make([]byte, 4096)
		n, err := c.Read(p)
		require.NoError(t, err)
		assert.Equal(t, head, string(p[:n]))
		body, err := io.ReadAll(c)
		require.NoError(t, err)
		assert.Equal(t, "not ready", string(body))
	}
}

// An informational answer's head is followed by the answer's own, which is
// gathered whole too; a 101's is followed by another protocol.
func TestConnHeadAfterAnInformationalAnswer(t *testing.T) {
	for first, gathered := range map[string]bool{
		"HTTP/1.1 100 Continue\r\n\r\n":                                  true,
		"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n":                 true,
		"HTTP/1.1 102\r\n\r\n":                                           true,
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n": false,
		"HTTP/1.1 1000 Continue\r\n\r\n":                                 false,
	} {
		head := "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
		pieces := []string{first + head[:10], head[10:]}
		c := NewConn(&proxyEnd{pieces: pieces})
		p := make([]byte, 4096)
		n, err := c.Read(p)
		require.NoError(t, err)
		require.Equal(t, first, string(p[:n]))
		n, err = c.Read(p)
		require.NoError(t, err)
		if gathered {
			assert.Equal(t, head, string(p[:n]), "after %q", first)
		} else {
			assert.Equal(t, head[:10], string(p[:n]), "after %q: straight through", first)
		}
	}
}

// A head that has not ended within Max bytes is never handed on, but for
// its status line, which tells net/http that an answer began: the next read
// fails having taken Max bytes from the proxy, and so do later ones.
func TestConnEndlessHead(t *testing.T) {
	for name, pieces := range map[string][]string{
		"answer":      {"HTTP/1.1 503 Service Unavailable\r\nX-Endless: "},
		"after a 1xx": {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nX-Endless: "},
	} {
		t.Run(name, func(t *testing.T) {
			end := &proxyEnd{pieces: pieces, tail: strings.Repeat("a", 1000)}
			c := NewConn(end)
			p := make([]byte, 4096)
			if name == "after a 1xx" {
				n, err := c.Read(p)
				require.NoError(t, err)
				require.Equal(t, "HTTP/1.1 100 Continue\r\n\r\n", string(p[:n]))
			}
			n, err := c.Read(p)
			require.NoError(t, err)
			assert.Equal(t, "HTTP/1.1 503 Service Unavailable\r\n", string(p[:n]))
			assert.Equal(t, Max, end.sent)
			_, err = c.Read(p)
			assert.ErrorIs(t, err, ErrTooLarge)
			_, err = c.Read(p)
			assert.ErrorIs(t, err, ErrTooLarge)
		})
	}
	t.Run("status line", func(t *testing.T) {
		end := &proxyEnd{pieces: []string{"HTTP/1.1 503 "}, tail: strings.Repeat("a", 1000)}
		c := NewConn(end)
		n, err := c.Read(make([]byte, 4096))
		assert.Zero(t, n)
		assert.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, Max, end.sent)
	})
}

// Each request starts a new answer with a bound of its own: two answers of
// 40 KiB each on one connection are read whole, and the second fails at 64
// KiB of the two when no request came between them.
func TestConnBoundsEachAnswer(t *testing.T) {
	answer := "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 40960\r\n\r\n" + strings.Repeat("x", 40<<10)
	for _, request := range []bool{true, false} {
		c := NewConn(&proxyEnd{pieces: []string{answer, answer}})
		r := bufio.NewReader(c)
		var errs []error
		for range 2 {
			if request {
				_, _ = c.Write([]byte("GET /ready HTTP/1.1\r\n\r\n"))
			}
			resp, err := http.ReadResponse(r, nil)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
			}
			errs = append(errs, err)
		}
		assert.NoError(t, errs[0])
		if request {
			assert.NoError(t, errs[1])
		} else {
			assert.ErrorIs(t, errs[1], ErrTooLarge)
		}
	}
}
