package lifecycle_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

// A process left behind that survives SIGKILL (one proxy-await may not
// signal, as here, or one in uninterruptible sleep) must not hold
// proxy-await for ever: after a grace it goes on without it, so that the
// proxy is still shut down and the run ends with the command's code.
func TestWaitAllGoesOnWithoutAnUnkillableProcess(t *testing.T) {
	// proxy-await runs as nobody; its child's worker makes itself root
	// with CAP_SETUID, which nobody may then not signal.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	pa, self := filepath.Join(dir, "proxy-await"), filepath.Join(dir, "testchild")
	copyFile(t, proxyAwaitBin, pa)
	copyFile(t, testchild.Self(), self)

	cmd := exec.Command(pa, "--proxy", "none", "--wait-all", "1s", "--log-format", "json", "--", self)
	cmd.Env = []string{testchild.Env + "=leave-root-worker"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: 65534, Gid: 65534},
		AmbientCaps: []uintptr{unix.CAP_SETUID},
	}
	p := startCmd(t, cmd, nil)
	worker := workerPID(t, p)
	t.Cleanup(func() { _ = syscall.Kill(worker, syscall.SIGKILL) })
	assert.Equal(t, 0, p.wait(), "the command's code")
	recs := records(t, p.stderr.String())
	require.NotNil(t, event(recs, "wait_all_killed"))
	left := event(recs, "wait_all_abandoned")
	require.NotNil(t, left)
	assert.EqualValues(t, 1, left["processes"])
	assert.True(t, alive(worker), "the worker survived, as it had to")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
