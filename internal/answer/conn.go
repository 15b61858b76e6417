package answer

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Conn is a connection to a proxy that bounds what each answer on it costs.
//
// Every request written starts a new answer (proxy-await's requests have no
// body, so the proxy answers after their last write), of which at most Max
// bytes are read: status line, headers and body together. Past that, the
// read fails with ErrTooLarge, and so does every later one.
//
// An answer's head, its status line and headers, is handed on whole, once
// the blank line that ends it has come. net/textproto parses a head as it
// reads it and allocates several times what it reads: some 400 KiB for the
// 64 KiB of an endless header line, 600 KiB for 64 KiB of short ones. A head
// that has not ended within Max bytes never reaches it: here it costs one
// buffer of Max bytes and nothing more. The head that follows an
// informational (1xx) answer's is gathered too.
//
// Settle waits, after an answer, until what came past it has been seen:
// net/http drops a kept-alive connection on which bytes come that no
// request asked for, but only when it looks before the next request.
type Conn struct {
	net.Conn
	left atomic.Int64 // what the current answer may still read
	head atomic.Bool  // the bytes read next belong to a head
	err  error        // a read past the bound: every later read fails too

	mu      sync.Mutex
	settled sync.Cond // broadcast when handed or closed change, or a Settle's context ends
	handed  bool      // bytes went on since the reader last waited on the connection with none unread
	closed  bool

	// What was read and not handed on yet is buf[r:w]: the first ready
	// bytes of it may be. A head being gathered has no end in
	// buf[r:scanned].
	buf                  []byte
	r, w, ready, scanned int
}

// firstBuffer is Conn's buffer until a head does not fit: the most a read of
// net/http's buffered reader asks for, and many times a readiness answer.
const firstBuffer = 4 << 10

// NewConn bounds the answers read from c.
func NewConn(c net.Conn) *Conn {
	conn := &Conn{Conn: c}
	conn.settled.L = &conn.mu
	conn.left.Store(Max)
	conn.head.Store(true)
	return conn
}

// Write sends a request: what is read next is a new answer.
func (c *Conn) Write(p []byte) (int, error) {
	c.left.Store(Max)
	c.head.Store(true)
	return c.Conn.Write(p)
}

// Settle waits, once an answer has been read to its end, until the reader
// has taken all it was handed and waits on the connection for more, or the
// connection is closed, or ctx ends. A reader that takes bytes past the
// answer, which no request asked for, sees them before another request
// goes out, and net/http closes the connection rather than take them for
// that request's answer.
func (c *Conn) Settle(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.settled.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	for c.handed && !c.closed && ctx.Err() == nil {
		c.settled.Wait()
	}
	c.mu.Unlock()
}

// Closed says whether the connection was closed.
func (c *Conn) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.settled.Broadcast()
	c.mu.Unlock()
	return c.Conn.Close()
}

// setHanded notes whether bytes went on since the reader last waited with
// none unread.
func (c *Conn) setHanded(handed bool) {
	c.mu.Lock()
	if c.handed != handed {
		c.handed = handed
		c.settled.Broadcast()
	}
	c.mu.Unlock()
}

func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.readAnswer(p)
	if n > 0 {
		c.setHanded(true)
	}
	return n, err
}

// readAnswer is Read: the head whole, the rest as it comes.
func (c *Conn) readAnswer(p []byte) (int, error) {
	if c.ready == 0 && c.err != nil {
		return 0, c.err
	}
	if c.ready == 0 {
		switch {
		case c.head.Load():
			if err := c.gather(); err != nil {
				return 0, err
			}
		case c.r < c.w:
			c.ready = c.w - c.r // the body's first bytes, read with its head
		default:
			// A body, or the wait for the next answer: straight through.
			// The reader has taken all it was handed.
			c.setHanded(false)
			n, err := c.read(p)
			if n == 0 || !c.head.Load() {
				return n, err
			}
			// A request went out while the read waited: these bytes
			// begin its answer's head.
			if len(c.buf) < n {
				c.buf = make([]byte, max(n, firstBuffer))
			}
			c.r, c.w = 0, copy(c.buf, p[:n])
			if err == nil {
				err = c.gather()
			}
			if err != nil {
				return 0, err
			}
		}
	}
	n := copy(p, c.buf[c.r:c.r+c.ready])
	c.r += n
	c.ready -= n
	return n, nil
}

