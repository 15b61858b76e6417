package process

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// The command line end to end, through the built binary.

// portOf is the port a fake proxy's admin listener took.
func portOf(fp *testutil.FakeProxy) string {
	_, port, _ := strings.Cut(fp.Addr, ":")
	return port
}

// Without COMMAND, proxy-await waits for the proxy and exits: 0 once it is
// ready, 69 on a fatal timeout, 128+N on a termination signal. Nothing is
// shut down.
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
	t.Run("-- and no command: 0", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		p := startPA(t, nil, steadyProbe, "10s", "--ready-url", fp.URL("/ready"), "--")
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("GET", "/ready"))
	})
	t.Run("fatal timeout: 69", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startPA(t, nil, "-p", portOf(fp), "-t", "100ms")
		assert.Equal(t, 69, p.wait())
		assert.Contains(t, p.stderr.String(), "proxy not ready: giving up")
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
	})
	t.Run("timeout not fatal: 0", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startPA(t, nil, "-p", portOf(fp), "-t", "100ms", "--timeout-fatal=false")
		assert.Equal(t, 0, p.wait())
		assert.Contains(t, p.stderr.String(), "warning: proxy not ready: done waiting", "there is no command to start")
		assert.NotContains(t, p.stderr.String(), "starting the command")
	})
	t.Run("SIGTERM while waiting: 143", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startPA(t, nil, "-p", portOf(fp))
		fp.WaitFor("a not-ready probe", notReadyProbes(1))
		p.signal(syscall.SIGTERM)
		assert.Equal(t, 143, p.wait())
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
	})
	t.Run("-S without a command is a usage error", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		p := startPA(t, nil, "-S", "-p", portOf(fp))
		assert.Equal(t, 2, p.wait())
		assert.Equal(t, "proxy-await: --shutdown without a command: there is no command to run before the shutdown\n"+
			"proxy-await: hint: put the command after --, or drop --shutdown to only wait for the proxy\n", p.stderr.String())
		assert.Empty(t, fp.Requests(), "a usage error sends nothing to the proxy")
	})
}

// A URL flag on the command line takes one URL, commas and all.
func (Tests) TestURLWithCommaEndToEnd(t *testing.T) {
	fp := testutil.StartFakeProxy(t)
	p := startPA(t, nil, append([]string{steadyProbe, "10s", "-S", "--ready-url", fp.URL("/ready?a=1,2"), "--shutdown-url", fp.URL("/shutdown?b=3,4")},
		child("args", "started")...)...)
	p.expect("started")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, fp.Count("GET", "/ready"))
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
}

