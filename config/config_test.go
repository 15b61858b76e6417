package config

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/proxies"

	"github.com/proxy-await/proxy-await/internal/hint"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"250ms", 250 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"15", 15 * time.Second, ""},
		{"2d", 48 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"0s", 0, ""},
		{"", 0, "empty duration"},
		{"soon", 0, "not a duration"},
		{"-1s", 0, "must not be negative"},
		{"-5", 0, "must not be negative"},
		{"5x", 0, "not a duration"},
		{"d", 0, "not a duration"},
		{"1d-1h", 0, "must not be negative"},
		{"1e3d", 0, "not a duration"},
		{"99999999999999999", 0, "out of range"},
		{"300000d", 0, "out of range"},
		// linkerd-await's forms: N with ms, s, m, h or d, a bare 0, spaces around.
		{"500ms", 500 * time.Millisecond, ""},
		{"1h", time.Hour, ""},
		{" \n12s \t", 12 * time.Second, ""},
		{"  ", 0, "empty duration"},
		{"1 s", 0, "not a duration"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseDuration(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"linkerd"}, c.Proxies)
	assert.Equal(t, 4191, c.Port)
	assert.Equal(t, []string{"http://127.0.0.1:4191/ready"}, c.ReadyURLs)
	assert.Equal(t, []string{"http://127.0.0.1:4191/shutdown"}, c.ShutdownURLs)
	assert.Equal(t, 20*time.Millisecond, c.Backoff)
	assert.Equal(t, time.Second, c.ProbeTimeout)
	assert.Equal(t, time.Duration(0), c.Timeout)
	assert.True(t, c.TimeoutFatal)
	assert.False(t, c.Shutdown)
	assert.Equal(t, 5*time.Second, c.ShutdownTimeout)
	assert.Empty(t, c.Rewrite)
	assert.False(t, c.ProcessGroup)
	assert.Zero(t, c.TermDelay)
	assert.Zero(t, c.DrainQuiet)
	assert.Zero(t, c.KillAfter)
	assert.Equal(t, "text", c.LogFormat)
	assert.Equal(t, []string{"app"}, c.Command)
}

func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		args            []string
		ready, shutdown []string
	}{
		{[]string{"--proxy", "linkerd"}, []string{"http://127.0.0.1:4191/ready"}, []string{"http://127.0.0.1:4191/shutdown"}},
		{[]string{"--proxy", "linkerd", "-p", "4999"}, []string{"http://127.0.0.1:4999/ready"}, []string{"http://127.0.0.1:4999/shutdown"}},
		{[]string{"--proxy", "istio"}, []string{"http://127.0.0.1:15021/healthz/ready"}, []string{"http://127.0.0.1:15020/quitquitquit"}},
		{[]string{"--proxy", "envoy"}, []string{"http://127.0.0.1:15000/ready"}, []string{"http://127.0.0.1:15000/quitquitquit"}},
		{[]string{"--proxy", "envoy", "--port=9901"}, []string{"http://127.0.0.1:9901/ready"}, []string{"http://127.0.0.1:9901/quitquitquit"}},
		{[]string{"--proxy", "none"}, nil, nil},
		{[]string{"--proxy", "none", "--ready-url", "http://127.0.0.1:1/r"}, []string{"http://127.0.0.1:1/r"}, nil},
		{[]string{"--ready-url", "http://127.0.0.1:1/a", "--ready-url", "http://[::1]:2/b", "--ready-url", "https://localhost/c"},
			[]string{"http://127.0.0.1:1/a", "http://[::1]:2/b", "https://localhost/c"}, []string{"http://127.0.0.1:4191/shutdown"}},
		{[]string{"-p", "010"}, []string{"http://127.0.0.1:10/ready"}, []string{"http://127.0.0.1:10/shutdown"}},
		{[]string{"--proxy", "istio", "--shutdown-url", "http://127.0.0.2:9/quit"},
			[]string{"http://127.0.0.1:15021/healthz/ready"}, []string{"http://127.0.0.2:9/quit"}},
		{[]string{"--proxy", "cloudsql"}, []string{"http://127.0.0.1:9090/startup"}, []string{"http://127.0.0.1:9091/quitquitquit"}},
		{[]string{"--proxy", "dapr"}, []string{"http://127.0.0.1:3500/v1.0/healthz/outbound"}, []string{"http://127.0.0.1:3500/v1.0/shutdown"}},
		{[]string{"--proxy", "consul"}, []string{"http://127.0.0.1:19000/ready"}, []string{"http://127.0.0.1:20600/graceful_shutdown"}},
		{[]string{"--proxy", "istio,cloudsql"},
			[]string{"http://127.0.0.1:15021/healthz/ready", "http://127.0.0.1:9090/startup"},
			[]string{"http://127.0.0.1:15020/quitquitquit", "http://127.0.0.1:9091/quitquitquit"}},
		{[]string{"--proxy", "linkerd", "--proxy", "dapr"},
			[]string{"http://127.0.0.1:4191/ready", "http://127.0.0.1:3500/v1.0/healthz/outbound"},
			[]string{"http://127.0.0.1:4191/shutdown", "http://127.0.0.1:3500/v1.0/shutdown"}},
		{[]string{"--proxy", "istio,cloudsql,istio"}, // a name given twice counts once
			[]string{"http://127.0.0.1:15021/healthz/ready", "http://127.0.0.1:9090/startup"},
			[]string{"http://127.0.0.1:15020/quitquitquit", "http://127.0.0.1:9091/quitquitquit"}},
		{[]string{"--proxy", "envoy,consul", "--ready-url", "http://127.0.0.1:1/r"},
			[]string{"http://127.0.0.1:1/r"}, []string{"http://127.0.0.1:15000/quitquitquit", "http://127.0.0.1:20600/graceful_shutdown"}},
		{[]string{"--proxy", "none,none"}, nil, nil},
	} {
		c, err := Parse("proxy-await", append(tc.args, "app"), testutil.Getenv(nil))
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.ready, c.ReadyURLs, "%v", tc.args)
		assert.Equal(t, tc.shutdown, c.ShutdownURLs, "%v", tc.args)
	}
}

func TestProxyListFromTheEnvironment(t *testing.T) {
	c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_PROXY": "istio,cloudsql"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"istio", "cloudsql"}, c.Proxies)
	assert.Equal(t, []string{"http://127.0.0.1:15021/healthz/ready", "http://127.0.0.1:9090/startup"}, c.ReadyURLs)
	assert.Equal(t, []string{"http://127.0.0.1:15020/quitquitquit", "http://127.0.0.1:9091/quitquitquit"}, c.ShutdownURLs)

	c, err = Parse("proxy-await", []string{"--proxy", "dapr", "app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_PROXY": "istio,cloudsql"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"dapr"}, c.Proxies, "the command line replaces the variable's list")
}

// An unknown proxy's hint lists every preset.
func TestUnknownProxyHint(t *testing.T) {
	for _, e := range []map[string]string{nil, {"PROXY_AWAIT_PROXY": "istio,foo"}} {
		args := []string{"app"}
		if e == nil {
			args = []string{"--proxy", "istio,foo", "app"}
		}
		_, err := Parse("proxy-await", args, testutil.Getenv(e))
		var u *UsageError
		require.ErrorAs(t, err, &u)
		for _, name := range presetNames() {
			assert.Contains(t, hint.Of(u), name)
		}
	}
}

