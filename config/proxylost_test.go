package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

func TestProxyLost(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{[]string{"app"}, nil, 0},
		{[]string{"--proxy-lost", "10s", "app"}, nil, 10 * time.Second},
		{[]string{"--proxy-lost=2", "app"}, nil, 2 * time.Second},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PROXY_LOST": " 1m\n"}, time.Minute},
		{[]string{"--proxy-lost", "5s", "app"}, map[string]string{"PROXY_AWAIT_PROXY_LOST": "1m"}, 5 * time.Second},
		// 0 is off, and needs nothing.
		{[]string{"--proxy", "none", "--proxy-lost", "0"}, nil, 0},
		{[]string{"--proxy", "istio,cloudsql", "--proxy-lost", "3s", "app"}, nil, 3 * time.Second},
		{[]string{"--proxy", "none", "--ready-url", "http://127.0.0.1:9901/ready", "--proxy-lost", "3s", "app"}, nil, 3 * time.Second},
		// A proxy that is not ready in time may still turn up: the watch
		// waits for it.
		{[]string{"--timeout", "1m", "--timeout-fatal=false", "--proxy-lost", "3s", "app"}, nil, 3 * time.Second},
	} {
		c, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		require.NoError(t, err, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.want, c.ProxyLost, "%q %v", tc.args, tc.env)
	}
}

// --proxy-lost that could never fire is refused: a Job that relies on it
// would hang as it did without it.
func TestProxyLostUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		env       map[string]string
		msg, hint string
	}{
		{"no command", []string{"--proxy-lost", "10s"}, nil,
			`invalid value "10s" for --proxy-lost: it stops a command whose proxy is lost, and there is none`,
			"put the command after --, or drop --proxy-lost to only wait for the proxy"},
		{"no readiness URL", []string{"--proxy", "none", "--proxy-lost", "10s", "app"}, nil,
			`invalid value "10s" for --proxy-lost: there is no readiness URL to watch (--proxy none)`,
			"name the proxy with --proxy or give its --ready-url, or drop --proxy-lost"},
		{"from the environment", []string{"--proxy", "none", "app"}, map[string]string{"PROXY_AWAIT_PROXY_LOST": "10s"},
			`invalid value "10s" for $PROXY_AWAIT_PROXY_LOST (--proxy-lost): there is no readiness URL to watch (--proxy none)`,
			"name the proxy with --proxy or give its --ready-url, or drop --proxy-lost"},
		{"negative", []string{"--proxy-lost", "-1s", "app"}, nil,
			`invalid value "-1s" for --proxy-lost: must not be negative`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
			var u *UsageError
			require.ErrorAs(t, err, &u)
			assert.Equal(t, tc.msg, u.Error())
			assert.Equal(t, tc.hint, hint.Of(u))
		})
	}
}

// A disable variable says the pod runs without its proxy: --proxy-lost has
// nothing to watch, and the pod must still start, so it is ignored with a
// warning that names the variable (scuttle's START_WITHOUT_ENVOY as
// linkerd-await's LINKERD_AWAIT_DISABLED).
func TestProxyLostIgnoredWhenTheWaitIsDisabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv string
		env  map[string]string
		msg  string
	}{
		{"linkerd-await's variable", "proxy-await", map[string]string{"LINKERD_AWAIT_DISABLED": "yes"},
			"--proxy-lost 10s is ignored: $LINKERD_AWAIT_DISABLED skips the readiness wait, so there is no proxy to watch"},
		{"scuttle's", "scuttle", map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000", "START_WITHOUT_ENVOY": "true"},
			"--proxy-lost 10s is ignored: $START_WITHOUT_ENVOY skips the readiness wait, so there is no proxy to watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.argv, []string{"--proxy-lost", "10s", "app"}, testutil.Getenv(tc.env))
			require.NoError(t, err)
			assert.Zero(t, c.ProxyLost, "nothing is watched")
			var msgs []string
			for _, w := range c.Warnings {
				msgs = append(msgs, w.Error())
			}
			assert.Equal(t, []string{tc.msg}, msgs)
		})
	}
}
