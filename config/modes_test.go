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
	require.NotNil(t, c.Check)
	assert.Nil(t, c.Install)
	assert.Equal(t, []string{"a.yaml", "-", "dir"}, c.Check.Paths)
	assert.Empty(t, c.Command)
	assert.Equal(t, map[string]proxies.Version{"linkerd": {Major: 2, Minor: 20}, "istio": {Major: 1, Minor: 27}, "kubernetes": {Major: 1, Minor: 33}}, c.Check.Versions)
	assert.False(t, c.Check.JSON)

	// Settings for a run do not stand in the way of a check.
	c, err = Parse("proxy-await", []string{"--check", "--versions", " linkerd=2.19 , istio=1.26", "k8s/"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_SHUTDOWN": "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"k8s/"}, c.Check.Paths)
	assert.Equal(t, map[string]proxies.Version{"linkerd": {Major: 2, Minor: 19}, "istio": {Major: 1, Minor: 26}}, c.Check.Versions)

	// Under --log-format json the findings are JSON lines.
	c, err = Parse("proxy-await", []string{"--check", "k8s/"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}))
	require.NoError(t, err)
	assert.True(t, c.Check.JSON)
}

// --inject takes its arguments as paths, --versions its releases, --image
// the init container's image (this release's by default), --container
// each container to adopt.
func TestInjectMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--inject", "--versions", "istio=1.26", "--image", "registry.example.com/pa:1", "--container", "web", "--container", "worker", "a.yaml", "-"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Inject)
	assert.Nil(t, c.Check)
	assert.Empty(t, c.Command)
	assert.Equal(t, &Inject{Paths: []string{"a.yaml", "-"}, Versions: map[string]proxies.Version{"istio": {Major: 1, Minor: 26}},
		Image: "registry.example.com/pa:1", Containers: []string{"web", "worker"}}, c.Inject)

	c, err = Parse("proxy-await", []string{"--inject", "-"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}))
	require.NoError(t, err)
	assert.Equal(t, ReleaseImage(), c.Inject.Image)
	assert.Nil(t, c.Inject.Containers)
	assert.True(t, c.Inject.JSON)
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

// --policy takes --versions and nothing else.
func TestPolicyMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--policy", "--versions", "istio=1.27,kubernetes=1.33"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Policy)
	assert.Equal(t, map[string]proxies.Version{"istio": {Major: 1, Minor: 27}, "kubernetes": {Major: 1, Minor: 33}}, c.Policy.Versions)
	assert.Nil(t, c.Check)
	assert.Nil(t, c.Inject)
}

// --install takes a directory and nothing else.
func TestInstallMode(t *testing.T) {
	c, err := Parse("proxy-await", []string{"--install", "/pa"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Install)
	assert.Equal(t, "/pa", c.Install.Dir)
	assert.Nil(t, c.Check)
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
		{"PROXY_AWAIT_INJECT", "true", "inject"},
		{"PROXY_AWAIT_IMAGE", "registry.example.com/pa:1", "image"},
		{"PROXY_AWAIT_CONTAINER", "web", "container"},
		{"PROXY_AWAIT_POLICY", "true", "policy"},
		{"PROXY_AWAIT_HELP", "true", "help"},
		{"PROXY_AWAIT_VERSION", "true", "version"},
	} {
		c, err := ParseEnviron("proxy-await", []string{"--proxy", "none", "/app", "k8s/"}, []string{tc.variable + "=" + tc.value})
		require.NoError(t, err, "%s=%s", tc.variable, tc.value)
		assert.False(t, c.Check != nil || c.Help || c.Version, "%s=%s", tc.variable, tc.value)
		assert.Nil(t, c.Install, "%s=%s", tc.variable, tc.value)
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
	require.NotNil(t, c.Check)
	assert.Empty(t, c.Check.Versions)
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
		{[]string{"--versions", "linkerd=2.20", "/app"}, nil, `invalid value "linkerd=2.20" for --versions: it applies only with --check, --inject or --policy`, "add --check and the manifests to check"},
		{[]string{"--check", "--versions", "cilium=1.16", "x"}, nil, `invalid value "cilium=1.16" for --versions: unknown name cilium`, "name one of kubernetes, linkerd, istio"},
		{[]string{"--check", "--versions", "linkerd", "x"}, nil, `invalid value "linkerd" for --versions: want NAME=VERSION, as in linkerd=2.20, not linkerd`, "write --versions linkerd=2.20,istio=1.27,kubernetes=1.33"},
		{[]string{"--check", "--versions", "linkerd=edge-25.1.1", "x"}, nil, `invalid value "linkerd=edge-25.1.1" for --versions: version edge-25.1.1 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "--versions", "linkerd=2", "x"}, nil, `invalid value "linkerd=2" for --versions: version 2 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "--versions", "istio=1.+2", "x"}, nil, `invalid value "istio=1.+2" for --versions: version 1.+2 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"--check", "false", "x"}, nil, `invalid value "false" for --check: a boolean flag takes its value only after =`, "write --check=false, or put -- before a command named false"},
		{[]string{"--inject"}, nil, "--inject needs a PATH to read", "give files or directories of manifests, or - for stdin"},
		{[]string{"--check", "--inject", "x"}, nil, "--check and --inject cannot be used together", "run proxy-await once for each"},
		{[]string{"--inject", "--install", "/pa", "x"}, nil, "--inject and --install cannot be used together", "run proxy-await once for each"},
		{[]string{"--image", "pa:1", "--", "/app"}, nil, `invalid value "pa:1" for --image: it applies only with --inject`, "add --inject and the manifests to adopt proxy-await in"},
		{[]string{"--check", "--container", "web", "x"}, nil, `invalid value "web" for --container: it applies only with --inject`, "add --inject and the manifests to adopt proxy-await in"},
		{[]string{"--inject", "--image", "", "x"}, nil, `invalid value "" for --image: not an image reference, as in ghcr.io/proxy-await/proxy-await:v1.2.3`, ""},
		{[]string{"--inject", "--container", "a,b", "x"}, nil, `invalid value "a,b" for --container: not a container's name`, ""},
		{[]string{"--policy", "--check", "x"}, nil, "--check and --policy cannot be used together", "run proxy-await once for each"},
		{[]string{"--policy", "k8s/"}, nil, "--policy reads no PATH and runs no command: it writes the policy to stdout", "drop k8s/ and what follows it"},
		{[]string{"--versions", "linkerd=2.20", "--inject"}, nil, "--inject needs a PATH to read", "give files or directories of manifests, or - for stdin"},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		if assert.True(t, errors.As(err, &u), "%q: %v", tc.args, err) {
			assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
			assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.args)
		}
	}
}
