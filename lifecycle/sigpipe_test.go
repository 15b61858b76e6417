package lifecycle_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// startWithClosedStderr runs proxy-await with its stderr on a pipe whose
// reader is gone, as in `{ proxy-await ...; } 2>&1 | head -1`.
func startWithClosedStderr(t *testing.T, args ...string) *proc {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	cmd := exec.Command(proxyAwaitBin, args...)
	cmd.Stderr = w
	p := startCmd(t, cmd, nil)
	require.NoError(t, w.Close())
	return p
}

// nextSignal reads the child's next line, which must be "signal NAME ...",
// and returns NAME.
func (p *proc) nextSignal() string {
	p.t.Helper()
	line := p.next()
	f := strings.Fields(line)
	require.True(p.t, len(f) >= 2 && f[0] == "signal", "want a signal line, got %q", line)
	return f[1]
}

// A log line written to a closed stderr raises SIGPIPE in proxy-await: that
// one is not forwarded (the child would die of it), while a SIGPIPE another
// process sends still is. The child's lines must be exactly the signals the
// test sends, in order.
func TestClosedStderrRaisesNoSigpipeInTheChild(t *testing.T) {
	t.Run("the ready line", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		p := startWithClosedStderr(t, append([]string{"--ready-url", fp.URL("/ready")}, child("signals", "SIGTERM")...)...)
		assert.Equal(t, "ready", p.next())
		p.signal(syscall.SIGUSR1)
		assert.Equal(t, "SIGUSR1", p.nextSignal(), "the first signal the child sees is the one sent, not a SIGPIPE")
		p.signal(syscall.SIGPIPE)
		assert.Equal(t, "SIGPIPE", p.nextSignal(), "a SIGPIPE from outside is forwarded")
		p.signal(syscall.SIGTERM)
		assert.Equal(t, "SIGTERM", p.nextSignal())
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.restLines)
	})
	t.Run("the held SIGTERM line", func(t *testing.T) {
		p := startWithClosedStderr(t, append([]string{"--proxy", "none", "--term-delay", "10s", "-v"},
			child("signals", "SIGTERM")...)...)
		assert.Equal(t, "ready", p.next())
		p.signal(syscall.SIGTERM) // held: its log line raises SIGPIPE
		p.signal(syscall.SIGUSR1)
		assert.Equal(t, "SIGUSR1", p.nextSignal(), "the child is still running and got no SIGPIPE")
		p.signal(syscall.SIGPIPE)
		assert.Equal(t, "SIGPIPE", p.nextSignal(), "a SIGPIPE from outside is forwarded")
		p.signal(syscall.SIGTERM) // ends the hold
		assert.Equal(t, "SIGTERM", p.nextSignal())
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.restLines)
	})
}
