package testutil

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/fakeproxy"
)

// WaitLimit bounds every wait of the tests that run processes, so that a
// broken build fails instead of hanging; it is never how long a test
// expects something to take.
const WaitLimit = 20 * time.Second

// FakeProxy is a running fakeproxy (internal/fakeproxy), found on PATH: the
// tests of the root package put it there (their TestMain).
type FakeProxy struct {
	t       testing.TB
	Cmd     *exec.Cmd
	Addr    string // the admin listener: the shutdown endpoint's (and the readiness endpoint's on one port)
	Ready   string // the readiness endpoint's listener, where the proxy serves it on a port of its own
	logPath string
}

// StartFakeProxy runs the fake proxy with args, on free ports unless args
// say, and returns once it serves. It is killed when the test ends.
func StartFakeProxy(t testing.TB, args ...string) *FakeProxy {
	t.Helper()
	fp := &FakeProxy{t: t, logPath: filepath.Join(t.TempDir(), "requests.log")}
	hasAddr := false
	for _, a := range args {
		hasAddr = hasAddr || strings.HasPrefix(a, "-addr")
	}
	if !hasAddr {
		args = append(args, "-addr", "127.0.0.1:0", "-ready-addr", "127.0.0.1:0")
	}
	fp.Cmd = exec.Command("fakeproxy", append([]string{"-log", fp.logPath}, args...)...)
	fp.Cmd.Stderr = os.Stderr
	stdout, err := fp.Cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, fp.Cmd.Start())
	t.Cleanup(func() {
		_ = fp.Cmd.Process.Kill()
		_ = fp.Cmd.Wait()
	})
	addrs, err := fakeproxy.Listening(stdout)
	require.NoError(t, err)
	fp.Addr, fp.Ready = addrs["admin"], addrs["ready"]
	require.True(t, fp.Addr != "" || fp.Ready != "", "fakeproxy did not say where it listens")
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return fp
}

// URL is the URL of path on the admin listener.
func (fp *FakeProxy) URL(path string) string { return "http://" + fp.Addr + path }

// Request is one line of the fake proxy's request log.
type Request struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Status int       `json:"status"`
	Note   string    `json:"note"`
}

// Requests reads the request log as it stands.
func (fp *FakeProxy) Requests() []Request {
	fp.t.Helper()
	data, err := os.ReadFile(fp.logPath)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(fp.t, err)
	var out []Request
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r Request
		require.NoError(fp.t, json.Unmarshal([]byte(line), &r))
		out = append(out, r)
	}
	return out
}

// Count is how many requests match method and path.
func (fp *FakeProxy) Count(method, path string) int {
	n := 0
	for _, r := range fp.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// WaitFor polls the request log until cond holds: the log is the fake
// proxy's own record of what happened, so this waits on an event, not a time.
func (fp *FakeProxy) WaitFor(what string, cond func([]Request) bool) {
	fp.t.Helper()
	Eventually(fp.t, func() bool { return cond(fp.Requests()) }, "fake proxy: %s did not happen", what)
}

// Signal sends sig to the fake proxy: SIGUSR1 turns it ready, SIGUSR2 not
// ready again.
func (fp *FakeProxy) Signal(sig syscall.Signal) {
	fp.t.Helper()
	require.NoError(fp.t, fp.Cmd.Process.Signal(sig))
}

// Kill ends the fake proxy as a crash would, and returns once it has
// exited: its ports refuse connections from then on.
func (fp *FakeProxy) Kill() {
	fp.t.Helper()
	require.NoError(fp.t, fp.Cmd.Process.Kill())
	_ = fp.Cmd.Wait() // killed: the error says so
}
