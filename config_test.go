package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

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
	c, err := parseConfig("proxy-await", []string{"app"}, env(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"linkerd"}, c.proxies)
	assert.Equal(t, 4191, c.port)
	assert.Equal(t, []string{"http://127.0.0.1:4191/ready"}, c.readyURLs)
	assert.Equal(t, []string{"http://127.0.0.1:4191/shutdown"}, c.shutdownURLs)
	assert.Equal(t, 20*time.Millisecond, c.backoff)
	assert.Equal(t, time.Second, c.probeTimeout)
	assert.Equal(t, time.Duration(0), c.timeout)
	assert.True(t, c.timeoutFatal)
	assert.False(t, c.shutdown)
	assert.Equal(t, 5*time.Second, c.shutdownTimeout)
	assert.Empty(t, c.rewrite)
	assert.False(t, c.processGroup)
	assert.Zero(t, c.termDelay)
	assert.Zero(t, c.drainQuiet)
	assert.Zero(t, c.killAfter)
	assert.Equal(t, "text", c.logFormat)
	assert.Equal(t, []string{"app"}, c.command)
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
		{[]string{"--ready-url", "http://127.0.0.1:1/a", "--ready-url", "http://[::1]:2/b,https://localhost/c"},
			[]string{"http://127.0.0.1:1/a", "http://[::1]:2/b", "https://localhost/c"}, []string{"http://127.0.0.1:4191/shutdown"}},
		{[]string{"--proxy", "istio", "--shutdown-url", "http://127.0.0.2:9/quit"},
			[]string{"http://127.0.0.1:15021/healthz/ready"}, []string{"http://127.0.0.2:9/quit"}},
		{[]string{"--proxy", "cloudsql"}, []string{"http://127.0.0.1:9090/startup"}, []string{"http://127.0.0.1:9091/quitquitquit"}},
		{[]string{"--proxy", "dapr"}, []string{"http://127.0.0.1:3500/v1.0/healthz/outbound"}, []string{"http://127.0.0.1:3500/v1.0/shutdown"}},
		{[]string{"--proxy", "consul"}, []string{"http://127.0.0.1:19000/ready"}, []string{"http://127.0.0.1:20300/graceful_shutdown"}},
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
			[]string{"http://127.0.0.1:1/r"}, []string{"http://127.0.0.1:15000/quitquitquit", "http://127.0.0.1:20300/graceful_shutdown"}},
		{[]string{"--proxy", "none,none"}, nil, nil},
	} {
		c, err := parseConfig("proxy-await", append(tc.args, "app"), env(nil))
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.ready, c.readyURLs, "%v", tc.args)
		assert.Equal(t, tc.shutdown, c.shutdownURLs, "%v", tc.args)
	}
}

