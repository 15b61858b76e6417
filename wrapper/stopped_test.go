package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// A process left behind that is stopped (kill -STOP, a job stopped by
// SIGTTOU) would keep its SIGTERM pending until the SIGKILL: --wait-all
// resumes it with SIGCONT, so that it runs its clean-up in time.
func TestWaitAllResumesAStoppedWorker(t *testing.T) {
	t.Run("worker below proxy-await", func(t *testing.T) { resumesAStoppedWorker(t, false) })
	t.Run("worker in the child's group (-g)", func(t *testing.T) { resumesAStoppedWorker(t, true) })
}

func resumesAStoppedWorker(t *testing.T, group bool) {
	log := filepath.Join(t.TempDir(), "worker.log")
	// The child is a shell, which runs one thread, and it starts the
	// worker (the test binary) itself. A child of several threads, as the
	// test binary is, can hand the worker to a sibling thread as the
	// thread that forked it exits; when the child's last thread exits
	// while that sibling is still on its way out, the kernel finds the
	// child's process group orphaned with a stopped process in it, and
	// sends it SIGHUP and SIGCONT (POSIX job control): the worker dies of
	// the SIGHUP before --wait-all's SIGTERM. The worker's "ready" (on its
	// fd 3) and the shell's "worker PID" come in either order.
	cfg := Config{WaitAll: 10 * time.Second, ProcessGroup: group, Args: []string{"/bin/sh", "-c",
		`"$0" "$@" 3>&1 & echo "worker $!"; exec cat >/dev/null`, testchild.Self(), log, "slow-term"}}
	r := startCommand(t, cfg, "worker")
	var worker int
	for range 2 {
		line := r.lines.Next(t, `"worker PID" or "ready"`)
		if pid, ok := strings.CutPrefix(line, "worker "); ok {
			var err error
			worker, err = strconv.Atoi(pid)
			require.NoError(t, err)
		} else {
			require.Equal(t, "ready", line)
		}
	}
	require.NotZero(t, worker, "the shell said the worker's PID")
	require.NoError(t, syscall.Kill(worker, syscall.SIGSTOP))
	waitStopped(t, worker)
	require.NoError(t, r.stdin.Close())
	assert.Equal(t, 0, r.wait())

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	var lines []string // without the times
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines = append(lines, strings.Join(f[:len(f)-1], " "))
		}
	}
	assert.Equal(t, []string{"signal SIGTERM", "done"}, lines, "the worker ran its SIGTERM handler")
	assert.NotContains(t, r.log.String(), "sending SIGKILL")
}

// waitStopped waits until pid is in state T (stopped).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	testutil.Eventually(t, func() bool {
		st, ok := proctree.ReadStat(pid)
		require.True(t, ok, "PID %d is gone", pid)
		return st.State == 'T'
	}, "PID %d never stopped", pid)
}