func TestRewriteTable(t *testing.T) {
	c, err := Parse("proxy-await", []string{"-r", "TERM:USR1", "--rewrite", "sigint:0,1:15", "-r", "WINCH:SIGHUP",
		"-r", "010:012", "-r", "RTMIN+1:rtmax", "--rewrite=SIGRTMAX-1:SIGRTMIN+15,RTMAX-14:SIGRTMIN", "app"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{
		syscall.SIGTERM:  syscall.SIGUSR1,
		syscall.SIGINT:   0,
		syscall.SIGHUP:   syscall.SIGTERM,
		syscall.SIGWINCH: syscall.SIGHUP,
		10:               12, // decimal, not octal
		35:               64, // the names `kill -l` prints on Debian: RTMIN is 34, RTMAX 64
		63:               49,
		50:               34,
	}, c.Rewrite)
}

func TestEnvironmentAndPrecedence(t *testing.T) {
	vars := map[string]string{
		"PROXY_AWAIT_PROXY":                 "envoy",
		"PROXY_AWAIT_PORT":                  "9901",
		"PROXY_AWAIT_BACKOFF":               "100ms",
		"PROXY_AWAIT_PROBE_TIMEOUT":         "2",
		"PROXY_AWAIT_TIMEOUT":               "1m",
		"PROXY_AWAIT_TIMEOUT_FATAL":         "false",
		"PROXY_AWAIT_SHUTDOWN":              "true",
		"PROXY_AWAIT_SHUTDOWN_TIMEOUT":      "3s",
		"PROXY_AWAIT_KEEP_PROXY_ON_FAILURE": "true",
		"PROXY_AWAIT_REWRITE":               "TERM:USR1,HUP:0",
		"PROXY_AWAIT_PROCESS_GROUP":         "1",
		"PROXY_AWAIT_TERM_DELAY":            "20s",
		"PROXY_AWAIT_KILL_AFTER":            "1d",
		"PROXY_AWAIT_LOG_FORMAT":            "json",
		"PROXY_AWAIT_QUIET":                 "true",
	}
	c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(vars))
	require.NoError(t, err)
	assert.Equal(t, []string{"envoy"}, c.Proxies)
	assert.Equal(t, []string{"http://127.0.0.1:9901/ready"}, c.ReadyURLs)
	assert.Equal(t, 100*time.Millisecond, c.Backoff)
	assert.Equal(t, 2*time.Second, c.ProbeTimeout)
	assert.Equal(t, time.Minute, c.Timeout)
	assert.False(t, c.TimeoutFatal)
	assert.True(t, c.Shutdown)
	assert.Equal(t, 3*time.Second, c.ShutdownTimeout)
	assert.True(t, c.KeepProxy)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGUSR1, syscall.SIGHUP: 0}, c.Rewrite)
	assert.True(t, c.ProcessGroup)
	assert.Equal(t, 20*time.Second, c.TermDelay)
	assert.Equal(t, 24*time.Hour, c.KillAfter)
	assert.Equal(t, "json", c.LogFormat)
	assert.True(t, c.Quiet)

	// The command line wins, flag by flag.
	c, err = Parse("proxy-await", []string{"--proxy", "linkerd", "-p", "4192", "-b", "5ms", "--timeout-fatal", "-S=false",
		"--keep-proxy-on-failure=false", "-r", "TERM:INT", "--log-format", "text", "app"}, testutil.Getenv(vars))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:4192/ready"}, c.ReadyURLs)
	assert.Equal(t, 5*time.Millisecond, c.Backoff)
	assert.True(t, c.TimeoutFatal)
	assert.False(t, c.Shutdown)
	assert.False(t, c.KeepProxy)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGINT}, c.Rewrite,
		"a flag replaces the variable's list, it does not add to it")
	assert.Equal(t, "text", c.LogFormat)
	assert.Equal(t, time.Minute, c.Timeout, "what the command line does not say still comes from the environment")

	// The list variables take comma-separated lists.
	c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_READY_URL":    "http://127.0.0.1:1/a,http://127.0.0.1:2/b",
		"PROXY_AWAIT_SHUTDOWN_URL": "http://localhost:1/q",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:1/a", "http://127.0.0.1:2/b"}, c.ReadyURLs)
	assert.Equal(t, []string{"http://localhost:1/q"}, c.ShutdownURLs)

	// An empty variable is as good as unset.
	c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_TIMEOUT": ""}))
	require.NoError(t, err)
	assert.Zero(t, c.Timeout)
}

func TestLinkerdAwaitVariables(t *testing.T) {
	for _, v := range []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"} {
		c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{v: "true"}))
		require.NoError(t, err)
		assert.True(t, c.Disabled, v)
		c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{v: ""}))
		require.NoError(t, err)
		assert.False(t, c.Disabled, v+" empty")
	}
	for v, want := range map[string]bool{"1": true, "true": true, "yes": true, "on": true, "anything": true,
		"0": false, "false": false, "FALSE": false, "no": false, "off": false, "n": false, "f": false, "": false} {
		c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"LINKERD_AWAIT_VERBOSE": v}))
		require.NoError(t, err)
		assert.Equal(t, want, c.Verbose, "LINKERD_AWAIT_VERBOSE=%q", v)
	}
	c, err := Parse("proxy-await", []string{"--verbose=false", "app"}, testutil.Getenv(map[string]string{"LINKERD_AWAIT_VERBOSE": "1"}))
	require.NoError(t, err)
	assert.False(t, c.Verbose, "the flag wins")
}

// Every usage error: its exact message (the first line printed) and hint.
const notLoopback = "is not loopback: a proxy accepts shutdown only from inside the pod"