func TestProxyListFromTheEnvironment(t *testing.T) {
	c, err := parseConfig("proxy-await", []string{"app"}, env(map[string]string{"PROXY_AWAIT_PROXY": "istio,cloudsql"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"istio", "cloudsql"}, c.proxies)
	assert.Equal(t, []string{"http://127.0.0.1:15021/healthz/ready", "http://127.0.0.1:9090/startup"}, c.readyURLs)
	assert.Equal(t, []string{"http://127.0.0.1:15020/quitquitquit", "http://127.0.0.1:9091/quitquitquit"}, c.shutdownURLs)

	c, err = parseConfig("proxy-await", []string{"--proxy", "dapr", "app"}, env(map[string]string{"PROXY_AWAIT_PROXY": "istio,cloudsql"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"dapr"}, c.proxies, "the command line replaces the variable's list")
}

// An unknown proxy's hint lists every preset.
func TestUnknownProxyHint(t *testing.T) {
	for _, e := range []map[string]string{nil, {"PROXY_AWAIT_PROXY": "istio,foo"}} {
		args := []string{"app"}
		if e == nil {
			args = []string{"--proxy", "istio,foo", "app"}
		}
		_, err := parseConfig("proxy-await", args, env(e))
		var u *usageError
		require.ErrorAs(t, err, &u)
		for _, name := range presetNames {
			assert.Contains(t, u.hint, name)
		}
	}
}

func TestRewriteTable(t *testing.T) {
	c, err := parseConfig("proxy-await", []string{"-r", "TERM:USR1", "--rewrite", "sigint:0,1:15", "-r", "WINCH:SIGHUP", "app"}, env(nil))
	require.NoError(t, err)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{
		syscall.SIGTERM:  syscall.SIGUSR1,
		syscall.SIGINT:   0,
		syscall.SIGHUP:   syscall.SIGTERM,
		syscall.SIGWINCH: syscall.SIGHUP,
	}, c.rewrite)
}

func TestEnvironmentAndPrecedence(t *testing.T) {
	vars := map[string]string{
		"PROXY_AWAIT_PROXY":            "envoy",
		"PROXY_AWAIT_PORT":             "9901",
		"PROXY_AWAIT_BACKOFF":          "100ms",
		"PROXY_AWAIT_PROBE_TIMEOUT":    "2",
		"PROXY_AWAIT_TIMEOUT":          "1m",
		"PROXY_AWAIT_TIMEOUT_FATAL":    "false",
		"PROXY_AWAIT_SHUTDOWN":         "true",
		"PROXY_AWAIT_SHUTDOWN_TIMEOUT": "3s",
		"PROXY_AWAIT_REWRITE":          "TERM:USR1,HUP:0",
		"PROXY_AWAIT_PROCESS_GROUP":    "1",
		"PROXY_AWAIT_TERM_DELAY":       "20s",
		"PROXY_AWAIT_KILL_AFTER":       "1d",
		"PROXY_AWAIT_LOG_FORMAT":       "json",
		"PROXY_AWAIT_QUIET":            "true",
	}
	c, err := parseConfig("proxy-await", []string{"app"}, env(vars))
	require.NoError(t, err)
	assert.Equal(t, []string{"envoy"}, c.proxies)
	assert.Equal(t, []string{"http://127.0.0.1:9901/ready"}, c.readyURLs)
	assert.Equal(t, 100*time.Millisecond, c.backoff)
	assert.Equal(t, 2*time.Second, c.probeTimeout)
	assert.Equal(t, time.Minute, c.timeout)
	assert.False(t, c.timeoutFatal)
	assert.True(t, c.shutdown)
	assert.Equal(t, 3*time.Second, c.shutdownTimeout)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGUSR1, syscall.SIGHUP: 0}, c.rewrite)
	assert.True(t, c.processGroup)
	assert.Equal(t, 20*time.Second, c.termDelay)
	assert.Equal(t, 24*time.Hour, c.killAfter)
	assert.Equal(t, "json", c.logFormat)
	assert.True(t, c.quiet)

	// The command line wins, flag by flag.
	c, err = parseConfig("proxy-await", []string{"--proxy", "linkerd", "-p", "4192", "-b", "5ms", "--timeout-fatal", "-S=false",
		"-r", "TERM:INT", "--log-format", "text", "app"}, env(vars))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:4192/ready"}, c.readyURLs)
	assert.Equal(t, 5*time.Millisecond, c.backoff)
	assert.True(t, c.timeoutFatal)
	assert.False(t, c.shutdown)
	assert.Equal(t, map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGINT}, c.rewrite,
		"a flag replaces the variable's list, it does not add to it")
	assert.Equal(t, "text", c.logFormat)
	assert.Equal(t, time.Minute, c.timeout, "what the command line does not say still comes from the environment")

	// The list variables take comma-separated lists.
	c, err = parseConfig("proxy-await", []string{"app"}, env(map[string]string{
		"PROXY_AWAIT_READY_URL":    "http://127.0.0.1:1/a,http://127.0.0.1:2/b",
		"PROXY_AWAIT_SHUTDOWN_URL": "http://localhost:1/q",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:1/a", "http://127.0.0.1:2/b"}, c.readyURLs)
	assert.Equal(t, []string{"http://localhost:1/q"}, c.shutdownURLs)

	// An empty variable is as good as unset.
	c, err = parseConfig("proxy-await", []string{"app"}, env(map[string]string{"PROXY_AWAIT_TIMEOUT": ""}))
	require.NoError(t, err)
	assert.Zero(t, c.timeout)
}

func TestLinkerdAwaitVariables(t *testing.T) {
	for _, v := range []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"} {
		c, err := parseConfig("proxy-await", []string{"app"}, env(map[string]string{v: "true"}))
		require.NoError(t, err)
		assert.True(t, c.disabled, v)
		c, err = parseConfig("proxy-await", []string{"app"}, env(map[string]string{v: ""}))
		require.NoError(t, err)
		assert.False(t, c.disabled, v+" empty")
	}
	c, err := parseConfig("proxy-await", []string{"app"}, env(map[string]string{"LINKERD_AWAIT_VERBOSE": "1"}))
	require.NoError(t, err)
	assert.True(t, c.verbose)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{}, nil, "no command given"},
		{[]string{"--"}, nil, "no command given"},
		{[]string{"--", ""}, nil, "the command is an empty string"},
		{[]string{"--bogus", "app"}, nil, "unknown flag: --bogus"},
		{[]string{"-x", "app"}, nil, "unknown shorthand flag: 'x' in -x"},
		{[]string{"--timeout"}, nil, "flag --timeout needs a value"},
		{[]string{"--timeout", "5q", "app"}, nil, `invalid value "5q" for --timeout: not a duration (use 250ms, 1m30s, 2d or seconds)`},
		{[]string{"--term-delay", "-3s", "app"}, nil, `invalid value "-3s" for --term-delay: must not be negative`},
		{[]string{"--kill-after=", "app"}, nil, `invalid value "" for --kill-after: empty duration`},
		{[]string{"--backoff", "0", "app"}, nil, `invalid value "0s" for --backoff: must be more than 0`},
		{[]string{"--probe-timeout", "0s", "app"}, nil, `invalid value "0s" for --probe-timeout: must be more than 0`},
		{[]string{"--shutdown-timeout", "0", "app"}, nil, `invalid value "0s" for --shutdown-timeout: must be more than 0`},
		{[]string{"-r", "FOO:BAR", "app"}, nil, `invalid value "FOO:BAR" for --rewrite: unknown signal FOO`},
		{[]string{"-r", "TERM", "app"}, nil, `invalid value "TERM" for --rewrite: want FROM:TO, as in TERM:USR1`},
		{[]string{"-r", "TERM:", "app"}, nil, `invalid value "TERM:" for --rewrite: missing signal`},
		{[]string{"-r", ":USR1", "app"}, nil, `invalid value ":USR1" for --rewrite: missing signal`},
		{[]string{"-r", "TERM:99", "app"}, nil, `invalid value "TERM:99" for --rewrite: signal number 99 out of range 1-64`},
		{[]string{"-r", "KILL:TERM", "app"}, nil, `invalid value "KILL:TERM" for --rewrite: SIGKILL cannot be caught, so it cannot be rewritten`},
		{[]string{"-r", "CHLD:TERM", "app"}, nil, `invalid value "CHLD:TERM" for --rewrite: SIGCHLD is not forwarded, so it cannot be rewritten`},
		{[]string{"-r", "0:TERM", "app"}, nil, `invalid value "0:TERM" for --rewrite: signal number 0 out of range 1-64`},
		{[]string{"--proxy", "consol", "app"}, nil, `invalid value "consol" for --proxy: unknown proxy consol`},
		{[]string{"--proxy", "istio,foo", "app"}, nil, `invalid value "istio,foo" for --proxy: unknown proxy foo`},
		{[]string{"--proxy", "istio,", "app"}, nil, `invalid value "istio," for --proxy: empty proxy name`},
		{[]string{"--proxy", "Istio", "app"}, nil, `invalid value "Istio" for --proxy: unknown proxy Istio`},
		{[]string{"--proxy", "istio", "--proxy", "foo", "app"}, nil, `invalid value "foo" for --proxy: unknown proxy foo`},
		{[]string{"--proxy", "none,istio", "app"}, nil, `invalid value "none,istio" for --proxy: none cannot be combined with other proxies`},
		{[]string{"--proxy", "istio", "--proxy", "none", "app"}, nil, `invalid value "none" for --proxy: none cannot be combined with other proxies`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PROXY": "istio,foo"}, `invalid value "istio,foo" for $PROXY_AWAIT_PROXY (--proxy): unknown proxy foo`},
		{[]string{"--proxy", "linkerd,envoy", "-p", "4191", "app"}, nil, `invalid value "4191" for --port: it applies to one preset, not to linkerd,envoy`},
		{[]string{"--proxy", "cloudsql", "-p", "9090", "app"}, nil, `invalid value "9090" for --port: the cloudsql preset has no admin port`},
		{[]string{"--proxy", "none", "-p", "1", "app"}, nil, `invalid value "1" for --port: the none preset has no admin port`},
		{[]string{"-p", "70000", "app"}, nil, `invalid value "70000" for --port: not a port number (1-65535)`},
		{[]string{"-p", "0", "app"}, nil, `invalid value "0" for --port: not a port number (1-65535)`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PORT": "-1"}, `invalid value "-1" for --port: not a port number (1-65535)`},
		{[]string{"-p", "http", "app"}, nil, `invalid value "http" for --port: must be an integer`},
		{[]string{"--ready-url", "127.0.0.1:4191/ready", "app"}, nil, `invalid value "127.0.0.1:4191/ready" for --ready-url: not an http or https URL`},
		{[]string{"--ready-url", "http:///ready", "app"}, nil, `invalid value "http:///ready" for --ready-url: URL has no host`},
		{[]string{"--ready-url", "http://127.0.0.1:99999/", "app"}, nil, `invalid value "http://127.0.0.1:99999/" for --ready-url: not a port number: 99999`},
		{[]string{"--shutdown-url", "http://example.com/shutdown", "app"}, nil, `invalid value "http://example.com/shutdown" for --shutdown-url: host example.com is not loopback: a proxy accepts shutdown only from inside the pod`},
		{[]string{"--shutdown-url", "http://[::2]/q", "app"}, nil, `invalid value "http://[::2]/q" for --shutdown-url: host ::2 is not loopback: a proxy accepts shutdown only from inside the pod`},
		{[]string{"--drain-quiet", "1s", "app"}, nil, `invalid value "1s" for --drain-quiet: it needs --term-delay as its upper bound`},
		{[]string{"--log-format", "yaml", "app"}, nil, `invalid value "yaml" for --log-format: choose text or json`},
		{[]string{"--timeout-fatal=maybe", "app"}, nil, `invalid value "maybe" for --timeout-fatal: must be true or false`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_TIMEOUT": "soon"}, `invalid value "soon" for $PROXY_AWAIT_TIMEOUT (--timeout): not a duration (use 250ms, 1m30s, 2d or seconds)`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_SHUTDOWN_URL": "http://127.0.0.1/a,http://10.1.1.1/b"}, `invalid value "http://127.0.0.1/a,http://10.1.1.1/b" for $PROXY_AWAIT_SHUTDOWN_URL (--shutdown-url): host 10.1.1.1 is not loopback: a proxy accepts shutdown only from inside the pod`},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_SHUTDOWN": "yes please"}, `invalid value "yes please" for $PROXY_AWAIT_SHUTDOWN (--shutdown): must be true or false`},
	} {
		_, err := parseConfig("proxy-await", tc.args, env(tc.env))
		var u *usageError
		require.True(t, errors.As(err, &u), "%v: want a usage error, got %v", tc.args, err)
		assert.Equal(t, tc.want, u.msg, "%v %v", tc.args, tc.env)
	}
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
		{"ENVOY_ADMIN_API replaces a chosen preset's URLs", nil, map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:9901", "PROXY_AWAIT_PROXY": "linkerd"},
			[]string{"http://127.0.0.1:9901/ready"}, []string{"http://127.0.0.1:9901/quitquitquit"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig("scuttle", append(tc.args, "app"), env(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.ready, c.readyURLs)
			assert.Equal(t, tc.shutdown, c.shutdownURLs)
			assert.Equal(t, tc.doShut, c.shutdown)
		})
	}

	c, err := parseConfig("scuttle", []string{"app"}, env(map[string]string{
		"WAIT_FOR_ENVOY_TIMEOUT": "30s", "QUIT_WITHOUT_ENVOY_TIMEOUT": "1m", "START_WITHOUT_ENVOY": "true",
		"NEVER_KILL_ISTIO_ON_FAILURE": "true", "SCUTTLE_LOGGING": "false"}))
	require.NoError(t, err)
	assert.Equal(t, time.Minute, c.timeout)
	assert.True(t, c.timeoutFatal)
	assert.True(t, c.disabled)
	assert.True(t, c.shutdownOnlyOK)
	assert.True(t, c.quiet)

	for v, want := range map[string]string{
		"ENVOY_ADMIN_API":            `invalid value "127.0.0.1:15000" for $ENVOY_ADMIN_API: not an http or https URL`,
		"ISTIO_QUIT_API":             `invalid value "127.0.0.1:15000" for $ISTIO_QUIT_API: not an http or https URL`,
		"WAIT_FOR_ENVOY_TIMEOUT":     `invalid value "127.0.0.1:15000" for $WAIT_FOR_ENVOY_TIMEOUT: not a duration (use 250ms, 1m30s, 2d or seconds)`,
		"NEVER_KILL_ISTIO":           `invalid value "127.0.0.1:15000" for $NEVER_KILL_ISTIO: must be true or false`,
		"QUIT_WITHOUT_ENVOY_TIMEOUT": `invalid value "127.0.0.1:15000" for $QUIT_WITHOUT_ENVOY_TIMEOUT: not a duration (use 250ms, 1m30s, 2d or seconds)`,
	} {
		_, err := parseConfig("scuttle", []string{"app"}, env(map[string]string{v: "127.0.0.1:15000"}))
		var u *usageError
		require.ErrorAs(t, err, &u, v)
		assert.Equal(t, want, u.msg)
	}
}

// --help lists every preset with its URLs.
func TestHelpListsEveryPreset(t *testing.T) {
	var help strings.Builder
	printHelp(&help)
	require.Len(t, presetNames, len(presets))
	for _, name := range presetNames {
		p, ok := presets[name]
		require.True(t, ok, name)
		assert.Contains(t, help.String(), "\n  "+name+" ")
		for _, u := range []string{p.ready, p.shutdown} {
			assert.Contains(t, help.String(), presetURL(u, p.port))
		}
	}
}
