package wrapper

import (
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// signal.Notify never blocks: a signal that finds the channel full is
// dropped for that channel. Under a storm of signals, while the supervisor
// is slow (a stderr pipe that nobody reads), the SIGCHLD of the child's exit
// can be one of those. The channel here is subscribed to SIGUSR1 alone, so
// that the SIGCHLD is lost every time, as a full channel loses it: the
// supervisor must still find the exit at the next signal it gets, rather
// than wait for a SIGCHLD that will never come.
func TestChildExitFoundWhenItsSIGCHLDIsLost(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	defer signal.Stop(sigs)

	t.Setenv(testchild.Env, "wait-stdin")
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	defer inW.Close()
	log := &testutil.Buffer{}
	done := make(chan result, 1)
	go func() {
		s := &Supervisor{sigs: sigs, log: logging.New(log, "text", -4)}
		code, err := s.Supervise(Config{Args: []string{testchild.Self()}, Stdin: inR})
		inR.Close()
		done <- result{code, err}
	}()

	log.WaitFor(t, "child started", waitLimit)
	m := regexp.MustCompile(`child started child_pid=(\d+)`).FindStringSubmatch(log.String())
	require.NotNil(t, m, "log:\n%s", log.String())
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)

	// The child exits. It can be reaped once its last thread has gone,
	// which may be after /proc shows it a zombie ("Z" is its main thread's
	// state): wait for that with WNOWAIT, which leaves it unreaped.
	require.NoError(t, inW.Close())
	var info unix.Siginfo
	for err = unix.EINTR; err == unix.EINTR; {
		err = unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
	}
	require.NoError(t, err, "the child was reaped before any signal came; log:\n%s", log.String())

	// Any later signal, however unrelated, finds the exit.
	kill(t, syscall.SIGUSR1)
	select {
	case res := <-done:
		require.NoError(t, res.err)
		assert.Equal(t, 0, res.code)
	case <-time.After(waitLimit):
		t.Fatalf("the child's exit was not noticed within %s; log:\n%s", waitLimit, log.String())
	}
}
