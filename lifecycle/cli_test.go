package lifecycle_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// The command line end to end where a signal comes while proxy-await
// waits: the rest is in testdata/script (wait-only*, linkerd-await-*,
// scuttle-*, url-with-comma, first-waiting-line-names-the-preset).

// portOf is the port a fake proxy's admin listener took.
func portOf(fp *testutil.FakeProxy) string {
	_, port, _ := strings.Cut(fp.Addr, ":")
	return port
}

// Without COMMAND, a termination signal while proxy-await waits for the
// proxy exits 128+N, and nothing is shut down (a proxy that turns ready:
// testdata/script/wait-only.txtar).
func TestWaitOnlyInterrupted(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
	p := startPA(t, nil, "-p", portOf(fp))
	fp.WaitFor("a not-ready probe", notReadyProbes(1))
	p.signal(syscall.SIGTERM)
	assert.Equal(t, 143, p.wait())
	assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
}
