package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"

	"github.com/proxy-await/proxy-await/internal/hint"
)

func TestDrainPorts(t *testing.T) {
	drain := []string{"--term-delay", "30s", "--drain-quiet", "2s"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []uint16
	}{
		{append(drain, "--drain-ports", "8080", "app"), nil, []uint16{8080}},
		{append(drain, "--drain-ports", "8080,9090", "--drain-ports=1", "app"), nil, []uint16{8080, 9090, 1}},
		{append(drain, "--drain-ports", "8080,8080,65535", "app"), nil, []uint16{8080, 65535}},
		{append(drain, "app"), map[string]string{"PROXY_AWAIT_DRAIN_PORTS": " 8080, 9090\n"}, []uint16{8080, 9090}},
		{append(drain, "--drain-ports", "81", "app"), map[string]string{"PROXY_AWAIT_DRAIN_PORTS": "80"}, []uint16{81}},
		{append(drain, "app"), nil, nil},
	} {
		c, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		require.NoError(t, err, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.want, c.DrainPorts, "%q %v", tc.args, tc.env)
	}
}

func TestDrainPortsUsageErrors(t *testing.T) {
	const needsQuiet = "it only applies with --drain-quiet"
	const quietHint = "set --drain-quiet to the quiet period, and --term-delay"
	drain := []string{"--term-delay", "30s", "--drain-quiet", "2s"}
	for _, tc := range []struct {
		args      []string
		env       map[string]string
		msg, hint string
	}{
		{[]string{"--drain-ports"}, nil, "--drain-ports needs a value", "write --drain-ports=8080"},
		{[]string{"--drain-ports", "8080", "app"}, nil, `invalid value "8080" for --drain-ports: ` + needsQuiet, quietHint},
		{[]string{"--term-delay", "5s", "--drain-ports", "80,443", "app"}, nil, `invalid value "80,443" for --drain-ports: ` + needsQuiet, quietHint},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_DRAIN_PORTS": "8080"},
			`invalid value "8080" for $PROXY_AWAIT_DRAIN_PORTS (--drain-ports): ` + needsQuiet, quietHint},
		{append(drain, "--drain-ports", "0", "app"), nil, `invalid value "0" for --drain-ports: not a port number (1-65535)`, ""},
		{append(drain, "--drain-ports", "65536", "app"), nil, `invalid value "65536" for --drain-ports: not a port number (1-65535)`, ""},
		{append(drain, "--drain-ports", "http", "app"), nil, `invalid value "http" for --drain-ports: not a decimal number`, ""},
		{append(drain, "--drain-ports", "0x50", "app"), nil, `invalid value "0x50" for --drain-ports: not a decimal number`, ""},
		{append(drain, "--drain-ports", "80,", "app"), nil, `invalid value "80," for --drain-ports: empty item in a comma-separated list`, ""},
		{append(drain, "--drain-ports", "-1", "app"), nil, `invalid value "-1" for --drain-ports: not a decimal number`, ""},
		{append(drain, "app"), map[string]string{"PROXY_AWAIT_DRAIN_PORTS": "80;443"},
			`invalid value "80;443" for $PROXY_AWAIT_DRAIN_PORTS (--drain-ports): not a decimal number`, ""},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.ErrorAs(t, err, &u, "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.msg, u.Error(), "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.hint, hint.Of(u), "%q %v", tc.args, tc.env)
	}
}
