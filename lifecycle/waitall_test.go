package lifecycle_test

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

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// Lifecycle step 4 with --wait-all (docs/reference.md#lifecycle): what the main command leaves
// running gets SIGTERM, then up to the flag's duration to exit, then SIGKILL;
// only then is the proxy shut down.

// workerLog reads the lines a "worker" scenario appended to its log: what it
// did and when (Unix nanoseconds).
func workerLog(t *testing.T, path string) (lines []string, at []time.Time) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		ns, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		require.NoError(t, err, "worker log line %q", line)
		lines = append(lines, strings.Join(f[:len(f)-1], " "))
		at = append(at, time.Unix(0, ns))
	}
	return lines, at
}

// workerPID reads the "worker PID" line the main command prints before it
// exits.
func workerPID(t *testing.T, p *proc) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(p.expect("worker "), "worker "))
	require.NoError(t, err)
	return pid
}

func TestWaitAllLetsTheWorkerFinishBeforeTheShutdown(t *testing.T) {
	fp := testutil.StartFakeProxy(t)
	log := filepath.Join(t.TempDir(), "worker.log")
	p := startPA(t, nil, append([]string{"-S", "--wait-all", "5s", "--log-format", "json",
		"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
		child("leave-worker", log, "slow-term")...)...)
	worker := workerPID(t, p)
	assert.Equal(t, 0, p.wait())

	lines, at := workerLog(t, log)
	require.Equal(t, []string{"signal SIGTERM", "done"}, lines, "the worker should get SIGTERM and finish its handler")
	assert.False(t, alive(worker), "the worker should be gone once proxy-await has exited")

	posts := 0
	for _, r := range fp.Requests() {
		if r.Method == "POST" && r.Path == "/shutdown" {
			posts++
			assert.True(t, r.Time.After(at[1]), "the shutdown (%s) must come after the worker finished (%s)",
				r.Time.Format(time.RFC3339Nano), at[1].Format(time.RFC3339Nano))
		}
	}
	assert.Equal(t, 1, posts)

	recs := records(t, p.stderr.String())
	started := event(recs, "wait_all_started")
	require.NotNil(t, started)
	assert.EqualValues(t, 1, started["processes"])
	require.NotNil(t, event(recs, "wait_all_done"))
	assert.Nil(t, event(recs, "wait_all_killed"), "a worker that finishes in time is not killed")
}

func TestWithoutWaitAllTheWorkerIsLeftAlone(t *testing.T) {
	log := filepath.Join(t.TempDir(), "worker.log")
	p := startPA(t, nil, append([]string{"--proxy", "none"}, child("leave-worker", log, "slow-term")...)...)
	worker := workerPID(t, p)
	t.Cleanup(func() { _ = syscall.Kill(worker, syscall.SIGKILL) })
	assert.Equal(t, 0, p.wait())

	assert.True(t, alive(worker), "without --wait-all the worker outlives proxy-await, as before")
	lines, _ := workerLog(t, log)
	assert.Empty(t, lines, "without --wait-all the worker gets no signal")
}

func TestWaitAllKillsAWorkerThatIgnoresTerm(t *testing.T) {
	// 3 s: the worker logs its SIGTERM before the SIGKILL even on a loaded
	// machine. In parallel, the 3 s are spent beside other tests.
	t.Parallel()
	log := filepath.Join(t.TempDir(), "worker.log")
	p := startPA(t, nil, append([]string{"--proxy", "none", "--wait-all", "3s", "--log-format", "json"},
		child("leave-worker", log, "ignore-term")...)...)
	worker := workerPID(t, p)
	assert.Equal(t, 0, p.wait(), "the main command's code, not the worker's")
	assert.False(t, alive(worker), "the worker should have been killed and reaped")

	lines, _ := workerLog(t, log)
	assert.Equal(t, []string{"signal SIGTERM"}, lines)

	recs := records(t, p.stderr.String())
	started, killed := event(recs, "wait_all_started"), event(recs, "wait_all_killed")
	require.NotNil(t, started)
	require.NotNil(t, killed, "the worker should have been SIGKILLed")
	assert.Nil(t, event(recs, "wait_all_done"))
	from, err := time.Parse(time.RFC3339Nano, started["time"].(string))
	require.NoError(t, err)
	to, err := time.Parse(time.RFC3339Nano, killed["time"].(string))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, to.Sub(from), 3*time.Second, "SIGKILL must wait the whole --wait-all")
}

// As PID 1 the kernel would SIGKILL whatever is left once proxy-await exits;
// with --wait-all it gets its SIGTERM and its time first.
func TestPID1WaitAll(t *testing.T) {
	log := filepath.Join(t.TempDir(), "worker.log")
	p := startAsPID1(t, append([]string{"--proxy", "none", "--wait-all", "5s"},
		child("leave-worker", log, "slow-term")...)...)
	p.expect("worker ")
	assert.Equal(t, 0, p.wait())
	lines, _ := workerLog(t, log)
	assert.Equal(t, []string{"signal SIGTERM", "done"}, lines)
	assert.Contains(t, p.stderr.String(), "every process left behind has exited")
}

func TestPID1WithoutWaitAllTheKernelKillsTheRest(t *testing.T) {
	log := filepath.Join(t.TempDir(), "worker.log")
	p := startAsPID1(t, append([]string{"--proxy", "none"}, child("leave-worker", log, "slow-term")...)...)
	p.expect("worker ")
	assert.Equal(t, 0, p.wait())
	lines, _ := workerLog(t, log)
	assert.Empty(t, lines, "the worker gets no SIGTERM: the kernel kills it when PID 1 exits")
}

func TestExitCodeMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want int
	}{
		{"a stop by SIGTERM reads as success", nil,
			[]string{"--exit-code-map", "143:0", "--", "sh", "-c", "kill -TERM $$"}, 0},
		{"other codes are left alone", nil,
			[]string{"--exit-code-map", "143:0", "--", "sh", "-c", "exit 3"}, 3},
		{"a comma list", nil,
			[]string{"--exit-code-map", "143:0,3:42", "--", "sh", "-c", "exit 3"}, 42},
		{"repeated", nil,
			[]string{"--exit-code-map", "143:0", "--exit-code-map", "3:42", "--", "sh", "-c", "exit 3"}, 42},
		{"not chained", nil,
			[]string{"--exit-code-map", "3:4,4:5", "--", "sh", "-c", "exit 3"}, 4},
		{"from the environment", []string{"PROXY_AWAIT_EXIT_CODE_MAP=143:0"},
			[]string{"--", "sh", "-c", "kill -TERM $$"}, 0},
		{"applies to proxy-await's own codes", nil,
			[]string{"--exit-code-map", "127:0", "--", "/nonexistent/command"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPA(t, tc.env, append([]string{"--proxy", "none"}, tc.args...)...)
			assert.Equal(t, tc.want, p.wait())
		})
	}
}
