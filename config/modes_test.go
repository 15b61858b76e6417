package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/proxies"
)

// --check takes its arguments as paths, --versions its releases.
func TestCheckMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--check", "--versions", "linkerd=2.20,istio=v1.27.3", "--versions=Kubernetes=1.33", "a.yaml", "-", "dir"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.True(t, c.Check)
	assert.Equal(t, []string{"a.yaml", "-", "dir"}, c.Paths)
	assert.Empty(t, c.Command)
	assert.Equal(t, map[string]proxies.Version{"linkerd": {Major: 2, Minor: 20}, "istio": {Major: 1, Minor: 27}, "kubernetes": {Major: 1, Minor: 33}}, c.Versions)

	// Settings for a run do not stand in the way of a check.
	c, err = Parse("proxy-await", []string{"--check", "--versions", " linkerd=2.19 , istio=1.26", "k8s/"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_SHUTDOWN": "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"k8s/"}, c.Paths)
	assert.Equal(t, map[string]proxies.Version{"linkerd": {Major: 2, Minor: 19}, "istio": {Major: 1, Minor: 26}}, c.Versions)
}

// --install takes a directory and nothing else.
func TestInstallMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--install", "/pa"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, "/pa", c.Install)
}

// The modes, like --help and --version, are chosen on the command line
// only: a variable left in a pod's environment must never turn the
// application's start into a check of its words or a copy. Each variable
// is one warning that names it, and the run goes on.
func TestModesNotFromTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		variable, value, flag string
	}{
		{"PROXY_AWAIT_CHECK", "true", "check"},
		{"PROXY_AWAIT_INSTALL", "/pa", "install"},
		{"PROXY_AWAIT_VERSIONS", "istio=1.27", "versions"},
		{"PROXY_AWAIT_HELP", "true", "help"},
		{"PROXY_AWAIT_VERSION", "true", "version"},
	} {
		c, err := ParseEnviron("proxy-await", []string{"--proxy", "none", "/app", "k8s/"}, []string{tc.variable + "=" + tc.value})
		require.NoError(t, err, "%s=%s", tc.variable, tc.value)
		assert.False(t, c.Check || c.Help || c.Version, "%s=%s", tc.variable, tc.value)
		assert.Empty(t, c.Install, "%s=%s", tc.variable, tc.value)
		assert.Empty(t, c.Versions, "%s=%s", tc.variable, tc.value)
		assert.Equal(t, []string{"/app", "k8s/"}, c.Command, "%s=%s", tc.variable, tc.value)
		require.Len(t, c.Warnings, 1, "%s=%s", tc.variable, tc.value)
		assert.Equal(t, "variable $"+tc.variable+": ignored, --"+tc.flag+" is read from the command line only",
			c.Warnings[0].Error(), "%s=%s", tc.variable, tc.value)
		assert.Equal(t, "unset it, and give --"+tc.flag+" on the command line where it is meant",
			c.Warnings[0].Hint, "%s=%s", tc.variable, tc.value)
	}

	// An empty variable is as good as unset, as for every variable: it
	// changed nothing before either.
	c, err := ParseEnviron("proxy-await", []string{"/app"}, []string{"PROXY_AWAIT_CHECK=", "PROXY_AWAIT_INSTALL= "})
	require.NoError(t, err)
	assert.Equal(t, []string{"/app"}, c.Command)
	assert.Empty(t, c.Warnings)

	// With the mode on the command line, its variable is still not read.
	c, err = ParseEnviron("proxy-await", []string{"--check", "k8s/"}, []string{"PROXY_AWAIT_VERSIONS=linkerd=2.19"})
	require.NoError(t, err)
	assert.True(t, c.Check)
	assert.Empty(t, c.Versions)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, "variable $PROXY_AWAIT_VERSIONS: ignored, --versions is read from the command line only", c.Warnings[0].Error())
}

// Each mistake with the modes is one usage error that names it.
func TestModeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		msg  string
		hint string
	}{
		{[]string{"--check"}, nil, "--check needs a PATH to read", "give files or directories of manifests, or - for stdin"},
		{[]string{"--check", "--install", "/pa", "x"}, nil, "--check and --install cannot be used together", "run proxy-await once for each"},
		{[]string{"--install", "/pa", "--", "/app", "-x"}, nil, `invalid value "/pa" for --install: it copies proxy-await and runs no command`, `drop /app and what follows it`},
		{[]string{"--install="}, nil, `invalid value "" for --install: empty directory name`, ""},
		{[]string{"--versions", "linkerd=2.20", "/app"}, nil, `invalid value "linkerd=2.20" for --versions: it applies only with --check`, "add --check and the manifests to check"},
		{[]string{"--check", "--versions", "cilium=1.16", "x"}, nil, `invalid value "cilium=1.16" for --versions: unknown name cilium`, "name one of kubernetes, linkerd, istio"},
		{[]string{"--check", "--versions", "linkerd", "x"}, nil, `invalid value "linkerd" for --versions: want NAME=VERSION, as in linkerd=2.20, not linkerd`, "write --versions linkerd=2.20,istio=1.27,kubernetes=1.33"},
		{[]string{"--check", "--versions", "linkerd=edge-25.1.1", "x"}, nil, `invalid value "linkerd=edge-25.1.1" for --versions: version edge-25.1.1 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "--versions", "linkerd=2", "x"}, nil, `invalid value "linkerd=2" for --versions: version 2 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "--versions", "istio=1.+2", "x"}, nil, `invalid value "istio=1.+2" for --versions: version 1.+2 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "false", "x"}, nil, `invalid value "false" for --check: a boolean flag takes its value only after =`, "write --check=false, or put -- before a command named false"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		if assert.True(t, errors.As(err, &u), "%q: %v", tc.args, err) {
			assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
			assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.args)
		}
	}
}
