package lifecycle_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// --keep-proxy-on-failure when a termination signal ends the wait, before
// the command started: proxy-await exits 128+N, non-zero, so the kubelet
// restarts the container, and the new one needs the proxy. Nothing is
// POSTed, and the last line says why. (Every other path:
// testdata/script/keep-proxy-on-failure.txtar.)
func TestKeepProxyOnFailureInterrupted(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
	p := startPA(t, nil, append([]string{"-S", "--keep-proxy-on-failure",
		"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")}, child("exit", "0")...)...)
	fp.WaitFor("a not-ready probe", notReadyProbes(1))
	p.signal(syscall.SIGTERM)
	assert.Equal(t, 143, p.wait())
	lines := strings.Split(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")
	assert.Zero(t, fp.Count("POST", "/shutdown"), "the restarted container needs the proxy")
	assert.Equal(t, "proxy-await: the run failed: leaving the proxy running for the container's restart exit_code=143", lines[len(lines)-1])
}