// gather reads until buf holds a whole head from r on, and makes it ready;
// a 1xx head's answer has a head of its own to gather next.
func (c *Conn) gather() error {
	c.scanned = c.r
	for {
		if end := c.headEnd(); end >= 0 {
			c.ready = end - c.r
			c.head.Store(informational(c.buf[c.r:end]))
			return nil
		}
		if err := c.makeRoom(); err != nil {
			return c.tooLarge()
		}
		// No more than the bound allows: the head needs one byte more.
		room := min(int64(len(c.buf)-c.w), c.left.Load())
		if room <= 0 {
			return c.tooLarge()
		}
		n, err := c.read(c.buf[c.w : c.w+int(room)])
		c.w += n
		if err != nil {
			return err
		}
	}
}

// headEnd is where the head that begins at r ends, past the blank line
// after its last header, or -1 while that line has not come.
func (c *Conn) headEnd() int {
	for {
		i := bytes.IndexByte(c.buf[c.scanned:c.w], '\n')
		if i < 0 {
			c.scanned = c.w
			return -1
		}
		i += c.scanned
		switch next := c.buf[i+1 : c.w]; {
		case bytes.HasPrefix(next, []byte("\n")):
			return i + 2
		case bytes.HasPrefix(next, []byte("\r\n")):
			return i + 3
		case len(next) == 0 || len(next) == 1 && next[0] == '\r':
			c.scanned = i // look again once more has come
			return -1
		}
		c.scanned = i + 1
	}
}

// makeRoom makes room in buf for more of a head: it moves what is pending
// to the start, or grows buf, once, to the most an answer can be. A head
// that fills that has not ended within the bound.
func (c *Conn) makeRoom() error {
	switch {
	case c.w < len(c.buf):
		return nil
	case c.r > 0:
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.scanned -= c.r
		c.r = 0
		return nil
	case len(c.buf) == 0:
		c.buf = make([]byte, firstBuffer)
		return nil
	case len(c.buf) < Max:
		c.buf = append(make([]byte, 0, Max), c.buf[:c.w]...)[:Max]
		return nil
	}
	return ErrTooLarge
}

// tooLarge ends an answer whose head has not ended within the bound: every
// later read fails with ErrTooLarge. The head's status line still goes on
// when it has ended, so that net/http sees an answer that began and failed
// in its headers, and does not send its request again on a new connection
// as it would after a connection that failed before an answer: one answer,
// one bound.
func (c *Conn) tooLarge() error {
	c.err = ErrTooLarge
	if i := bytes.IndexByte(c.buf[c.r:c.w], '\n'); i >= 0 {
		c.ready = i + 1
		return nil
	}
	return c.err
}

// informational says whether head is an informational answer's (1xx but
// 101, which switches protocols), which the answer's own head follows.
func informational(head []byte) bool {
	_, rest, ok := bytes.Cut(head, []byte(" "))
	return ok && len(rest) >= 3 && rest[0] == '1' && isDigit(rest[1]) && isDigit(rest[2]) &&
		(len(rest) == 3 || rest[3] == ' ' || rest[3] == '\r' || rest[3] == '\n') && !bytes.HasPrefix(rest, []byte("101"))
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// read reads from the connection what the answer's bound allows. A read
// that waits for the next answer may have begun before the request that
// starts it, so it cannot ask for what is left of the bound: what came past
// the bound is dropped instead.
func (c *Conn) read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if left := c.left.Add(-int64(n)); left < 0 {
		// What came past the bound is not handed on.
		c.err = ErrTooLarge
		return max(0, n+int(left)), c.err
	}
	return n, err
}
