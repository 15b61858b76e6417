package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Flags lists every flag of --help, its variable, whether it is a boolean,
// and an example that its own parser takes: --check replaces a value it
// cannot see with it.
func TestFlags(t *testing.T) {
	var help strings.Builder
	PrintHelp(&help)
	flags := Flags()
	require.NotEmpty(t, flags)
	for _, f := range flags {
		assert.Contains(t, help.String(), "--"+f.Name, "a flag --help does not list")
		switch f.Name {
		case "help", "version", "install": // the command line's only
			assert.Empty(t, f.Env, f.Name)
			continue
		}
		assert.Equal(t, EnvPrefix+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), f.Env, f.Name)
		assert.NoError(t, flagSet(&Config{}).Set(f.Name, f.Example), "--%s=%s", f.Name, f.Example)
	}
	byName := map[string]FlagInfo{}
	for _, f := range flags {
		byName[f.Name] = f
	}
	assert.True(t, byName["shutdown"].Bool)
	assert.Equal(t, "S", byName["shutdown"].Shorthand)
	assert.False(t, byName["term-delay"].Bool)
	assert.Equal(t, []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"}, DisableVars())
}
