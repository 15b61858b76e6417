package readiness

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A URL that answered 2xx is ready, even when the wait's context ends at
// that very moment (--timeout running out as the proxy turns ready): Await
// must not report that every URL is ready and that the wait failed.
func TestReadyAsTheContextEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		// The prober closes the connection once it has read the 2xx: end
		// the wait's context then, before Await can see the URL ready.
		_, _ = io.Copy(io.Discard, conn)
		cancel()
	}()
	res, err := Await(ctx, opts("http://"+ln.Addr().String()+"/ready"))
	assert.Empty(t, res.Pending)
	assert.NoError(t, err, "every URL answered 2xx")
}
