package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"

	"github.com/proxy-await/proxy-await/internal/hint"
)

func TestProbeFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		port     int
		appProbe string
	}{
		{[]string{"app"}, nil, 0, ""},
		{[]string{"--probe-port", "8081", "app"}, nil, 8081, ""},
		{[]string{"--probe-port", "8081", "--app-probe", "tcp:8080", "app"}, nil, 8081, "tcp:8080"},
		{[]string{"--probe-port=8081", "--app-probe=http://127.0.0.1:8080/healthz", "app"}, nil, 8081, "http://127.0.0.1:8080/healthz"},
		{[]string{"--probe-port", "8081", "--app-probe", "https://localhost:8443/", "app"}, nil, 8081, "https://localhost:8443/"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PROBE_PORT": "8081\n", "PROXY_AWAIT_APP_PROBE": " http://[::1]:8080/ready "},
			8081, "http://[::1]:8080/ready"},
		{[]string{"--probe-port", "9000", "app"}, map[string]string{"PROXY_AWAIT_PROBE_PORT": "8081"}, 9000, ""},
		// The kubelet's probes on their own port, the app's on the watched one.
		{[]string{"--probe-port", "8081", "--term-delay", "30s", "--drain-quiet", "1s", "--drain-ports", "8080", "app"}, nil, 8081, ""},
	} {
		c, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		require.NoError(t, err, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.port, c.ProbePort, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.appProbe, c.AppProbe, "%q %v", tc.args, tc.env)
	}
}

func TestProbeFlagsUsageErrors(t *testing.T) {
	const httpHint = "write http://127.0.0.1:PORT/PATH"
	for _, tc := range []struct {
		args      []string
		env       map[string]string
		msg, hint string
	}{
		{[]string{"--probe-port", "0", "app"}, nil, `invalid value "0" for --probe-port: not a port number (1-65535)`, ""},
		{[]string{"--probe-port", "http", "app"}, nil, `invalid value "http" for --probe-port: not a decimal number`, ""},
		{[]string{"--probe-port", "8081"}, nil, `invalid value "8081" for --probe-port: it serves the probes of a command, and there is none`,
			"put the command after --, or drop --probe-port to only wait for the proxy"},
		{[]string{"--app-probe", "tcp:8080", "app"}, nil, `invalid value "tcp:8080" for --app-probe: it is the check behind --probe-port`,
			"set --probe-port to the port the pod's probes point at"},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_APP_PROBE": "tcp:8080"},
			`invalid value "tcp:8080" for $PROXY_AWAIT_APP_PROBE (--app-probe): it is the check behind --probe-port`,
			"set --probe-port to the port the pod's probes point at"},
		{[]string{"--probe-port", "8081", "--app-probe", "tcp:http", "app"}, nil, `invalid value "tcp:http" for --app-probe: not a decimal number`, ""},
		{[]string{"--probe-port", "8081", "--app-probe", "8080", "app"}, nil, `invalid value "8080" for --app-probe: scheme must be http or https`, httpHint + " or tcp:PORT"},
		{[]string{"--probe-port", "8081", "--app-probe", "http://10.1.2.3:8080/healthz", "app"}, nil,
			`invalid value "http://10.1.2.3:8080/healthz" for --app-probe: host 10.1.2.3 is not loopback: the check is of the app in this pod`, httpHint},
		{[]string{"--probe-port", "8081", "--app-probe", "http://user:secret@app.example:8080/", "app"}, nil,
			`invalid value "http://user:xxxxx@app.example:8080/" for --app-probe: host app.example is not loopback: the check is of the app in this pod`, httpHint},
		{[]string{"--probe-port", "8080", "--term-delay", "30s", "--drain-quiet", "1s", "--drain-ports", "80,8080", "app"}, nil,
			`invalid value "8080" for --probe-port: it is one of --drain-ports, so the kubelet's probes would be traffic`,
			"serve the probes on a port of their own"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.msg, u.Error(), "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.hint, hint.Of(u), "%q %v", tc.args, tc.env)
	}
}
