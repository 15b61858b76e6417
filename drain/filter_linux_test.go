package drain

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// waitLimit bounds every wait, so that a bug fails a test instead of hanging
// it.
const waitLimit = 20 * time.Second

// The kernel passes the watch the destroy reports of the watched ports
// alone: connections that come and go on another port of the network
// namespace (with hostNetwork, the whole node's) cost it nothing. A feed
// with the program the watch attaches for its one listener's port is read
// beside an observer of both ports.
func TestOtherPortsStayInTheKernel(t *testing.T) {
	_, _, watchedOut := startLoad(t, "close-each")
	watched, ok := strings.CutPrefix(watchedOut(), "listening ")
	require.True(t, ok)
	_, _, otherOut := startLoad(t, "close-each")
	other, ok := strings.CutPrefix(otherOut(), "listening ")
	require.True(t, ok)
	filtered := newObserver(t, port(t, watched))
	both := newObserver(t, port(t, other), port(t, watched))

	// The kernel sends each report to every subscriber at once: once the
	// observer of both ports has seen it, the filtered feed has been offered
	// it too, and that feed is read in the order the reports were sent.
	const churn = 500
	for range churn {
		dial(t, other)
	}
	both.waitFor(t, port(t, other), churn)
	require.Zero(t, filtered.total(), "no report of another port passed the filter")

	// So once the reports of the watched port have been read, any of the
	// other port's that had passed have been read before them.
	const mine = 3
	for range mine {
		dial(t, watched)
	}
	both.waitFor(t, port(t, watched), mine)
	filtered.waitFor(t, port(t, watched), mine)
	assert.Equal(t, mine, filtered.total(), "the reports of the watched port, and only those")
}

func dial(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func port(t testing.TB, addr string) uint16 {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	require.NoError(t, err)
	return uint16(a.Port)
}

// observer counts the destroy reports of ports by local port (a note of
// reports dropped on port 0): it sees every report of those ports that the
// kernel sends.
type observer struct {
	mu     sync.Mutex
	byPort map[uint16]int
}

func newObserver(t *testing.T, ports ...uint16) *observer {
	t.Helper()
	feed, err := newDestroyFeed()
	require.NoError(t, err)
	t.Cleanup(feed.close)
	require.NoError(t, unix.SetsockoptInt(feed.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20))
	require.NoError(t, feed.watch(ports))
	o := &observer{byPort: map[uint16]int{}}
	go func() {
		for e := range feed.c {
			o.mu.Lock()
			o.byPort[e.port]++
			o.mu.Unlock()
		}
	}()
	return o
}

// total is how many reports the observer has seen, on any port, and
// notes of reports the kernel dropped.
func (o *observer) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.byPort {
		n += c
	}
	return n
}

// waitFor waits until the observer has seen n reports on port.
func (o *observer) waitFor(t *testing.T, port uint16, n int) {
	t.Helper()
	got := 0
	if !testutil.Until(waitLimit, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		got = o.byPort[port]
		return got >= n
	}) {
		t.Fatalf("%d reports on port %d, not %d, after %s", got, port, n, waitLimit)
	}
}
