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
	r := start(t, Config{WaitAll: 10 * time.Second, ProcessGroup: group}, "leave-worker-at-eof", log, "slow-term")
	worker, err := strconv.Atoi(strings.TrimPrefix(r.expect("worker "), "worker "))
	require.NoError(t, err)
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
