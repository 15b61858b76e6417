package wrapper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -g, what the main child leaves in its process group gets the group's
// SIGTERM when the child exits; --wait-all must not send it a second one,
// which many programs read as "stop now, skip the clean-up". The worker
// must log its SIGTERM before --wait-all's SIGKILL: the wait is long beside
// that, even if the worker stalls for a second.
func TestWaitAllSignalsTheGroupOnce(t *testing.T) {
	log := filepath.Join(t.TempDir(), "worker.log")
	r := start(t, Config{ProcessGroup: true, WaitAll: 3 * time.Second}, "leave-worker", log, "ignore-term")
	r.expect("worker ")
	assert.Equal(t, 0, r.wait())
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "signal SIGTERM"), "the worker's log:\n%s", data)
	assert.Contains(t, r.log.String(), "sending SIGKILL", "the worker ignores SIGTERM: --wait-all ends it")
}
