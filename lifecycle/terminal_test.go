package lifecycle_test

// Job control on a real pseudo-terminal: proxy-await runs as the foreground
// job of a small job-control shell (testchild's "jobshell") whose
// controlling terminal is the pty; the test types on the master side.

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// jobShell is proxy-await running as a job under testchild's "jobshell".
type jobShell struct {
	*proc
	master   *os.File // the terminal's master side: what the test types
	commands *os.File // the shell's commands ("fg")
}

// openPTY opens a pseudo-terminal; the test keeps the master, the processes
// get the slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err, "no /dev/ptmx: mount devpts")
	t.Cleanup(func() { master.Close() })
	var n int
	conn, err := master.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, conn.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil { // unlockpt
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN) // ptsname
		}
	}))
	require.NoError(t, err)
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { slave.Close() })
	go func() { _, _ = io.Copy(io.Discard, master) }() // the terminal's echo
	return master, slave
}

// startJobShell runs `proxy-await ARGS... -- TESTBINARY CHILDARGS...`, the
// child playing scenario, as the foreground job of a shell on a new pty.
func startJobShell(t *testing.T, scenario string, args []string, childArgs ...string) *jobShell {
	t.Helper()
	master, slave := openPTY(t)
	cmdR, cmdW, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { cmdW.Close() })
	argv := append([]string{scenario, proxyAwaitBin}, args...)
	argv = append(append(argv, "--", testchild.Self()), childArgs...)
	cmd := exec.Command(testchild.Self(), argv...)
	cmd.Env = []string{testchild.Env + "=jobshell"}
	cmd.Stdin = slave
	cmd.ExtraFiles = []*os.File{cmdR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	p := startCmd(t, cmd, nil)
	require.NoError(t, cmdR.Close())
	return &jobShell{proc: p, master: master, commands: cmdW}
}

// typeKeys writes keys on the terminal.
func (s *jobShell) typeKeys(keys string) {
	s.t.Helper()
	_, err := s.master.WriteString(keys)
	require.NoError(s.t, err)
}

// job returns proxy-await's PID: the shell's only child. It is found by its
// parent PID: /proc/PID/task/PID/children lists only what the main thread
// forked, and the shell's locked goroutine may run on another thread.
func (s *jobShell) job() int {
	s.t.Helper()
	children := testutil.Children(s.cmd.Process.Pid)
	require.Len(s.t, children, 1, "the shell should have one child, proxy-await")
	return children[0].PID
}

// One Ctrl-C reaches the child once. Without -g the terminal signals the
// whole foreground group, proxy-await and the child, and proxy-await does
// not send a second copy; with -g the child's group owns the terminal and
// only it is signalled.
func TestCtrlCReachesTheChildOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		log  string // proxy-await's word that it got SIGINT too and held it back
	}{
		{"child in proxy-await's group", []string{"-v", "--proxy", "none"},
			"signal from the terminal reached the child too: not forwarded signal=SIGINT"},
		{"child in its own group (-g)", []string{"-v", "-g", "--proxy", "none"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startJobShell(t, "signals", tc.args, "SIGTERM")
			assert.Equal(t, "ready", s.next())
			pa := s.job()
			s.typeKeys("\x03")
			assert.Equal(t, "SIGINT", s.nextSignal())
			if tc.log != "" {
				s.proc.waitLog(tc.log)
			}
			require.NoError(t, syscall.Kill(pa, syscall.SIGUSR1))
			assert.Equal(t, "SIGUSR1", s.nextSignal(), "SIGINT came once; the next signal is the one sent after it")
			require.NoError(t, syscall.Kill(pa, syscall.SIGTERM))
			assert.Equal(t, "SIGTERM", s.nextSignal())
			assert.Equal(t, "shell: exited 0 foreground job", s.next())
			assert.Equal(t, 0, s.wait())
		})
	}
}

// A Ctrl-C is the stop signal too: the terminal delivered it already, so it
// is not sent again, and --kill-after counts from it. The child prints its
// signals and exits of none but SIGTERM: only the SIGKILL ends it.
func TestCtrlCArmsKillAfter(t *testing.T) {
	s := startJobShell(t, "signals", []string{"-v", "--proxy", "none", "--kill-after", "200ms"}, "SIGTERM")
	assert.Equal(t, "ready", s.next())
	s.typeKeys("\x03")
	assert.Equal(t, "SIGINT", s.nextSignal())
	assert.Equal(t, "shell: exited 137 foreground job", s.next())
	assert.Equal(t, 0, s.wait())
	assert.Contains(t, s.proc.stderr.String(), "signal from the terminal reached the child too: not forwarded signal=SIGINT")
	assert.Contains(t, s.proc.stderr.String(), "sending SIGKILL")
}

// Ctrl-Z stops the job as a whole: the child stops, proxy-await follows it,
// so the shell sees the job stopped and takes the terminal back; "fg"
// resumes both with the terminal in the child's hands (it reads a line from
// it), and after the child exits the terminal is back with proxy-await's
// group, not the dead group of the child.
func TestCtrlZStopsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"child in proxy-await's group", []string{"--proxy", "none"}},
		{"child in its own group (-g)", []string{"-g", "--proxy", "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startJobShell(t, "stop-cont-read", tc.args, "5")
			assert.Equal(t, "ready", s.next())
			pa := s.job()
			s.typeKeys("\x1a")
			assert.Equal(t, "shell: stopped SIGSTOP", s.next())
			tree := descendants(t, pa)
			require.Len(t, tree, 2, "proxy-await and its child: %+v", tree)
			for _, st := range tree {
				assert.Equal(t, byte('T'), st.State, "stopped: %+v", st)
			}
			_, err := s.commands.WriteString("fg\n")
			require.NoError(t, err)
			assert.Equal(t, "continued", s.next())
			s.typeKeys("typed\n")
			assert.Equal(t, "read typed", s.next())
			assert.Equal(t, "shell: exited 5 foreground job", s.next())
			assert.Equal(t, 0, s.wait())
		})
	}
}
