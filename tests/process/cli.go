package process

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// The command line end to end, where a proxy turns ready while proxy-await
// waits, or a signal comes: the rest is in testdata/script (wait-only*,
// linkerd-await-*, url-with-comma, first-waiting-line-names-the-preset).

// portOf is the port a fake proxy's admin listener took.
func portOf(fp *testutil.FakeProxy) string {
	_, port, _ := strings.Cut(fp.Addr, ":")
	return port
}

// Without COMMAND, proxy-await waits for the proxy and exits: 0 once it
// turns ready, 128+N on a termination signal. Nothing is shut down.
func (Tests) TestWaitOnly(t *testing.T) {
	t.Run("ready: 0", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startPA(t, nil, "-p", portOf(fp))
		fp.WaitFor("a not-ready probe", notReadyProbes(1))
		fp.Signal(syscall.SIGUSR1)
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.restLines, "stdout carries nothing")
		assert.Contains(t, p.stderr.String(), "proxy-await: proxy is ready")
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"), "the proxy stays up")
	})
	t.Run("SIGTERM while waiting: 143", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startPA(t, nil, "-p", portOf(fp))
		fp.WaitFor("a not-ready probe", notReadyProbes(1))
		p.signal(syscall.SIGTERM)
		assert.Equal(t, 143, p.wait())
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
	})
}

// Installed as linkerd-await, the entrypoint its README documents
// (linkerd/linkerd-await 0.3: ENTRYPOINT ["/linkerd-await", "--shutdown",
// "--"]) waits for the proxy, runs the command and shuts the proxy down;
// testdata/script/linkerd-await-*.txtar has its flags and variables. Its
// fixed port 4191 is never bound here: PROXY_AWAIT_PORT points at a free
// one.
func (Tests) TestAsLinkerdAwait(t *testing.T) {
	bin := link(t, "linkerd-await")

	t.Run("--shutdown -- CMD: wait, run, shut down", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never")
		p := startBinary(t, bin, []string{"PROXY_AWAIT_PORT=" + portOf(fp)}, append([]string{"--shutdown"}, child("args", "started")...)...)
		fp.WaitFor("a not-ready probe", notReadyProbes(1))
		p.silent("the proxy is not ready")
		fp.Signal(syscall.SIGUSR1)
		p.expect("started")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	})
}
