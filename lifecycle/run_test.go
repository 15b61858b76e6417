package lifecycle

import (
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/wrapper"
)

// goroutinesBefore counts the goroutines running before run, once the Go
// runtime's own signal loop, which the first signal.Notify starts for good,
// is running.
func goroutinesBefore() int {
	signal.Stop(wrapper.Notify())
	return runtime.NumGoroutine()
}

// noGoroutinesLeft waits until no more goroutines run than before: run's
// helpers (probes, the shutdown POST, the drain watch) must all end with it.
func noGoroutinesLeft(t *testing.T, before int) {
	t.Helper()
	if !testutil.Until(testutil.WaitLimit, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left after run returned (%d before):\n%s",
			runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

func TestNoGoroutineLeftAfterRun(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up", "-ready-after", "50ms")
	c, err := config.Parse("proxy-await", []string{"-S", "--ready-url", fp.URL("/ready"),
		"--shutdown-url", fp.URL("/shutdown"), "--", "true"}, testutil.Getenv(nil))
	require.NoError(t, err)
	before := goroutinesBefore()
	assert.Equal(t, 0, run(c, logging.Discard()))
	noGoroutinesLeft(t, before)
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
}

func TestNoGoroutineLeftAfterDrain(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	t.Setenv(testchild.Env, "listen")
	c, err := config.Parse("proxy-await", []string{"--proxy", "none", "--term-delay", "20s", "--drain-quiet", "100ms",
		"--", testchild.Self(), addrFile}, testutil.Getenv(nil))
	require.NoError(t, err)
	before := goroutinesBefore()
	done := make(chan int, 1)
	go func() { done <- run(c, logging.Discard()) }()

	testutil.Eventually(t, func() bool {
		data, err := os.ReadFile(addrFile)
		return err == nil && len(data) > 0
	}, "the child never listened")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(testutil.WaitLimit):
		t.Fatal("run did not return")
	}
	noGoroutinesLeft(t, before)
}

// --proxy-lost's watch ends with the run, whether the proxy was lost or
// the command exited first.
func TestNoGoroutineLeftAfterProxyLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		lose    bool
		want    int
	}{
		{"lost", []string{"sleep", "60"}, true, 69},
		{"the command exits first", []string{"true"}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-stay-up")
			c, err := config.Parse("proxy-await", append([]string{"--ready-url", fp.URL("/ready"), "--proxy-lost", "200ms", "--"},
				tc.command...), testutil.Getenv(nil))
			require.NoError(t, err)
			before := goroutinesBefore()
			done := make(chan int, 1)
			go func() { done <- run(c, logging.Discard()) }()
			if tc.lose {
				fp.WaitFor("a probe of the watch", func(rs []testutil.Request) bool { return len(rs) >= 2 })
				require.NoError(t, fp.Cmd.Process.Kill())
			}
			select {
			case code := <-done:
				assert.Equal(t, tc.want, code)
			case <-time.After(testutil.WaitLimit):
				t.Fatal("run did not return")
			}
			noGoroutinesLeft(t, before)
		})
	}
}
