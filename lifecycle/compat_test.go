package lifecycle_test

import (
	"net/url"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// Each preset against the fake proxy of its flavor, on free ports: the
// paths the preset probes and POSTs are the ones the proxy serves. linkerd
// and envoy move with -p; istio has no --port, so its preset's URLs are
// given on the fake proxy's ports.
func TestPresetsAgainstTheirProxies(t *testing.T) {
	for _, tc := range []struct {
		flavor string
		ready  string // the path probed
		quit   string // the path POSTed
	}{
		{"linkerd", "/ready", "/shutdown"},
		{"istio", "/healthz/ready", "/quitquitquit"},
		{"envoy", "/ready", "/quitquitquit"},
	} {
		t.Run(tc.flavor, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-flavor", tc.flavor, "-ready-after", "never", "-stay-up")
			args := []string{"--proxy", tc.flavor, "-S"}
			if pr, _ := config.LookupPreset(tc.flavor); pr.Port != 0 {
				args = append(args, "-p", portOf(fp))
			} else {
				args = append(args, "--ready-url", onAddr(t, pr.Ready, fp.Ready), "--shutdown-url", onAddr(t, pr.Shutdown, fp.Addr))
			}
			p := startPA(t, nil, append(args, child("args", "started")...)...)
			fp.WaitFor("a not-ready probe", notReadyProbes(1))
			fp.Signal(syscall.SIGUSR1)
			p.expect("started")
			assert.Equal(t, 0, p.wait())
			assert.Equal(t, 1, fp.Count("POST", tc.quit))
			assert.GreaterOrEqual(t, fp.Count("GET", tc.ready), 2)
		})
	}
}

// onAddr is rawURL with its host and port replaced by addr.
func onAddr(t *testing.T, rawURL, addr string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	require.NotEmpty(t, addr)
	u.Host = addr
	return u.String()
}