func TestUsageErrors(t *testing.T) {
	const duration = "not a duration (use 250ms, 1m30s, 2d or seconds)"
	for _, tc := range []struct {
		args []string
		env  map[string]string
		msg  string
		hint string
	}{
		{[]string{"--bogus", "app"}, nil, "unknown flag --bogus", "see --help for the flags"},
		{[]string{"-x", "app"}, nil, "unknown flag -x", "see --help for the flags"},
		{[]string{"--timeout"}, nil, "--timeout needs a value", "write --timeout=30s"},
		{[]string{"--timeout", "5q", "app"}, nil, `invalid value "5q" for --timeout: ` + duration, ""},
		{[]string{"--term-delay", "-3s", "app"}, nil, `invalid value "-3s" for --term-delay: must not be negative`, ""},
		{[]string{"--kill-after=", "app"}, nil, `invalid value "" for --kill-after: empty duration`, ""},
		{[]string{"--backoff", "0", "app"}, nil, `invalid value "0" for --backoff: must be more than 0`, ""},
		{[]string{"-b0ms", "app"}, nil, `invalid value "0ms" for --backoff: must be more than 0`, ""},
		{[]string{"--probe-timeout", "0s", "app"}, nil, `invalid value "0s" for --probe-timeout: must be more than 0`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_SHUTDOWN_TIMEOUT": "0"},
			`invalid value "0" for $PROXY_AWAIT_SHUTDOWN_TIMEOUT (--shutdown-timeout): must be more than 0`, ""},
		{[]string{"-r", "FOO:BAR", "app"}, nil, `invalid value "FOO:BAR" for --rewrite: unknown signal FOO`, ""},
		{[]string{"-r", "TERM", "app"}, nil, `invalid value "TERM" for --rewrite: want FROM:TO, as in TERM:USR1`, ""},
		{[]string{"-r", "TERM:", "app"}, nil, `invalid value "TERM:" for --rewrite: missing signal`, ""},
		{[]string{"-r", ":USR1", "app"}, nil, `invalid value ":USR1" for --rewrite: missing signal`, ""},
		{[]string{"-r", "TERM:99", "app"}, nil, `invalid value "TERM:99" for --rewrite: signal number 99 out of range 1-64`, ""},
		{[]string{"-r", "KILL:TERM", "app"}, nil, `invalid value "KILL:TERM" for --rewrite: SIGKILL cannot be caught, so it cannot be rewritten`, ""},
		{[]string{"-r", "CHLD:TERM", "app"}, nil, `invalid value "CHLD:TERM" for --rewrite: SIGCHLD is not forwarded, so it cannot be rewritten`, ""},
		{[]string{"-r", "0:TERM", "app"}, nil, `invalid value "0:TERM" for --rewrite: signal number 0 out of range 1-64`, ""},
		{[]string{"-r", "0x0f:0", "app"}, nil, `invalid value "0x0f:0" for --rewrite: unknown signal 0x0f`, ""},
		{[]string{"-r", "TERM:USR1,", "app"}, nil, `invalid value "TERM:USR1," for --rewrite: empty item in a comma-separated list`, ""},
		{[]string{"-r", "RTMIN:0", "app"}, nil, `invalid value "RTMIN:0" for --rewrite: signal 34 is kept by the C library and the Go runtime, so it is not forwarded and cannot be rewritten (the first that is: RTMIN+1, 35)`, ""},
		{[]string{"-r", "33:0", "app"}, nil, `invalid value "33:0" for --rewrite: signal 33 is kept by the C library and the Go runtime, so it is not forwarded and cannot be rewritten (the first that is: RTMIN+1, 35)`, ""},
		{[]string{"-r", "RTMIN+31:0", "app"}, nil, `invalid value "RTMIN+31:0" for --rewrite: RTMIN+31 is signal 65, outside the real-time signals 34 (SIGRTMIN) to 64 (SIGRTMAX)`, ""},
		{[]string{"-r", "TERM:rtmax-31", "app"}, nil, `invalid value "TERM:rtmax-31" for --rewrite: rtmax-31 is signal 33, outside the real-time signals 34 (SIGRTMIN) to 64 (SIGRTMAX)`, ""},
		{[]string{"-r", "RTMIN+x:0", "app"}, nil, `invalid value "RTMIN+x:0" for --rewrite: unknown signal RTMIN+x`, ""},
		{[]string{"--proxy", "consol", "app"}, nil, `invalid value "consol" for --proxy: unknown proxy consol`, presetHint()},
		{[]string{"--proxy", "istio,foo", "app"}, nil, `invalid value "istio,foo" for --proxy: unknown proxy foo`, presetHint()},
		{[]string{"--proxy", "istio,", "app"}, nil, `invalid value "istio," for --proxy: empty item in a comma-separated list`, ""},
		{[]string{"--proxy", "ıstio", "app"}, nil, `invalid value "ıstio" for --proxy: unknown proxy "ıstio"`, presetHint()},
		{[]string{"--proxy", "istio", "--proxy", "foo", "app"}, nil, `invalid value "foo" for --proxy: unknown proxy foo`, presetHint()},
		{[]string{"--proxy", "none,istio", "app"}, nil, `invalid value "none,istio" for --proxy: none cannot be combined with other proxies`,
			"give none alone, or only the proxies to await"},
		{[]string{"--proxy", "istio", "--proxy", "none", "app"}, nil, `invalid value "none" for --proxy: none cannot be combined with other proxies`,
			"give none alone, or only the proxies to await"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PROXY": "istio,foo"}, `invalid value "istio,foo" for $PROXY_AWAIT_PROXY (--proxy): unknown proxy foo`, presetHint()},
		{[]string{"--proxy", "linkerd,envoy", "-p", "4191", "app"}, nil, `invalid value "4191" for --port: it applies to one preset, not to linkerd,envoy`,
			"give each proxy's URLs with --ready-url and --shutdown-url instead"},
		{[]string{"--proxy", "cloudsql", "-p", "9090", "app"}, nil,
			`invalid value "9090" for --port: the cloudsql preset's ports are fixed (readiness on 9090, shutdown on 9091)`,
			"for other ports, give --ready-url and --shutdown-url instead"},
		{[]string{"--proxy", "none", "-p", "1", "app"}, nil, `invalid value "1" for --port: the none preset has no URLs, so no port`,
			"set the URLs with --ready-url and --shutdown-url instead"},
		// Istio's Envoy has an admin port, 15000; its preset's ports are fixed.
		{[]string{"--proxy", "istio", "-p", "15000", "app"}, nil,
			`invalid value "15000" for --port: the istio preset's ports are fixed (readiness on 15021, shutdown on 15020)`,
			"for other ports, give --ready-url and --shutdown-url instead"},
		{[]string{"--proxy", "dapr", "-p", "3501", "app"}, nil,
			`invalid value "3501" for --port: the dapr preset's ports are fixed (readiness and shutdown on 3500)`,
			"for other ports, give --ready-url and --shutdown-url instead"},
		{[]string{"--proxy", "istio", "app"}, map[string]string{"PROXY_AWAIT_PORT": "4191"},
			`invalid value "4191" for $PROXY_AWAIT_PORT (--port): the istio preset's ports are fixed (readiness on 15021, shutdown on 15020)`,
			"for other ports, give --ready-url and --shutdown-url instead"},
		{[]string{"-p", "70000", "app"}, nil, `invalid value "70000" for --port: not a port number (1-65535)`, ""},
		{[]string{"-p", "0", "app"}, nil, `invalid value "0" for --port: not a port number (1-65535)`, ""},
		{[]string{"-p", "http", "app"}, nil, `invalid value "http" for --port: not a decimal number`, ""},
		{[]string{"-p", "0x1", "app"}, nil, `invalid value "0x1" for --port: not a decimal number`, ""},
		{[]string{"-p", "+1", "app"}, nil, `invalid value "+1" for --port: not a decimal number`, ""},
		{[]string{"-p", "1_0", "app"}, nil, `invalid value "1_0" for --port: not a decimal number`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PORT": "-1"}, `invalid value "-1" for $PROXY_AWAIT_PORT (--port): not a decimal number`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PORT": "0x1"}, `invalid value "0x1" for $PROXY_AWAIT_PORT (--port): not a decimal number`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PORT": "0"}, `invalid value "0" for $PROXY_AWAIT_PORT (--port): not a port number (1-65535)`, ""},
		{[]string{"--ready-url", "127.0.0.1:4191/ready", "app"}, nil, `invalid value "127.0.0.1:4191..." for --ready-url: not an http or https URL`, ""},
		{[]string{"--ready-url", "http:///ready", "app"}, nil, `invalid value "http:///ready" for --ready-url: URL has no host`, ""},
		{[]string{"--ready-url", "http://127.0.0.1:99999/", "app"}, nil, `invalid value "http://127.0.0.1:99999/" for --ready-url: not a port number: 99999`, ""},
		{[]string{"--shutdown-url", "http://example.com/shutdown", "app"}, nil, `invalid value "http://example.com/shutdown" for --shutdown-url: host example.com ` + notLoopback, ""},
		{[]string{"--shutdown-url", "http://[::2]/q", "app"}, nil, `invalid value "http://[::2]/q" for --shutdown-url: host ::2 ` + notLoopback, ""},
		{[]string{"--shutdown-url", "http://127.0.0.1/a,http://10.1.1.1/b", "app"}, nil,
			`invalid value "http://127.0.0.1/a,http://10.1.1.1/b" for --shutdown-url: one URL per use of the flag: a list works only in its environment variable`,
			"repeat --shutdown-url for each URL"},
		{[]string{"--ready-url", "http://127.0.0.1/a,HTTPS://127.0.0.1/b", "app"}, nil,
			`invalid value "http://127.0.0.1/a,HTTPS://127.0.0.1/b" for --ready-url: one URL per use of the flag: a list works only in its environment variable`,
			"repeat --ready-url for each URL"},
		{[]string{"--drain-quiet", "1s", "app"}, nil, `invalid value "1s" for --drain-quiet: it needs --term-delay as its upper bound`,
			"set --term-delay to the longest the hold may last"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_DRAIN_QUIET": "1000ms"},
			`invalid value "1000ms" for $PROXY_AWAIT_DRAIN_QUIET (--drain-quiet): it needs --term-delay as its upper bound`,
			"set --term-delay to the longest the hold may last"},
		{[]string{"--log-format", "yaml", "app"}, nil, `invalid value "yaml" for --log-format: choose text or json`, ""},
		{[]string{"--timeout-fatal=maybe", "app"}, nil, `invalid value "maybe" for --timeout-fatal: must be true or false`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_TIMEOUT": "soon"}, `invalid value "soon" for $PROXY_AWAIT_TIMEOUT (--timeout): ` + duration, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_SHUTDOWN_URL": "http://127.0.0.1/a,http://10.1.1.1/b"},
			`invalid value "http://127.0.0.1/a,http://10.1.1.1/b" for $PROXY_AWAIT_SHUTDOWN_URL (--shutdown-url): host 10.1.1.1 ` + notLoopback, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_READY_URL": "http://127.0.0.1/a,,http://127.0.0.1/b"},
			`invalid value "http://127.0.0.1/a,,..." for $PROXY_AWAIT_READY_URL (--ready-url): empty item in a comma-separated list`, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_SHUTDOWN": "yes please"}, `invalid value "yes please" for $PROXY_AWAIT_SHUTDOWN (--shutdown): must be true or false`, ""},

		// Without COMMAND proxy-await only waits: nothing to shut down
		// after. The message quotes no value "true" that -S never wrote.
		{[]string{"-S"}, nil, `--shutdown without a command: there is no command to run before the shutdown`,
			"put the command after --, or drop --shutdown to only wait for the proxy"},
		{[]string{"--shutdown=true", "--"}, nil, `--shutdown without a command: there is no command to run before the shutdown`,
			"put the command after --, or drop --shutdown to only wait for the proxy"},
		{nil, map[string]string{"PROXY_AWAIT_SHUTDOWN": "1"}, `$PROXY_AWAIT_SHUTDOWN (--shutdown) without a command: there is no command to run before the shutdown`,
			"put the command after --, or drop --shutdown to only wait for the proxy"},

		// Without -S the proxy is never shut down: a Job that set only
		// --keep-proxy-on-failure would never complete, even on success.
		{[]string{"--keep-proxy-on-failure", "app"}, nil,
			`--keep-proxy-on-failure without --shutdown: without -S the proxy is never shut down, so a Job whose command succeeds never completes`,
			"add -S to shut the proxy down once the command succeeds, or drop --keep-proxy-on-failure"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_KEEP_PROXY_ON_FAILURE": "true", "PROXY_AWAIT_SHUTDOWN": "false"},
			`$PROXY_AWAIT_KEEP_PROXY_ON_FAILURE (--keep-proxy-on-failure) without --shutdown: without -S the proxy is never shut down, so a Job whose command succeeds never completes`,
			"add -S to shut the proxy down once the command succeeds, or drop --keep-proxy-on-failure"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q %v: want a usage error, got %v", tc.args, tc.env, err)
		assert.Equal(t, tc.msg, u.Error(), "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.hint, hint.Of(u), "%q %v", tc.args, tc.env)
	}
}

// A boolean flag takes its value only after "=": the word true or false
// right after it, without "--" before, would be run as the command.
func TestBooleanFlagTrap(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		flag, word string
	}{
		{[]string{"--proxy", "none", "--timeout-fatal", "false", "--", "echo", "APP-RAN"}, "timeout-fatal", "false"},
		{[]string{"-S", "false"}, "shutdown", "false"},
		{[]string{"-S", "true", "app"}, "shutdown", "true"},
		{[]string{"-gS", "false", "app"}, "shutdown", "false"},
		{[]string{"-vq", "False"}, "quiet", "False"},
		{[]string{"--proxy", "none", "-g", "TRUE"}, "process-group", "TRUE"},
		{[]string{"-t", "1s", "--verbose", "false"}, "verbose", "false"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q: want a usage error, got %v", tc.args, err)
		assert.Equal(t, fmt.Sprintf("invalid value %q for --%s: a boolean flag takes its value only after =", tc.word, tc.flag), u.Error(), "%q", tc.args)
		assert.Equal(t, fmt.Sprintf("write --%s=%s, or put -- before a command named %s", tc.flag, strings.ToLower(tc.word), tc.word),
			hint.Of(u), "%q", tc.args)
	}

	// Not a trap: "--" comes first, the value is given with "=", or the
	// flag before takes a value.
	for _, tc := range []struct {
		args    []string
		command []string
	}{
		{[]string{"--proxy", "none", "-S", "--", "false"}, []string{"false"}},
		{[]string{"--proxy", "none", "--timeout-fatal=false", "true"}, []string{"true"}},
		{[]string{"--proxy", "none", "-S=false", "false"}, []string{"false"}},
		{[]string{"--proxy", "none", "-gS=true", "true"}, []string{"true"}},
		{[]string{"--proxy", "none", "-t", "1s", "false"}, []string{"false"}},
		{[]string{"--proxy", "none", "-t1s", "true"}, []string{"true"}},
		{[]string{"--proxy", "none", "--", "-S", "false"}, []string{"-S", "false"}},
		{[]string{"--proxy", "none", "app", "-S", "false"}, []string{"app", "-S", "false"}},
	} {
		c, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.command, c.Command, "%q", tc.args)
	}
}

// A flag that needs a value and is followed by "--" or another flag has no
// value: pflag would take the "--" or the flag as its value.
func TestFlagNeedsValue(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		msg, hint string
	}{
		{[]string{"-t", "--", "true"}, "--timeout needs a value", "write --timeout=30s"},
		{[]string{"--timeout", "--", "true"}, "--timeout needs a value", "write --timeout=30s"},
		{[]string{"-vt", "--", "true"}, "--timeout needs a value", "write --timeout=30s"},
		{[]string{"-t"}, "--timeout needs a value", "write --timeout=30s"},
		{[]string{"-p", "-S", "app"}, "--port needs a value", "write --port=4191"},
		{[]string{"--ready-url", "--shutdown", "app"}, "--ready-url needs a value", "write --ready-url=http://127.0.0.1:4191/ready"},
		{[]string{"-r", "--proxy=none", "app"}, "--rewrite needs a value", "write --rewrite=TERM:USR1"},
		{[]string{"--proxy", "--", "app"}, "--proxy needs a value", "write --proxy=linkerd"},
		{[]string{"--log-format"}, "--log-format needs a value", "write --log-format=text"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q: want a usage error, got %v", tc.args, err)
		assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
		assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.args)
	}
	// A value that only starts with "-" is still a value.
	_, err := Parse("proxy-await", []string{"-t", "-5s", "app"}, testutil.Getenv(nil))
	assert.EqualError(t, err, `invalid value "-5s" for --timeout: must not be negative`)
}

// An unknown flag's hint names the closest known one.
func TestUnknownFlagSuggestion(t *testing.T) {
	for _, tc := range []struct {
		arg, msg, hint string
	}{
		{"--shutdwon", "unknown flag --shutdwon", "did you mean --shutdown?"},
		{"--timout=5s", "unknown flag --timout", "did you mean --timeout?"},
		{"--Shutdown", "unknown flag --Shutdown", "did you mean --shutdown?"},
		{"--ready", "unknown flag --ready", "did you mean --ready-url?"},
		{"--termdelay", "unknown flag --termdelay", "did you mean --term-delay?"},
		{"--proxi", "unknown flag --proxi", "did you mean --proxy?"},
		{"-shutdown", "unknown flag -shutdown", "did you mean --shutdown?"},
		{"-timeout=5s", "unknown flag -timeout", "did you mean --timeout?"},
		{"-shutdwon", "unknown flag -s in -shutdwon", "did you mean --shutdown?"},
		{"--xyzzy", "unknown flag --xyzzy", "see --help for the flags"},
		{"-x", "unknown flag -x", "see --help for the flags"},
		{"-gx", "unknown flag -x in -gx", "see --help for the flags"},
		{"--a\nb", "unknown flag \"--a\\nb\"", "see --help for the flags"},
		{"-\xff", `unknown flag "-\xff"`, "see --help for the flags"},
	} {
		_, err := Parse("proxy-await", []string{tc.arg, "app"}, testutil.Getenv(nil))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q: want a usage error, got %v", tc.arg, err)
		assert.Equal(t, tc.msg, u.Error(), "%q", tc.arg)
		assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.arg)
	}
}

