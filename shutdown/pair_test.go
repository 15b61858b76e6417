package shutdown

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

func pair(c *config.Config) []Target {
	return Pair(c.ProxyURLs(c.ReadyURLs), c.ProxyURLs(c.ShutdownURLs))
}

// Each shutdown URL is paired with its proxy's preset and readiness URLs:
// the shutdown tells a proxy that is gone from a missing endpoint by them,
// so another proxy's readiness URL must never be paired with it. A
// preset's shutdown URL gets that preset's readiness URL; URLs given by
// hand pair by position when as many of each are given; otherwise only a
// readiness URL on the same host and port pairs, and a shutdown URL may get
// none.
func TestPair(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []Target
	}{
		{"the default preset", nil, nil,
			[]Target{{"http://127.0.0.1:4191/shutdown", "linkerd", []string{"http://127.0.0.1:4191/ready"}}}},
		{"two presets, each its own", []string{"--proxy", "istio,cloudsql"}, nil, []Target{
			{"http://127.0.0.1:15020/quitquitquit", "istio", []string{"http://127.0.0.1:15021/healthz/ready"}},
			{"http://127.0.0.1:9091/quitquitquit", "cloudsql", []string{"http://127.0.0.1:9090/startup"}},
		}},
		{"URLs by hand for one preset", []string{"--proxy", "consul", "--ready-url", "http://127.0.0.1:1/ready",
			"--shutdown-url", "http://127.0.0.1:2/graceful_shutdown"}, nil,
			[]Target{{"http://127.0.0.1:2/graceful_shutdown", "consul", []string{"http://127.0.0.1:1/ready"}}}},
		{"a shutdown URL by hand for the only preset: the preset's readiness URL", []string{"--proxy", "consul",
			"--shutdown-url", "http://127.0.0.1:20300/graceful_shutdown"}, nil,
			[]Target{{"http://127.0.0.1:20300/graceful_shutdown", "consul", []string{"http://127.0.0.1:19000/ready"}}}},
		{"two proxies by hand: by position", []string{"--proxy", "none",
			"--ready-url", "http://127.0.0.1:15021/healthz/ready", "--ready-url", "http://127.0.0.1:9090/startup",
			"--shutdown-url", "http://127.0.0.1:15020/quitquitquit", "--shutdown-url", "http://127.0.0.1:9091/quitquitquit"}, nil,
			[]Target{
				{"http://127.0.0.1:15020/quitquitquit", "", []string{"http://127.0.0.1:15021/healthz/ready"}},
				{"http://127.0.0.1:9091/quitquitquit", "", []string{"http://127.0.0.1:9090/startup"}},
			}},
		{"two proxies by hand under the default preset: by position", []string{
			"--ready-url", "http://127.0.0.1:1/r", "--ready-url", "http://127.0.0.1:2/r",
			"--shutdown-url", "http://127.0.0.1:3/q", "--shutdown-url", "http://127.0.0.1:4/q"}, nil,
			[]Target{
				{"http://127.0.0.1:3/q", "linkerd", []string{"http://127.0.0.1:1/r"}},
				{"http://127.0.0.1:4/q", "linkerd", []string{"http://127.0.0.1:2/r"}},
			}},
		{"by position from the environment", nil, map[string]string{
			"PROXY_AWAIT_READY_URL":    "http://127.0.0.1:1/r,http://127.0.0.1:2/r",
			"PROXY_AWAIT_SHUTDOWN_URL": "http://127.0.0.1:3/q,http://127.0.0.1:4/q"},
			[]Target{
				{"http://127.0.0.1:3/q", "linkerd", []string{"http://127.0.0.1:1/r"}},
				{"http://127.0.0.1:4/q", "linkerd", []string{"http://127.0.0.1:2/r"}},
			}},
		{"not as many by hand: the same host and port only", []string{"--proxy", "none",
			"--ready-url", "http://127.0.0.1:4191/ready", "--ready-url", "http://127.0.0.1:9090/startup",
			"--ready-url", "http://127.0.0.1:1/r",
			"--shutdown-url", "http://localhost:4191/shutdown", "--shutdown-url", "http://127.0.0.1:9091/quitquitquit"}, nil,
			[]Target{
				{"http://localhost:4191/shutdown", "", []string{"http://127.0.0.1:4191/ready"}},
				{"http://127.0.0.1:9091/quitquitquit", "", nil},
			}},
		{"a shutdown URL by hand for two presets: judged alone", []string{"--proxy", "istio,cloudsql",
			"--shutdown-url", "http://localhost:9/q"}, nil,
			[]Target{{"http://localhost:9/q", "", nil}}},
		{"readiness URLs by hand for the preset's shutdown URL: the same host and port only", []string{"--proxy", "envoy",
			"--ready-url", "http://127.0.0.1:15000/ready", "--ready-url", "http://127.0.0.1:9090/startup"}, nil,
			[]Target{{"http://127.0.0.1:15000/quitquitquit", "envoy", []string{"http://127.0.0.1:15000/ready"}}}},
		{"the default port of the scheme", []string{"--proxy", "none", "--ready-url", "http://127.0.0.1:80/r",
			"--ready-url", "http://127.0.0.1:81/r", "--shutdown-url", "http://127.0.0.1/q"}, nil,
			[]Target{{"http://127.0.0.1/q", "", []string{"http://127.0.0.1:80/r"}}}},
		{"no preset, another host", []string{"--proxy", "none", "--ready-url", "http://127.0.0.1:1/r",
			"--ready-url", "http://10.0.0.1:3/r", "--shutdown-url", "http://[::1]:3/q"}, nil,
			[]Target{{"http://[::1]:3/q", "", nil}}},
		{"no readiness URL", []string{"--proxy", "none", "--shutdown-url", "http://127.0.0.1:3/q"}, nil,
			[]Target{{"http://127.0.0.1:3/q", "", nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse("proxy-await", append(tc.args, "app"), testutil.Getenv(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.want, pair(c))
		})
	}
	c, err := config.Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000"}))
	require.NoError(t, err)
	assert.Equal(t, []Target{
		{"http://127.0.0.1:15000/quitquitquit", "", []string{"http://127.0.0.1:15000/ready"}},
		{"http://127.0.0.1:15020/quitquitquit", "", []string{"http://127.0.0.1:15000/ready"}},
	}, pair(c), "as scuttle: Istio's pilot-agent runs beside its Envoy")

	// A generic endpoint is another proxy's: Envoy's readiness URL does
	// not vouch for it.
	c, err = config.Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{"ENVOY_ADMIN_API": "http://127.0.0.1:15000",
		"ISTIO_QUIT_API": "http://127.0.0.1:15020", "GENERIC_QUIT_ENDPOINTS": "http://127.0.0.1:9091/quitquitquit"}))
	require.NoError(t, err)
	assert.Equal(t, []Target{
		{"http://127.0.0.1:15000/quitquitquit", "", []string{"http://127.0.0.1:15000/ready"}},
		{"http://127.0.0.1:15020/quitquitquit", "", []string{"http://127.0.0.1:15000/ready"}},
		{"http://127.0.0.1:9091/quitquitquit", "", nil},
	}, pair(c), "as scuttle")
}