// Installed as linkerd-await, each use its README and --help document works
// (linkerd/linkerd-await 0.3: -p/--port, -b/--backoff, -S/--shutdown,
// -t/--timeout, --timeout-fatal[=BOOL], -v/--verbose with
// LINKERD_AWAIT_VERBOSE, -h, -V, LINKERD_AWAIT_DISABLED and LINKERD_DISABLED,
// ENTRYPOINT ["/linkerd-await", "--shutdown", "--"]). Its fixed port 4191 is
// never bound here: -p or PROXY_AWAIT_PORT points at a free one.
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
	t.Run("-S -p PORT -- CMD: the command's exit code", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t)
		p := startBinary(t, bin, nil, append([]string{"-S", "-p", portOf(fp)}, child("exit", "3")...)...)
		assert.Equal(t, 3, p.wait())
		assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
	})
	t.Run("--port PORT -- CMD: no shutdown without -S", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		p := startBinary(t, bin, nil, append([]string{"--port", portOf(fp)}, child("exit", "0")...)...)
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("GET", "/ready"))
		assert.Equal(t, 0, fp.Count("POST", "/shutdown"))
	})
	t.Run("no command: wait only", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		p := startBinary(t, bin, nil, "-p", portOf(fp))
		assert.Equal(t, 0, p.wait())
		assert.Equal(t, 1, fp.Count("GET", "/ready"))
	})
	t.Run("-t, --timeout and -b with each duration form", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		for _, d := range []string{"0", "0s", "5000ms", "10s", "1m", "1h", "1d", " 12s "} {
			p := startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "-t", d}, child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait(), "-t %q", d)
			p = startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "--timeout=" + d}, child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait(), "--timeout=%q", d)
		}
		for _, d := range []string{"1ms", "1s", "1m"} {
			p := startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "-b", d, "--backoff", d}, child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait(), "-b %q", d)
		}
	})
	t.Run("--timeout: 69, or the command with --timeout-fatal=false", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		p := startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "--timeout", "100ms"}, child("args", "started")...)...)
		assert.Equal(t, 69, p.wait())
		assert.Empty(t, p.restLines, "the command never started")
		p = startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "--timeout", "100ms", "--timeout-fatal=false"},
			child("exit", "4")...)...)
		assert.Equal(t, 4, p.wait())
		p = startBinary(t, bin, nil, append([]string{"-p", portOf(fp), "--timeout", "100ms", "--timeout-fatal"},
			child("exit", "4")...)...)
		assert.Equal(t, 69, p.wait())
	})
	t.Run("LINKERD_AWAIT_DISABLED and LINKERD_DISABLED", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-ready-after", "never", "-stay-up")
		for _, v := range []string{"LINKERD_AWAIT_DISABLED=Linkerd is disabled ;(", "LINKERD_DISABLED=1"} {
			p := startBinary(t, bin, []string{v}, append([]string{"-p", portOf(fp)}, child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait(), v)
			assert.Contains(t, p.stderr.String(), "readiness wait disabled", v)
		}
		assert.Equal(t, 0, fp.Count("GET", "/ready"), "nothing probed")
	})
	t.Run("-v and LINKERD_AWAIT_VERBOSE", func(t *testing.T) {
		fp := testutil.StartFakeProxy(t, "-stay-up")
		for _, tc := range []struct {
			env   []string
			args  []string
			debug bool
		}{
			{nil, []string{"-v"}, true},
			{nil, []string{"--verbose"}, true},
			{[]string{"LINKERD_AWAIT_VERBOSE=1"}, nil, true},
			{[]string{"LINKERD_AWAIT_VERBOSE=false"}, nil, false},
			{nil, nil, false},
		} {
			p := startBinary(t, bin, tc.env, append(append(tc.args, "-p", portOf(fp)), child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait())
			assert.Equal(t, tc.debug, strings.Contains(p.stderr.String(), "proxy-await: debug: "), "%v %v", tc.env, tc.args)
		}
	})
	t.Run("-h and -V", func(t *testing.T) {
		p := startBinary(t, bin, nil, "-h")
		assert.Equal(t, 0, p.wait())
		assert.Contains(t, strings.Join(p.restLines, "\n"), "usage: proxy-await")
		p = startBinary(t, bin, nil, "-V")
		assert.Equal(t, 0, p.wait())
		require.NotEmpty(t, p.restLines)
		assert.True(t, strings.HasPrefix(p.restLines[0], "proxy-await "), p.restLines[0])
	})
	t.Run("--shutdown without a command is a usage error", func(t *testing.T) {
		p := startBinary(t, bin, nil, "--shutdown")
		assert.Equal(t, 2, p.wait())
	})
}

// The first line of a wait names the preset, and says when it is the
// default: in a pod of another mesh, the default linkerd preset waits on a
// port where nothing listens, and the first line is where a newcomer looks.
func (Tests) TestFirstWaitingLineNamesThePreset(t *testing.T) {
	for _, tc := range []struct {
		args []string
		from string
	}{
		{nil, "--proxy linkerd (the default)"},
		{[]string{"--proxy", "Linkerd"}, "--proxy linkerd"},
	} {
		t.Run(tc.from, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-stay-up")
			p := startPA(t, nil, append(append(tc.args, steadyProbe, "10s", "-p", portOf(fp)), child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait())
			first, _, _ := strings.Cut(p.stderr.String(), "\n")
			assert.Equal(t, "proxy-await: waiting for the proxy: "+tc.from+" url="+fp.URL("/ready"), first)
		})
	}
}