// The log format a usage error is printed in: the command line's
// --log-format, wherever it is among the flags (after the mistake too),
// else the variable's. The command's own arguments do not count.
func TestUsageErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--bogus"}, nil, "text"},
		{[]string{"--log-format", "json", "--bogus"}, nil, "json"},
		{[]string{"--log-format=json", "-t", "--", "true"}, nil, "json"},
		{[]string{"--bogus", "--log-format", "json"}, nil, "json"},
		{[]string{"--bogus", "--log-format=json", "app"}, nil, "json"},
		{[]string{"-t", "--", "--log-format", "json"}, nil, "text"},
		{[]string{"--timeout-fatal", "false", "--log-format", "json"}, nil, "json"},
		{[]string{"--log-format", "json", "--bogus", "--log-format", "text"}, nil, "text"},
		{[]string{"--bogus", "--log-format", "json"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "text"}, "json"},
		{[]string{"--timeout", "5q", "app", "--log-format", "json"}, nil, "text"},
		{[]string{"--timeout", "5q", "--log-format", "json", "app"}, nil, "json"},
		{[]string{"--log-format", "xml", "app"}, nil, "text"},
		{[]string{"--log-format", "xml", "app"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}, "text"},
		{[]string{"--bogus"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}, "json"},
		{[]string{"--log-format", "text", "--bogus"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}, "text"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json", "PROXY_AWAIT_TIMEOUT": "soon"}, "json"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "yaml"}, "text"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q %v: want a usage error, got %v", tc.args, tc.env, err)
		assert.Equal(t, tc.want, u.Format, "%q %v", tc.args, tc.env)
	}
}

