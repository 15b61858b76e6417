package drain

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func listen(t *testing.T, network, addr string) (net.Listener, uint16) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln, uint16(ln.Addr().(*net.TCPAddr).Port)
}

func newTestDumper(t *testing.T) *dumper {
	t.Helper()
	d, err := newDumper()
	require.NoError(t, err)
	t.Cleanup(d.close)
	return d
}

func TestFindListeners(t *testing.T) {
	_, p4 := listen(t, "tcp4", "127.0.0.1:0")
	_, p6 := listen(t, "tcp", "[::]:0")
	_, p6lo := listen(t, "tcp6", "[::1]:0")

	s := newSockets(Options{Root: os.Getpid()}, newTestDumper(t), nil)
	added, err := s.findListeners(true)
	require.NoError(t, err)
	assert.Contains(t, added, "127.0.0.1:"+strconv.Itoa(int(p4)))
	assert.Contains(t, added, "[::]:"+strconv.Itoa(int(p6)))
	assert.Contains(t, added, "[::1]:"+strconv.Itoa(int(p6lo)))

	// Found once: a second look adds nothing, and a new listener alone.
	added, err = s.findListeners(true)
	require.NoError(t, err)
	assert.Empty(t, added)
	_, later := listen(t, "tcp4", "127.0.0.1:0")
	added, err = s.findListeners(true)
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:" + strconv.Itoa(int(later))}, added)
}

// The kernel accepts the port filter and keeps exactly the sockets on those
// ports.
func TestPortFilter(t *testing.T) {
	var ports []uint16
	for range 3 {
		ln, p := listen(t, "tcp4", "127.0.0.1:0")
		ports = append(ports, p)
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	d := newTestDumper(t)
	for _, want := range [][]uint16{ports, ports[1:2]} {
		socks, err := d.dump(connStates, want)
		require.NoError(t, err)
		got := map[uint16]int{}
		for _, s := range socks {
			got[s.port]++
			assert.True(t, s.hasInfo, "tcp_info with every socket")
		}
		for _, p := range want {
			assert.Equal(t, 1, got[p], "the accepted connection on %d", p)
		}
		assert.Len(t, got, len(want), "no socket on another port")
	}
}

// A UDP socket with a local port and no peer below the root (a server's)
// makes the watch blind; a connected one (a resolver's query) does not.
func TestUDPServerMakesTheWatchBlind(t *testing.T) {
	listen(t, "tcp4", "127.0.0.1:0")
	server, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	query, err := net.Dial("udp4", server.LocalAddr().String())
	require.NoError(t, err)
	t.Cleanup(func() { query.Close() })

	s := newSockets(Options{Root: os.Getpid()}, newTestDumper(t), nil)
	_, err = s.findListeners(true)
	require.NoError(t, err)
	require.NotNil(t, s.blind, "the server's socket")
	assert.Equal(t, server.LocalAddr().String(), netip.AddrPortFrom(s.blind.udp.ip, s.blind.udp.port).String())
	assert.Equal(t, os.Getpid(), s.blind.holder)

	require.NoError(t, server.Close())
	_, err = s.findListeners(true)
	require.NoError(t, err)
	assert.Nil(t, s.blind, "the query's socket is a client's")
}
