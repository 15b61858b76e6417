package lifecycle_test

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child frozen from outside with SIGSTOP (kill -STOP, a debugger) and
// thawed the same way is no job-control stop: were proxy-await to stop with
// it, nothing would resume proxy-await, and the child's exit would never be
// reaped nor the proxy shut down.
func TestChildFrozenFromOutsideIsNotFollowed(t *testing.T) {
	cmd := exec.Command(proxyAwaitBin, append([]string{"--proxy", "none", "-v", "--log-format", "json"},
		child("stop-cont", "5")...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as a shell runs a job
	p := startCmd(t, cmd, nil)
	assert.Equal(t, "ready", p.next())
	tree := descendants(t, cmd.Process.Pid)
	require.Len(t, tree, 2, "proxy-await and its child: %+v", tree)
	kid := tree[1].PID

	require.NoError(t, syscall.Kill(kid, syscall.SIGSTOP))
	p.stderr.WaitFor(t, `"event":"child_stopped"`, waitLimit)
	require.NoError(t, syscall.Kill(kid, syscall.SIGCONT))
	assert.Equal(t, "continued", p.next())
	assert.Equal(t, 5, p.wait(), "proxy-await saw the child exit")
}

// A SIGSTOP that proxy-await sent itself (--rewrite TSTP:STOP) is job
// control still: on a terminal, proxy-await stops with the child, as for a
// SIGTSTP, and the shell sees the job stopped. With -g the SIGTSTP sent to
// proxy-await alone is forwarded (the terminal's foreground is the child's
// group). Without a terminal nothing would resume it, and it does not stop
// (TestStoppedChildDoesNotStopProxyAwait).
func TestForwardedSigstopIsFollowed(t *testing.T) {
	s := startJobShell(t, "stop-cont", []string{"-g", "--proxy", "none", "--rewrite", "TSTP:STOP"}, "5")
	assert.Equal(t, "ready", s.next())
	require.NoError(t, syscall.Kill(s.job(), syscall.SIGTSTP))
	assert.Equal(t, "shell: stopped SIGSTOP", s.next())
	_, err := s.commands.WriteString("fg\n")
	require.NoError(t, err)
	assert.Equal(t, "continued", s.next())
	assert.Equal(t, "shell: exited 5 foreground job", s.next())
	assert.Equal(t, 0, s.wait())
}