// Without COMMAND proxy-await only waits.
func TestNoCommandWaitsOnly(t *testing.T) {
	for _, args := range [][]string{nil, {"--"}, {"-t", "10s"}, {"--proxy", "none", "--timeout-fatal=false", "--"}} {
		c, err := Parse("proxy-await", args, testutil.Getenv(nil))
		require.NoError(t, err, "%q", args)
		assert.Empty(t, c.Command, "%q", args)
	}
}

// On the command line a URL flag takes one URL (commas are legal in URLs);
// from its variable, a comma-separated list.
func TestListFlags(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--ready-url", "http://127.0.0.1:1/ready?a=1,2",
		"--shutdown-url", "http://127.0.0.1:1/quit?x=,", "app"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:1/ready?a=1,2"}, c.ReadyURLs)
	assert.Equal(t, []string{"http://127.0.0.1:1/quit?x=,"}, c.ShutdownURLs)

	c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_READY_URL":    "http://127.0.0.1:1/a, http://127.0.0.1:2/b?a=1%2C2",
		"PROXY_AWAIT_SHUTDOWN_URL": " http://localhost:1/q ",
		"PROXY_AWAIT_REWRITE":      "TERM:USR1, HUP:0",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:1/a", "http://127.0.0.1:2/b?a=1%2C2"}, c.ReadyURLs)
	assert.Equal(t, []string{"http://localhost:1/q"}, c.ShutdownURLs)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGUSR1, syscall.SIGHUP: 0}, c.Rewrite)
}

func TestScuttleVariables(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		ready    []string
		shutdown []string
		doShut   bool
	}{
		{"nothing set", nil, nil, nil, nil, false},
		{"istio's envoy", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000"},
			[]string{"http://127.0.0.1:15000/ready"},
			[]string{"http://127.0.0.1:15000/quitquitquit", "http://127.0.0.1:15020/quitquitquit"}, true},
		{"istio's envoy with ISTIO_QUIT_API", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000/", "ISTIO_QUIT_API": "http://localhost:15020"},
			[]string{"http://127.0.0.1:15000/ready"},
			[]string{"http://127.0.0.1:15000/quitquitquit", "http://localhost:15020/quitquitquit"}, true},
		{"a remote envoy is waited for, never quit", nil, map[string]string{"ENVOY_ADMIN_API": "http://envoy:9901"},
			[]string{"http://envoy:9901/ready"}, nil, false},
		{"NEVER_KILL_ISTIO", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:9901", "NEVER_KILL_ISTIO": "true"},
			[]string{"http://127.0.0.1:9901/ready"}, []string{"http://127.0.0.1:9901/quitquitquit"}, false},
		{"our flags win", []string{"--shutdown=false", "--ready-url", "http://127.0.0.1:1/r"},
			map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:9901"},
			[]string{"http://127.0.0.1:1/r"}, []string{"http://127.0.0.1:9901/quitquitquit"}, false},
		{"GENERIC_QUIT_ONLY: the generic URLs, not Envoy's or Istio's", nil, map[string]string{
			"ENVOY_ADMIN_API": "http://127.0.0.1:15000", "ISTIO_QUIT_API": "http://127.0.0.1:15020",
			"GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/quitquitquit", "GENERIC_QUIT_ONLY": "true"},
			[]string{"http://127.0.0.1:15000/ready"}, []string{"http://127.0.0.1:9091/quitquitquit"}, true},
		{"GENERIC_QUIT_ONLY leaves a remote ISTIO_QUIT_API unread", nil, map[string]string{
			"ISTIO_QUIT_API": "http://istio:15020", "GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/q", "GENERIC_QUIT_ONLY": "true"},
			nil, []string{"http://127.0.0.1:9091/q"}, true},
		{"GENERIC_QUIT_ONLY whatever NEVER_KILL_ISTIO says", nil, map[string]string{
			"GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/quitquitquit", "GENERIC_QUIT_ONLY": "true", "NEVER_KILL_ISTIO": "true"},
			nil, []string{"http://127.0.0.1:9091/quitquitquit"}, true},
		{"GENERIC_QUIT_ONLY without GENERIC_QUIT_ENDPOINTS: nothing to POST", nil, map[string]string{
			"ENVOY_ADMIN_API": "http://127.0.0.1:15000", "GENERIC_QUIT_ONLY": "true"},
			[]string{"http://127.0.0.1:15000/ready"}, nil, false},
		{"GENERIC_QUIT_ONLY=false", nil, map[string]string{
			"ENVOY_ADMIN_API": "http://127.0.0.1:9901", "GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/q", "GENERIC_QUIT_ONLY": "false"},
			[]string{"http://127.0.0.1:9901/ready"}, []string{"http://127.0.0.1:9901/quitquitquit", "http://127.0.0.1:9091/q"}, true},
		{"ENVOY_ADMIN_API replaces a chosen preset's URLs", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:9901", "PROXY_AWAIT_PROXY": "linkerd"},
			[]string{"http://127.0.0.1:9901/ready"}, []string{"http://127.0.0.1:9901/quitquitquit"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("scuttle", append(tc.args, "app"), testutil.Getenv(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.ready, c.ReadyURLs)
			assert.Equal(t, tc.shutdown, c.ShutdownURLs)
			assert.Equal(t, tc.doShut, c.Shutdown)
		})
	}

	c, err := Parse("scuttle", nil, testutil.Getenv(map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000"}))
	require.NoError(t, err, "without a command, scuttle's variables only make it wait")
	assert.Equal(t, []string{"http://127.0.0.1:15000/ready"}, c.ReadyURLs)
	assert.False(t, c.Shutdown)

	c, err = Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{
		"WAIT_FOR_ENVOY_TIMEOUT": "30s", "QUIT_WITHOUT_ENVOY_TIMEOUT": "1m", "START_WITHOUT_ENVOY": "true",
		"NEVER_KILL_ISTIO_ON_FAILURE": "true", "SCUTTLE_LOGGING": "false"}))
	require.NoError(t, err)
	assert.Equal(t, time.Minute, c.Timeout)
	assert.True(t, c.TimeoutFatal)
	assert.True(t, c.Disabled)
	assert.False(t, c.KeepProxy, "nothing to shut down: nothing to keep")
	assert.True(t, c.Quiet)

	c, err = Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{
		"ENVOY_ADMIN_API": "http://127.0.0.1:15000", "NEVER_KILL_ISTIO_ON_FAILURE": "true"}))
	require.NoError(t, err)
	assert.True(t, c.Shutdown)
	assert.True(t, c.KeepProxy, "NEVER_KILL_ISTIO_ON_FAILURE is --keep-proxy-on-failure")

	c, err = Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{
		"ENVOY_ADMIN_API": "http://127.0.0.1:15000", "NEVER_KILL_ISTIO": "true", "NEVER_KILL_ISTIO_ON_FAILURE": "true"}))
	require.NoError(t, err, "scuttle's variables are never a usage error")
	assert.False(t, c.Shutdown)
	assert.False(t, c.KeepProxy)

	c, err = Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{
		"GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/q", "GENERIC_QUIT_ONLY": "true", "NEVER_KILL_ISTIO_ON_FAILURE": "true"}))
	require.NoError(t, err)
	assert.False(t, c.KeepProxy, "GENERIC_QUIT_ONLY POSTs whatever the command's exit")

	for v, want := range map[string]string{
		"ENVOY_ADMIN_API": `invalid value "127.0.0.1:15000" for $ENVOY_ADMIN_API: not an http or https URL`,
		"ISTIO_QUIT_API":  `invalid value "127.0.0.1:15000" for $ISTIO_QUIT_API: not an http or https URL`,
	} {
		_, err := Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{v: "127.0.0.1:15000"}))
		var u *UsageError
		require.ErrorAs(t, err, &u, v)
		assert.Equal(t, want, u.Error())
	}
}

