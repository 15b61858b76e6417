package proctree

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A child reads as running, then as a zombie once it has exited and is not
// yet reaped, then as gone.
func TestReadStatAndStatusOfAChild(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", "read -r _ || :")
	cmd.Stdin = r
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid

	st, ok := ReadStat(pid)
	require.True(t, ok)
	assert.Equal(t, os.Getpid(), st.PPID)
	assert.Equal(t, pid, st.PID)
	s, ok := ReadStatus(pid)
	require.True(t, ok)
	assert.Equal(t, os.Getpid(), s.PPID)
	uid := uint32(os.Getuid())
	assert.Equal(t, [4]uint32{uid, uid, uid, uid}, s.UIDs)
	assert.Positive(t, s.Memory.RSSKB)
	assert.GreaterOrEqual(t, s.Memory.PeakKB, s.Memory.RSSKB)
	require.NotEmpty(t, s.NSpid)
	assert.Equal(t, pid, s.NSpid[0], "its PID in the namespace of this /proc")
	self, ok := ReadStatus(os.Getpid())
	require.True(t, ok)
	assert.NotZero(t, self.Caught&(1<<(unix.SIGURG-1)), "the Go runtime handles SIGURG")

	require.NoError(t, w.Close()) // the shell reads the end and exits
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil))
	st, ok = ReadStat(pid)
	require.True(t, ok)
	assert.Equal(t, byte('Z'), st.State)
	s, ok = ReadStatus(pid)
	require.True(t, ok)
	assert.Equal(t, byte('Z'), s.State)
	assert.Zero(t, s.Memory, "a zombie holds no memory")

	require.NoError(t, cmd.Wait())
	_, ok = ReadStat(pid)
	assert.False(t, ok, "a reaped process")
	_, ok = ReadStatus(pid)
	assert.False(t, ok, "a reaped process")
}
