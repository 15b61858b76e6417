package drain

import (
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitLimit bounds every wait, so that a bug fails a test instead of hanging
// it.
const waitLimit = 20 * time.Second

// The kernel passes the watch the destroy reports of the watched ports
// alone: connections that come and go on another port of the network
// namespace (with hostNetwork, the whole node's) cost it nothing.
func TestOtherPortsStayInTheKernel(t *testing.T) {
	server, _, serverOut := startLoad(t, "close-each")
	watched, ok := strings.CutPrefix(serverOut(), "listening ")
	require.True(t, ok)
	armed := make(chan struct{})
	w := Start(Options{Root: server.Process.Pid, Quiet: time.Hour, Logger: slog.New(onEvent{"drain_started", armed})})
	t.Cleanup(func() { w.Stop() })
	select {
	case <-armed:
	case <-time.After(waitLimit):
		t.Fatal("the watch never followed the listener")
	}

	// The kernel sends each report to every subscriber at once: once the
	// observer has seen it, the watch has been offered it too, and the
	// watch reads its reports in the order they were sent.
	_, _, otherOut := startLoad(t, "close-each")
	other, ok := strings.CutPrefix(otherOut(), "listening ")
	require.True(t, ok)
	obs := newObserver(t, port(t, other), port(t, watched))
	const churn = 500
	for range churn {
		dial(t, other)
	}
	obs.waitFor(t, port(t, other), churn)
	require.Zero(t, w.received(), "no report of another port reached the watch")

	const mine = 3
	for range mine {
		dial(t, watched)
	}
	obs.waitFor(t, port(t, watched), mine)
	deadline := time.Now().Add(waitLimit)
	for w.received() < mine && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.EqualValues(t, mine, w.received(), "the reports of the watched port, and only those")
}

func dial(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func port(t *testing.T, addr string) uint16 {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	require.NoError(t, err)
	return uint16(a.Port)
}

// observer counts the destroy reports of ports by local port: it sees every
// report of those ports that the kernel sends.
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

// waitFor waits until the observer has seen n reports on port.
func (o *observer) waitFor(t *testing.T, port uint16, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		o.mu.Lock()
		got := o.byPort[port]
		o.mu.Unlock()
		if got >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d reports on port %d, not %d, after %s", got, port, n, waitLimit)
		time.Sleep(time.Millisecond)
	}
}