// scuttle's timeouts as its waitForEnvoy reads them (kvij/scuttle main.go
// lines 187-193, the same in redboxllc/scuttle main.go 189-195):
// QUIT_WITHOUT_ENVOY_TIMEOUT when more than 0, else WAIT_FOR_ENVOY_TIMEOUT
// when more than 0, else none; 0 is the default of both (scuttle_config.go
// getConfig), so 0 is "not set". QUIT_REQUEST_TIMEOUT (kvij/scuttle
// scuttle_config.go line 47, default 5s) bounds the quit requests.
func TestScuttleTimeouts(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		args     []string
		timeout  time.Duration
		fatal    bool
		shutdown time.Duration
	}{
		{nil, nil, 0, true, 5 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "2s", "QUIT_WITHOUT_ENVOY_TIMEOUT": "0"}, nil, 2 * time.Second, false, 5 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "2s", "QUIT_WITHOUT_ENVOY_TIMEOUT": "0s"}, nil, 2 * time.Second, false, 5 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "0", "QUIT_WITHOUT_ENVOY_TIMEOUT": "3s"}, nil, 3 * time.Second, true, 5 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "2s", "QUIT_WITHOUT_ENVOY_TIMEOUT": "3s"}, nil, 3 * time.Second, true, 5 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "0", "QUIT_WITHOUT_ENVOY_TIMEOUT": "0"}, nil, 0, true, 5 * time.Second},
		{map[string]string{"QUIT_REQUEST_TIMEOUT": "500ms"}, nil, 0, true, 500 * time.Millisecond},
		{map[string]string{"QUIT_REQUEST_TIMEOUT": "0"}, nil, 0, true, 5 * time.Second},
		{map[string]string{"QUIT_REQUEST_TIMEOUT": "1m"}, []string{"--shutdown-timeout", "2s"}, 0, true, 2 * time.Second},
		{map[string]string{"WAIT_FOR_ENVOY_TIMEOUT": "2s"}, []string{"-t", "9s"}, 9 * time.Second, false, 5 * time.Second},
	} {
		c, err := Parse("scuttle", append(tc.args, "app"), testutil.Getenv(tc.env))
		require.NoError(t, err, "%v %v", tc.env, tc.args)
		assert.Equal(t, tc.timeout, c.Timeout, "%v %v", tc.env, tc.args)
		assert.Equal(t, tc.fatal, c.TimeoutFatal, "%v %v", tc.env, tc.args)
		assert.Equal(t, tc.shutdown, c.ShutdownTimeout, "%v %v", tc.env, tc.args)
		assert.Empty(t, c.Warnings, "%v %v", tc.env, tc.args)
	}
}

// scuttle reads a boolean as exactly "true" or "false" and ignores any
// other value, keeping the default (scuttle_config.go getBoolFromEnv, lines
// 89-109 in kvij/scuttle, 79-99 in redboxllc/scuttle); it ignores a
// duration that does not parse (getDurationFromEnv). So does proxy-await as
// scuttle, with a warning where scuttle logs "Invalid value will be
// ignored": a value scuttle read as false is false here, never a usage
// error that crash-loops the pod.
func TestScuttleValuesAsScuttleReadsThem(t *testing.T) {
	admin := map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range admin {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name, value string
		check       func(*Config) bool
		warning     string
	}{
		{"NEVER_KILL_ISTIO", "true", func(c *Config) bool { return !c.Shutdown }, ""},
		{"NEVER_KILL_ISTIO", "false", func(c *Config) bool { return c.Shutdown }, ""},
		{"NEVER_KILL_ISTIO", "TRUE", func(c *Config) bool { return c.Shutdown }, `invalid value "TRUE" for $NEVER_KILL_ISTIO`},
		{"NEVER_KILL_ISTIO", "1", func(c *Config) bool { return c.Shutdown }, `invalid value "1" for $NEVER_KILL_ISTIO`},
		{"NEVER_KILL_ISTIO", "yes", func(c *Config) bool { return c.Shutdown }, `invalid value "yes" for $NEVER_KILL_ISTIO`},
		{"START_WITHOUT_ENVOY", "True", func(c *Config) bool { return !c.Disabled }, `invalid value "True" for $START_WITHOUT_ENVOY`},
		{"NEVER_KILL_ISTIO_ON_FAILURE", "on", func(c *Config) bool { return !c.KeepProxy }, `invalid value "on" for $NEVER_KILL_ISTIO_ON_FAILURE`},
		{"SCUTTLE_LOGGING", "no", func(c *Config) bool { return !c.Quiet }, `invalid value "no" for $SCUTTLE_LOGGING`}, // its default is on
		{"SCUTTLE_LOGGING", "false", func(c *Config) bool { return c.Quiet }, ""},
		{"WAIT_FOR_ENVOY_TIMEOUT", "soon", func(c *Config) bool { return c.Timeout == 0 }, `invalid value "soon" for $WAIT_FOR_ENVOY_TIMEOUT`},
		{"QUIT_WITHOUT_ENVOY_TIMEOUT", "-1s", func(c *Config) bool { return c.Timeout == 0 && c.TimeoutFatal }, `invalid value "-1s" for $QUIT_WITHOUT_ENVOY_TIMEOUT`},
		{"QUIT_REQUEST_TIMEOUT", "5 s", func(c *Config) bool { return c.ShutdownTimeout == 5*time.Second }, `invalid value "5 s" for $QUIT_REQUEST_TIMEOUT`},
	} {
		c, err := Parse("scuttle", []string{"app"}, testutil.Getenv(with(tc.name, tc.value)))
		require.NoError(t, err, "%s=%q", tc.name, tc.value)
		assert.True(t, tc.check(c), "%s=%q", tc.name, tc.value)
		if tc.warning == "" {
			assert.Empty(t, c.Warnings, "%s=%q", tc.name, tc.value)
			continue
		}
		require.Len(t, c.Warnings, 1, "%s=%q", tc.name, tc.value)
		assert.True(t, strings.HasPrefix(c.Warnings[0].Error(), tc.warning+": "), "%s=%q: %q", tc.name, tc.value, c.Warnings[0].Error())
		assert.True(t, strings.HasSuffix(c.Warnings[0].Error(), ", so ignored, as scuttle ignores it"), "%q", c.Warnings[0].Error())
	}
}

