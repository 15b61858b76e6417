package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// --install takes a directory and nothing else.
func TestInstallMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--install", "/pa"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Install)
	assert.Equal(t, "/pa", c.Install.Dir)
	assert.Empty(t, c.Command)
}

// The modes, like --help and --version, are chosen on the command line
// only: a variable left in a pod's environment must never turn the
// application's start into a copy or a usage error. Each variable is one
// warning that names it, and the run goes on; proxy-awaitctl's flags are
// named as its.
func TestModesNotFromTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		variable, value, msg, hint string
	}{
		{"PROXY_AWAIT_INSTALL", "/pa", "--install is read from the command line only", "unset it, and give --install on the command line where it is meant"},
		{"PROXY_AWAIT_HELP", "true", "--help is read from the command line only", "unset it, and give --help on the command line where it is meant"},
		{"PROXY_AWAIT_VERSION", "true", "--version is read from the command line only", "unset it, and give --version on the command line where it is meant"},
		{"PROXY_AWAIT_CHECK", "true", "--check is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl check reads manifests, on a laptop or in CI"},
		{"PROXY_AWAIT_VERSIONS", "istio=1.27", "--versions is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl check reads manifests, on a laptop or in CI"},
		{"PROXY_AWAIT_INJECT", "true", "--inject is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl inject reads manifests, on a laptop or in CI"},
		{"PROXY_AWAIT_IMAGE", "registry.example.com/pa:1", "--image is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl inject reads manifests, on a laptop or in CI"},
		{"PROXY_AWAIT_CONTAINER", "web", "--container is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl inject reads manifests, on a laptop or in CI"},
		{"PROXY_AWAIT_POLICY", "true", "--policy is proxy-awaitctl's, and proxy-await reads no manifests", "unset it: proxy-awaitctl policy reads manifests, on a laptop or in CI"},
	} {
		c, err := ParseEnviron("proxy-await", []string{"--proxy", "none", "/app", "k8s/"}, []string{tc.variable + "=" + tc.value})
		require.NoError(t, err, "%s=%s", tc.variable, tc.value)
		assert.False(t, c.Help || c.Version, "%s=%s", tc.variable, tc.value)
		assert.Nil(t, c.Install, "%s=%s", tc.variable, tc.value)
		assert.Equal(t, []string{"/app", "k8s/"}, c.Command, "%s=%s", tc.variable, tc.value)
		require.Len(t, c.Warnings, 1, "%s=%s", tc.variable, tc.value)
		assert.Equal(t, "variable $"+tc.variable+": ignored, "+tc.msg, c.Warnings[0].Error(), "%s=%s", tc.variable, tc.value)
		assert.Equal(t, tc.hint, c.Warnings[0].Hint, "%s=%s", tc.variable, tc.value)
	}

	// An empty variable is as good as unset, as for every variable: it
	// changed nothing before either.
	c, err := ParseEnviron("proxy-await", []string{"/app"}, []string{"PROXY_AWAIT_CHECK=", "PROXY_AWAIT_INSTALL= "})
	require.NoError(t, err)
	assert.Equal(t, []string{"/app"}, c.Command)
	assert.Empty(t, c.Warnings)
}

// Each mistake with --install is one usage error that names it; each of
// proxy-awaitctl's flags given to proxy-await is one whose hint is the
// proxy-awaitctl line that does what was asked, and nothing runs.
func TestModeUsageErrors(t *testing.T) {
	moved := func(flag string) string {
		return "--" + flag + " is proxy-awaitctl's now: proxy-await, the pod's entrypoint, reads no manifests"
	}
	for _, tc := range []struct {
		args []string
		msg  string
		hint string
	}{
		{[]string{"--install", "/pa", "--", "/app", "-x"}, `invalid value "/pa" for --install: it copies proxy-await and runs no command`, `drop /app and what follows it`},
		{[]string{"--install="}, `invalid value "" for --install: empty directory name`, ""},
		{[]string{"--check", "a.yaml", "-", "dir"}, moved("check"), "run proxy-awaitctl check a.yaml - dir"},
		{[]string{"--check"}, moved("check"), "run proxy-awaitctl check PATH..."},
		{[]string{"--check", "--versions", "linkerd=2.20,istio=v1.27.3", "--versions=kubernetes=1.33", "k8s/"}, moved("check"), "run proxy-awaitctl check --versions linkerd=2.20,istio=v1.27.3 --versions kubernetes=1.33 k8s/"},
		{[]string{"--versions", "linkerd=2.20", "--check", "--install", "/pa", "x"}, moved("versions"), "run proxy-awaitctl check --versions linkerd=2.20 x"},
		{[]string{"--versions", "linkerd=2.20", "--", "/app"}, moved("versions"), "run proxy-awaitctl check --versions linkerd=2.20 PATH..."},
		{[]string{"--inject", "--image", "registry.example.com/pa:1", "--container", "web", "-"}, moved("inject"), "run proxy-awaitctl inject --image registry.example.com/pa:1 --container web -"},
		{[]string{"--image", "pa:1", "--", "/app"}, moved("image"), "run proxy-awaitctl inject --image pa:1 PATH..."},
		{[]string{"--policy", "--versions", "istio=1.27"}, moved("policy"), "run proxy-awaitctl policy --versions istio=1.27"},
		{[]string{"--policy", "k8s/"}, moved("policy"), "run proxy-awaitctl policy"},
		{[]string{"--check", "https://u:secret@example.com/a.yaml"}, moved("check"), "run proxy-awaitctl check https://u:xxxxx@example.com/a.yaml"},
		{[]string{"--check", "false", "x"}, `invalid value "false" for --check: a boolean flag takes its value only after =`, "write --check=false, or put -- before a command named false"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(nil))
		var u *UsageError
		if assert.True(t, errors.As(err, &u), "%q: %v", tc.args, err) {
			assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
			assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.args)
		}
	}
}

// The release image's tag follows the version a build is stamped with:
// a release's own, the release a build between releases is built on, and
// v1 for a build of no release.
func TestReleaseImage(t *testing.T) {
	for v, want := range map[string]string{
		"1.2.3":                                "v1.2.3",
		"v1.2.3":                               "v1.2.3",
		"1.2.3-4-gabc1234":                     "v1.2.3",
		"1.2.3-4-gabc1234-dirty":               "v1.2.3",
		"1.2.3-dirty":                          "v1.2.3",
		"1.2.4-snapshot":                       "v1.2.4-snapshot",
		"1.3.0-rc.1":                           "v1.3.0-rc.1",
		"ca25c29":                              "v1",
		"ca25c29-dirty":                        "v1",
		"(devel)":                              "v1",
		"":                                     "v1",
		"v1.2.4-0.20261128123456-abcdefabcdef": "v1",
		"v0.0.0-20261128123456-abcdefabcdef":   "v1",
	} {
		assert.Equal(t, want, imageTag(v), "%q", v)
	}
	assert.Equal(t, "ghcr.io/proxy-await/proxy-await:v1", ReleaseImage(), "a test binary has no version")
}
