package drain

import (
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChildListeners(t *testing.T) {
	ln4, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln4.Close()
	ln6, err := net.Listen("tcp", "[::]:0")
	require.NoError(t, err)
	defer ln6.Close()

	got, err := childListeners(os.Getpid())
	require.NoError(t, err)
	ports := map[uint16]net.IP{}
	for _, l := range got {
		ports[l.port] = l.ip
	}
	p4 := uint16(ln4.Addr().(*net.TCPAddr).Port)
	p6 := uint16(ln6.Addr().(*net.TCPAddr).Port)
	require.Contains(t, ports, p4)
	require.Contains(t, ports, p6)
	assert.Equal(t, "127.0.0.1", ports[p4].String())
	assert.True(t, ports[p6].IsUnspecified())
}