// --help lists every preset of the proxy table with its URLs, in the
// table's order, then none; the hint for an unknown one names them all, and
// --port's help names those it applies to.
func TestHelpListsEveryPreset(t *testing.T) {
	var help strings.Builder
	PrintHelp(&help)
	var names, ported []string
	for _, px := range proxies.All {
		names = append(names, px.Preset)
		if px.AdminPort {
			ported = append(ported, fmt.Sprintf("%s (default %d)", px.Preset, px.DefaultPort()))
		}
	}
	assert.Equal(t, append(names, "none"), presetNames())
	assert.Equal(t, "choose "+strings.Join(names, ", ")+" or none; several with commas, as in istio,cloudsql", presetHint())
	assert.Equal(t, "admin `port` of the "+strings.Join(ported, " and ")+" presets", portUsage())
	for _, name := range presetNames() {
		p, ok := LookupPreset(name)
		require.True(t, ok, name)
		assert.Contains(t, help.String(), "\n  "+name+" ")
		for _, u := range []string{p.Ready, p.Shutdown} {
			assert.Contains(t, help.String(), u)
		}
	}
	_, ok := LookupPreset("linkerd2")
	assert.False(t, ok)
}

// The presets' table keeps each shutdown URL in one column, and a
// readiness URL too long for it puts its shutdown URL on the next line,
// in that column.
func TestHelpPresetTable(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(presetTable(), "\n"), "\n")
	column := -1
	wrapped := false
	for i, line := range lines {
		at := strings.Index(line, " shutdown http://")
		if at < 0 {
			continue
		}
		if column < 0 {
			column = at
		}
		assert.Equal(t, column, at, "line %d: %q", i, line)
		if strings.TrimSpace(line[:at]) == "" {
			wrapped = true
			assert.NotContains(t, lines[i-1], " shutdown ", "the readiness URL before it is alone on its line")
		}
	}
	assert.True(t, wrapped, "dapr's readiness URL is long enough to wrap: %s", presetTable())
	assert.Equal(t, "  none     no readiness wait, no shutdown", lines[len(lines)-1])
}

func TestWaitAllAndExitCodeMapUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--wait-all", "-1s", "app"}, nil, `invalid value "-1s" for --wait-all: must not be negative`},
		{[]string{"--wait-all", "soon", "app"}, nil, `invalid value "soon" for --wait-all: not a duration (use 250ms, 1m30s, 2d or seconds)`},
		{[]string{"--exit-code-map", "143", "app"}, nil, `invalid value "143" for --exit-code-map: want FROM:TO, as in 143:0`},
		{[]string{"--exit-code-map", "143:x", "app"}, nil, `invalid value "143:x" for --exit-code-map: exit code "x" is not a number from 0 to 255`},
		{[]string{"--exit-code-map", "-1:0", "app"}, nil, `invalid value "-1:0" for --exit-code-map: exit code "-1" is not a number from 0 to 255`},
		{[]string{"--exit-code-map", "256:0", "app"}, nil, `invalid value "256:0" for --exit-code-map: exit code "256" is not a number from 0 to 255`},
		{[]string{"--exit-code-map", "0x8f:0", "app"}, nil, `invalid value "0x8f:0" for --exit-code-map: exit code "0x8f" is not a number from 0 to 255`},
		{[]string{"--exit-code-map", "+1:0", "app"}, nil, `invalid value "+1:0" for --exit-code-map: exit code "+1" is not a number from 0 to 255`},
		{[]string{"--exit-code-map", "143:0,", "app"}, nil, `invalid value "143:0," for --exit-code-map: empty item in a comma-separated list`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_EXIT_CODE_MAP": "143:0,1:300"},
			`invalid value "143:0,1:300" for $PROXY_AWAIT_EXIT_CODE_MAP (--exit-code-map): exit code "300" is not a number from 0 to 255`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_WAIT_ALL": "-5s"},
			`invalid value "-5s" for $PROXY_AWAIT_WAIT_ALL (--wait-all): must not be negative`},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%v %v", tc.args, tc.env)
		assert.Equal(t, tc.want, u.Error(), "%v %v", tc.args, tc.env)
	}
}

func TestExitCodeMapConfig(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--exit-code-map", "143:0,3:4", "--exit-code-map", "3:4", "app"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, map[int]int{143: 0, 3: 4}, c.ExitCodes, "the same rule twice is one rule")
	c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_WAIT_ALL": "2s"}))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, c.WaitAll)
}

// Every value from the environment is read without the white space around
// it: a YAML block scalar (`value: |`) leaves a newline at the end, and
// " true" is as easy to write as "true".
func TestEnvironmentValuesAreTrimmed(t *testing.T) {
	c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_PROXY":         " envoy\n",
		"PROXY_AWAIT_PORT":          "\t9901 ",
		"PROXY_AWAIT_SHUTDOWN":      " true",
		"PROXY_AWAIT_TIMEOUT_FATAL": "false\n",
		"PROXY_AWAIT_PROCESS_GROUP": "1\r\n",
		"PROXY_AWAIT_LOG_FORMAT":    "json\n",
		"PROXY_AWAIT_TERM_DELAY":    " 20s\n",
		"PROXY_AWAIT_EXIT_CODE_MAP": "143:0\n",
		"LINKERD_AWAIT_VERBOSE":     " off\n",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"envoy"}, c.Proxies)
	assert.Equal(t, []string{"http://127.0.0.1:9901/ready"}, c.ReadyURLs)
	assert.True(t, c.Shutdown)
	assert.False(t, c.TimeoutFatal)
	assert.True(t, c.ProcessGroup)
	assert.Equal(t, "json", c.LogFormat)
	assert.Equal(t, 20*time.Second, c.TermDelay)
	assert.Equal(t, map[int]int{143: 0}, c.ExitCodes)
	assert.False(t, c.Verbose)

	// White space alone is as good as unset.
	c, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_PORT": " ", "PROXY_AWAIT_DISABLED": "\n", "PROXY_AWAIT_LOG_FORMAT": " \t"}))
	require.NoError(t, err)
	assert.Equal(t, 4191, c.Port)
	assert.False(t, c.Disabled)
	assert.Equal(t, "text", c.LogFormat)

	// A usage error from a variable is printed in JSON when its format
	// variable says json, newline or not.
	_, err = Parse("proxy-await", []string{"--bogus"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json\n"}))
	var u *UsageError
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "json", u.Format)

	// The reason quotes the value as read.
	_, err = Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_PORT": " 0x1\n"}))
	assert.EqualError(t, err, `invalid value "0x1" for $PROXY_AWAIT_PORT (--port): not a decimal number`)
}

// A PROXY_AWAIT_ variable that proxy-await does not read is a warning that
// names the closest one it reads; the run goes on. Variables without the
// prefix are none of proxy-await's business.
func TestUnknownVariables(t *testing.T) {
	c, err := ParseEnviron("proxy-await", []string{"app"}, []string{
		"PROXY_AWAIT_TERMDELAY=20s", "PROXY_AWAIT_DISABLE=1", "PROXY_AWAIT_PROXY=istio", "PROXY_AWAIT_XYZZY=",
		"PROXY_AWAIT_TIMEOUT=1s", "PROXY_AWAIT_TIMEOUT=2s", "HOME=/root", "LINKERD_AWAIT_DISABLED=", "proxy_await_term_delay=1s",
	})
	require.NoError(t, err)
	var warnings []string
	for _, w := range c.Warnings {
		warnings = append(warnings, hint.Text(w.Error(), w.Hint))
	}
	assert.Equal(t, []string{
		"unknown variable $PROXY_AWAIT_DISABLE: ignored (hint: did you mean $PROXY_AWAIT_DISABLED?)",
		"unknown variable $PROXY_AWAIT_TERMDELAY: ignored (hint: did you mean $PROXY_AWAIT_TERM_DELAY?)",
		"unknown variable $PROXY_AWAIT_XYZZY: ignored (hint: see --help for the variables proxy-await reads)",
	}, warnings)
	assert.Zero(t, c.TermDelay, "a misspelt variable sets nothing")
	assert.False(t, c.Disabled)
	assert.Equal(t, []string{"istio"}, c.Proxies)
	assert.Equal(t, time.Second, c.Timeout, "the first of two definitions wins, as with os.Getenv")

	c, err = ParseEnviron("proxy-await", []string{"app"}, []string{"PROXY_AWAIT_DISABLED=1", "PROXY_AWAIT_TERM_DELAY=1s",
		"PROXY_AWAIT_EXIT_CODE_MAP=143:0", "PROXY_AWAIT_LOG_FORMAT=json"})
	require.NoError(t, err)
	assert.Empty(t, c.Warnings, "variables that proxy-await reads")

	// A usage error comes alone.
	_, err = ParseEnviron("proxy-await", []string{"--bogus"}, []string{"PROXY_AWAIT_TERMDELAY=20s"})
	assert.EqualError(t, err, "unknown flag --bogus")
}

