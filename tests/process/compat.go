package process

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
func (Tests) TestPresetsAgainstTheirProxies(t *testing.T) {
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

func (Tests) TestPortFlag(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	p := startPA(t, nil, append([]string{steadyProbe, "10s", "-S", "-p", portOf(fp)}, child("exit", "0")...)...)
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, fp.Count("GET", "/ready"))
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
}

func (Tests) TestEveryReadinessURLMustBeReady(t *testing.T) {
	a := testutil.StartFakeProxy(t, "-stay-up")
	b := testutil.StartFakeProxy(t, "-ready-after", "never")
	p := startPA(t, nil, append([]string{steadyProbe, "10s", "--ready-url", a.URL("/ready"), "--ready-url", b.URL("/ready")},
		child("args", "started")...)...)
	b.WaitFor("b not ready", notReadyProbes(3))
	p.silent("only one of two URLs is ready")
	b.Signal(syscall.SIGUSR1)
	p.expect("started")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, a.Count("GET", "/ready"), "a ready URL is not probed again")
}

// link makes a link to proxy-await named name and returns its path.
func link(t *testing.T, name string) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(proxyAwaitBin, path))
	return path
}

func (Tests) TestAsScuttle(t *testing.T) {
	bin := link(t, "scuttle")

	t.Run("no variables: run the command, nothing else", func(t *testing.T) {
		p := startBinary(t, bin, nil, "sh", "-c", "exit 4")
		assert.Equal(t, 4, p.wait())
	})
	t.Run("ENVOY_ADMIN_API waits for Envoy and quits it", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-ready-after", "never", "-stay-up")
		p := startBinary(t, bin, []string{"ENVOY_ADMIN_API=http://" + fp.Addr}, child("args", "started")[1:]...)
		fp.WaitFor("a not-ready probe", notReadyProbes(1))
		fp.Signal(syscall.SIGUSR1)
		p.expect("started")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("POST", "/quitquitquit"))
	})
	t.Run("ISTIO_QUIT_API and GENERIC_QUIT_ENDPOINTS", func(t *testing.T) {
		istio := testutil.StartFakeProxy(t, "-flavor", "istio", "-stay-up")
		generic := testutil.StartFakeProxy(t, "-stay-up")
		p := startBinary(t, bin, []string{"ISTIO_QUIT_API=http://" + istio.Addr, "GENERIC_QUIT_ENDPOINTS=" + generic.URL("/shutdown")},
			"true")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, istio.Count("POST", "/quitquitquit"))
		assert.Equal(t, 1, generic.Count("POST", "/shutdown"))
	})
	t.Run("GENERIC_QUIT_ONLY", func(t *testing.T) {
		envoy := testutil.StartFakeProxy(t, "-flavor", "envoy", "-stay-up")
		generic := testutil.StartFakeProxy(t, "-stay-up")
		p := startBinary(t, bin, []string{"ENVOY_ADMIN_API=http://" + envoy.Addr,
			"GENERIC_QUIT_ENDPOINTS=" + generic.URL("/shutdown"), "GENERIC_QUIT_ONLY=true"}, "true")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 0, envoy.Count("POST", "/quitquitquit"), "Envoy is not told to quit")
		assert.Equal(t, 1, generic.Count("POST", "/shutdown"))
	})
	t.Run("the proxy is quit when the command cannot start", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-stay-up")
		p := startBinary(t, bin, []string{"ENVOY_ADMIN_API=http://" + fp.Addr}, "/nonexistent/app")
		assert.Equal(t, 127, p.wait())
		assert.Equal(t, 1, fp.Count("POST", "/quitquitquit"))
	})
	t.Run("NEVER_KILL_ISTIO_ON_FAILURE", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-stay-up")
		env := []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "NEVER_KILL_ISTIO_ON_FAILURE=true"}
		assert.Equal(t, 1, startBinary(t, bin, env, "false").wait())
		assert.Equal(t, 0, fp.Count("POST", "/quitquitquit"))
		assert.Equal(t, 0, startBinary(t, bin, env, "true").wait())
		assert.Equal(t, 1, fp.Count("POST", "/quitquitquit"))
	})
	t.Run("NEVER_KILL_ISTIO", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy")
		p := startBinary(t, bin, []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "NEVER_KILL_ISTIO=true"}, "true")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 0, fp.Count("POST", "/quitquitquit"))
	})
	t.Run("timeouts", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-ready-after", "never", "-stay-up")
		env := []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "WAIT_FOR_ENVOY_TIMEOUT=100ms"}
		assert.Equal(t, 5, startBinary(t, bin, env, "sh", "-c", "exit 5").wait(), "starts anyway")
		env = append(env, "QUIT_WITHOUT_ENVOY_TIMEOUT=100ms")
		p := startBinary(t, bin, env, child("args", "started")[1:]...)
		assert.Equal(t, 69, p.wait(), "QUIT_WITHOUT_ENVOY_TIMEOUT wins and gives up")
		assert.Empty(t, p.restLines)
		assert.Equal(t, 2, fp.Count("POST", "/quitquitquit"), "quit on both paths")
	})
	// scuttle's default QUIT_WITHOUT_ENVOY_TIMEOUT is 0, which its
	// waitForEnvoy (kvij/scuttle main.go lines 187-193, redboxllc/scuttle
	// main.go 189-195) reads as not set: WAIT_FOR_ENVOY_TIMEOUT applies, and
	// the command starts once it has run out, though Envoy never answers.
	t.Run("QUIT_WITHOUT_ENVOY_TIMEOUT=0 is not set", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-ready-fault", "hang", "-stay-up")
		env := []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "WAIT_FOR_ENVOY_TIMEOUT=300ms", "QUIT_WITHOUT_ENVOY_TIMEOUT=0"}
		p := startBinary(t, bin, env, child("args", "started")[1:]...)
		p.expect("started")
		assert.Equal(t, 0, p.wait())
		assert.Contains(t, p.stderr.String(), "proxy-await: warning: proxy not ready: starting the command anyway")
		assert.Equal(t, 1, fp.Count("POST", "/quitquitquit"))
	})
	// QUIT_REQUEST_TIMEOUT bounds scuttle's quit requests (kvij/scuttle
	// scuttle_config.go line 47, main.go lines 149 and 170); here it is
	// --shutdown-timeout.
	t.Run("QUIT_REQUEST_TIMEOUT", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-shutdown-fault", "hang", "-stay-up")
		env := []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "ISTIO_QUIT_API=http://" + fp.Addr, "QUIT_REQUEST_TIMEOUT=400ms"}
		p := startBinary(t, bin, env, "true")
		assert.Equal(t, 0, p.wait())
		assert.Contains(t, p.stderr.String(), "proxy-await: error: proxy did not shut down within 400ms")
	})
	// A boolean is exactly true or false to scuttle, which ignores any other
	// value (scuttle_config.go getBoolFromEnv: kvij/scuttle lines 89-109,
	// redboxllc/scuttle 79-99): NEVER_KILL_ISTIO=yes leaves the default,
	// false, so the proxy is quit, and the pod does not crash-loop on a
	// usage error.
	t.Run("a boolean scuttle ignores", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-stay-up")
		env := []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "ISTIO_QUIT_API=http://" + fp.Addr, "NEVER_KILL_ISTIO=yes"}
		p := startBinary(t, bin, env, child("args", "started")[1:]...)
		p.expect("started")
		assert.Equal(t, 0, p.wait())
		first, _, _ := strings.Cut(p.stderr.String(), "\n")
		assert.Equal(t, `proxy-await: warning: invalid value "yes" for $NEVER_KILL_ISTIO: not true or false, so ignored, `+
			`as scuttle ignores it (hint: write true or false)`, first)
		assert.Equal(t, 2, fp.Count("POST", "/quitquitquit"), "Envoy's and ISTIO_QUIT_API's, the same fake here")
	})
	t.Run("START_WITHOUT_ENVOY", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-flavor", "envoy", "-ready-after", "never", "-stay-up")
		p := startBinary(t, bin, []string{"ENVOY_ADMIN_API=http://" + fp.Addr, "START_WITHOUT_ENVOY=true"}, "true")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 0, fp.Count("GET", "/ready"))
		assert.Equal(t, 1, fp.Count("POST", "/quitquitquit"))
	})
	t.Run("SCUTTLE_LOGGING=false", func(t *testing.T) {
		p := startBinary(t, bin, []string{"SCUTTLE_LOGGING=false"}, "true")
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.stderr.String())
	})
	t.Run("a non-loopback quit endpoint is a usage error", func(t *testing.T) {
		p := startBinary(t, bin, []string{"GENERIC_QUIT_ENDPOINTS=http://10.1.2.3/quit"}, child("args", "started")[1:]...)
		assert.Equal(t, 2, p.wait())
		assert.Empty(t, p.restLines)
		assert.Contains(t, p.stderr.String(), `invalid value "http://10.1.2.3/quit" for $GENERIC_QUIT_ENDPOINTS`)
	})
}