// A code mapped to two different codes is a usage error that names both
// rules: which one wins would be a guess, and the last one winning without a
// word hides the other.
func TestExitCodeMappedTwice(t *testing.T) {
	const keepOne = "keep one rule for each code"
	for _, tc := range []struct {
		args []string
		env  map[string]string
		msg  string
	}{
		{[]string{"--exit-code-map", "1:2,1:3", "app"}, nil,
			`invalid value "1:2,1:3" for --exit-code-map: exit code 1 is mapped twice, by 1:2 and by 1:3`},
		{[]string{"--exit-code-map", "1:2", "--exit-code-map=143:0,001:3", "app"}, nil,
			`invalid value "143:0,001:3" for --exit-code-map: exit code 1 is mapped twice, by 1:2 and by 001:3`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_EXIT_CODE_MAP": "143:0, 143:1"},
			`invalid value "143:0, 143:1" for $PROXY_AWAIT_EXIT_CODE_MAP (--exit-code-map): exit code 143 is mapped twice, by 143:0 and by 143:1`},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%v %v", tc.args, tc.env)
		assert.Equal(t, tc.msg, u.Error())
		assert.Equal(t, keepOne, hint.Of(u))
	}
	// The command line replaces the variable's list: no clash between them.
	c, err := Parse("proxy-await", []string{"--exit-code-map", "1:3", "app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_EXIT_CODE_MAP": "1:2"}))
	require.NoError(t, err)
	assert.Equal(t, map[int]int{1: 3}, c.ExitCodes)
}

// --help shows a boolean flag as it is used, "--shutdown", not pflag's
// "--shutdown[=true|false]", which reads as if the value could follow after
// a space (it cannot: see TestBooleanFlagTrap).
func TestHelpShowsBooleanFlagsPlain(t *testing.T) {
	var help strings.Builder
	PrintHelp(&help)
	assert.NotContains(t, help.String(), "[=")
	n := 0
	flagSet(&Config{}).VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() != "bool" || f.Hidden {
			return
		}
		n++
		line := `(?m)^      --` + f.Name + ` {2,}\S`
		if f.Shorthand != "" {
			line = `(?m)^  -` + f.Shorthand + `, --` + f.Name + ` {2,}\S`
		}
		assert.Regexp(t, line, help.String(), "--%s", f.Name)
	})
	assert.Equal(t, 8, n, "the boolean flags")
}

// Preset names are read in any case: --proxy Istio is istio. Only ASCII
// letters fold, so that no other character becomes a preset's letter.
func TestPresetNamesIgnoreCase(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--proxy", "Istio"}, nil, []string{"istio"}},
		{[]string{"--proxy", "LINKERD", "-p", "4999"}, nil, []string{"linkerd"}},
		{[]string{"--proxy", "Istio,CloudSQL,istio"}, nil, []string{"istio", "cloudsql"}},
		{[]string{"--proxy", "None"}, nil, []string{"none"}},
		{nil, map[string]string{"PROXY_AWAIT_PROXY": "Dapr"}, []string{"dapr"}},
	} {
		c, err := Parse("proxy-await", append(tc.args, "app"), testutil.Getenv(tc.env))
		require.NoError(t, err, "%v %v", tc.args, tc.env)
		assert.Equal(t, tc.want, c.Proxies, "%v %v", tc.args, tc.env)
	}
	// The Kelvin sign lower-cases to k in Unicode: not a preset's letter.
	_, err := Parse("proxy-await", []string{"--proxy", "lin\u212Aerd", "app"}, testutil.Getenv(nil))
	assert.EqualError(t, err, "invalid value \"lin\u212Aerd\" for --proxy: unknown proxy \"lin\u212Aerd\"")
}

// The line that starts the wait says where its URLs came from, and that
// the preset is the default when no --proxy was given: a pod in an Istio
// mesh waiting on Linkerd's port says so on its first line.
func TestReadySource(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"proxy-await", nil, nil, "--proxy linkerd (the default)"},
		{"proxy-await", []string{"-p", "4999"}, nil, "--proxy linkerd (the default)"},
		{"proxy-await", []string{"--proxy", "linkerd"}, nil, "--proxy linkerd"},
		{"proxy-await", []string{"--proxy", "Istio,cloudsql"}, nil, "--proxy istio,cloudsql"},
		{"proxy-await", nil, map[string]string{"PROXY_AWAIT_PROXY": "istio"}, "--proxy istio (from $PROXY_AWAIT_PROXY)"},
		{"proxy-await", []string{"--ready-url", "http://127.0.0.1:1/r"}, nil, "--ready-url"},
		{"proxy-await", nil, map[string]string{"PROXY_AWAIT_READY_URL": "http://127.0.0.1:1/r"}, "$PROXY_AWAIT_READY_URL"},
		{"scuttle", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000"}, "$ENVOY_ADMIN_API"},
	} {
		c, err := Parse(tc.name, append(tc.args, "app"), testutil.Getenv(tc.env))
		require.NoError(t, err, "%v %v", tc.args, tc.env)
		assert.Equal(t, tc.want, c.ReadySource(), "%s %v %v", tc.name, tc.args, tc.env)
	}
}

// A mistake in the flags' shape is the error, before a value that a flag
// refuses, wherever each is: until the shape is right, where COMMAND
// starts is unknown, and so is what the refused value was meant for.
func TestShapeBeforeValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--timeout", "5q", "--bogus", "app"}, "unknown flag --bogus"},
		{[]string{"--timeout", "5q", "--shutdown", "false"}, `invalid value "false" for --shutdown: a boolean flag takes its value only after =`},
		{[]string{"--timeout", "5q", "-timeout=1s", "app"}, "unknown flag -timeout"},
		{[]string{"--timeout", "5q", "--backoff", "--", "app"}, "--backoff needs a value"},
		{[]string{"--timeout", "5q", "--backoff", "1x", "app"}, `invalid value "5q" for --timeout: not a duration (use 250ms, 1m30s, 2d or seconds)`},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%q", tc.args)
		assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
	}
}

// A usage error names the argument at fault, never a word of COMMAND that
// happens to end as the bad value does: an empty value (an unset template
// variable) is not a long flag written with one dash.
func TestUsageErrorNamesItsArgument(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--timeout=", "java", "-Dhost=localhost"}, `invalid value "" for --timeout: empty duration`},
		{[]string{"--backoff=", "app", "-grab=b"}, `invalid value "" for --backoff: empty duration`},
		{[]string{"--quiet=", "true", "-timeout=5q"}, `invalid value "" for --quiet: must be true or false`},
		{[]string{"--quiet=", "-kill-after=-1s", "-wait-all=5q", "--", "sh"}, "unknown flag -kill-after"},
		{[]string{"-gtimeout=5s", "app"}, "unknown flag -gtimeout"},
		{[]string{"-verbose", "app"}, "unknown flag -verbose"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%q", tc.args)
		assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
	}
}
