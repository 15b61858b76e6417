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

// check takes its other words as paths, --versions its releases, wherever
// each is on the line.
func TestToolCheck(t *testing.T) {
	c, err := ParseTool([]string{"check", "a.yaml", "--versions", "linkerd=2.20,istio=v1.27.3", "-", "--versions=Kubernetes=1.33", "dir"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Check)
	assert.Nil(t, c.Inject)
	assert.Nil(t, c.Policy)
	assert.Equal(t, "check", c.Command)
	assert.Equal(t, &Check{Paths: []string{"a.yaml", "-", "dir"}, Versions: map[string]proxies.Version{
		"linkerd": {Major: 2, Minor: 20}, "istio": {Major: 1, Minor: 27}, "kubernetes": {Major: 1, Minor: 33}}, Native: map[string]bool{}}, c.Check)

	// -- ends the flags: a path may start with a dash.
	c, err = ParseTool([]string{"check", "-q", "--", "--versions", "-"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"--versions", "-"}, c.Check.Paths)
	assert.True(t, c.Quiet)

	// The log format comes from the command line, else the variable, as
	// proxy-await's; run settings in the environment are none of its
	// business.
	c, err = ParseTool([]string{"check", "k8s/"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json", "PROXY_AWAIT_SHUTDOWN": "maybe", "PROXY_AWAIT_VERSIONS": "linkerd=2.19"}))
	require.NoError(t, err)
	assert.True(t, c.Check.JSON)
	assert.Empty(t, c.Check.Versions)
	c, err = ParseTool([]string{"check", "--log-format", "text", "k8s/"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}))
	require.NoError(t, err)
	assert.False(t, c.Check.JSON)
}

// inject takes --image (this release's by default) and --container.
func TestToolInject(t *testing.T) {
	c, err := ParseTool([]string{"inject", "a.yaml", "--versions", "istio=1.26", "--image", "registry.example.com/pa:1", "--container", "web", "-", "--container=worker"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Inject)
	assert.Equal(t, &Inject{Paths: []string{"a.yaml", "-"}, Versions: map[string]proxies.Version{"istio": {Major: 1, Minor: 26}}, Native: map[string]bool{},
		Image: "registry.example.com/pa:1", Containers: []string{"web", "worker"}}, c.Inject)

	// Where commands come from, and --undo, wherever they are among the paths.
	c, err = ParseTool([]string{"inject", "a.yaml", "--platform", "linux/arm/v7", "b.yaml", "--entrypoints=ep.yaml", "--registry=false", "c/", "--undo"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.Equal(t, &Inject{Paths: []string{"a.yaml", "b.yaml", "c/"}, Versions: map[string]proxies.Version{}, Native: map[string]bool{}, Image: ReleaseImage(),
		Platform: "linux/arm/v7", Entrypoints: "ep.yaml", NoRegistry: true, Undo: true}, c.Inject)

	c, err = ParseTool([]string{"inject", "-"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}))
	require.NoError(t, err)
	assert.Equal(t, ReleaseImage(), c.Inject.Image)
	assert.Nil(t, c.Inject.Containers)
	assert.True(t, c.Inject.JSON)
	assert.False(t, c.Inject.NoRegistry, "the registry is asked unless --registry=false")
	assert.False(t, c.Inject.Undo)
	assert.Empty(t, c.Inject.Platform, "linux/amd64 is the resolver's default")
}

// A proxy's setting of its whole mesh, native sidecars on or off, comes
// after its release, or alone; the policy and inject read it as check does.
func TestToolMeshSettings(t *testing.T) {
	for _, command := range []string{"check", "inject", "policy"} {
		args := []string{command, "--versions", "istio=1.26+native,dapr=native,linkerd=2.20+classic", "--versions", "consul=classic"}
		if command != "policy" {
			args = append(args, "x")
		}
		c, err := ParseTool(args, testutil.Getenv(nil))
		require.NoError(t, err, command)
		versions := map[string]proxies.Version{"istio": {Major: 1, Minor: 26}, "linkerd": {Major: 2, Minor: 20}}
		native := map[string]bool{"istio": true, "dapr": true, "linkerd": false, "consul": false}
		switch command {
		case "check":
			assert.Equal(t, versions, c.Check.Versions)
			assert.Equal(t, native, c.Check.Native)
		case "inject":
			assert.Equal(t, versions, c.Inject.Versions)
			assert.Equal(t, native, c.Inject.Native)
		case "policy":
			assert.Equal(t, versions, c.Policy.Versions)
			assert.Equal(t, native, c.Policy.Native)
		}
	}
	l := versionList{map[string]proxies.Version{}, map[string]bool{}}
	require.NoError(t, l.Set("istio=1.26+native,dapr=native,kubernetes=1.33"))
	assert.Equal(t, "dapr=native,istio=1.26+native,kubernetes=1.33", l.String())
}

// policy takes --action (warn by default) and --namespaces-excluded, a
// comma list or repeated, each a namespace's name, once.
func TestToolPolicyAction(t *testing.T) {
	c, err := ParseTool([]string{"policy"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.False(t, c.Policy.Deny)
	assert.Empty(t, c.Policy.NamespacesExcluded)
	c, err = ParseTool([]string{"policy", "--action", "deny", "--namespaces-excluded", "batch,legacy", "--namespaces-excluded=batch", "--namespaces-excluded", "ci"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.True(t, c.Policy.Deny)
	assert.Equal(t, []string{"batch", "legacy", "ci"}, c.Policy.NamespacesExcluded)
	c, err = ParseTool([]string{"policy", "--action=Warn"}, testutil.Getenv(nil))
	require.NoError(t, err)
	assert.False(t, c.Policy.Deny)
}

// policy takes --versions and no path.
func TestToolPolicy(t *testing.T) {
	c, err := ParseTool([]string{"policy", "--versions", "istio=1.27,kubernetes=1.33"}, testutil.Getenv(nil))
	require.NoError(t, err)
	require.NotNil(t, c.Policy)
	assert.Equal(t, map[string]proxies.Version{"istio": {Major: 1, Minor: 27}, "kubernetes": {Major: 1, Minor: 33}}, c.Policy.Versions)
}

// --help and --version, alone or for a command.
func TestToolHelp(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		command string
		help    bool
		version bool
	}{
		{[]string{"--help"}, "", true, false},
		{[]string{"-h"}, "", true, false},
		{[]string{"help"}, "", true, false},
		{[]string{"help", "inject"}, "inject", true, false},
		{[]string{"inject", "--help"}, "inject", true, false},
		{[]string{"check", "x", "-h", "--bogus"}, "", false, false}, // the flags' shape comes first
		{[]string{"--version"}, "", false, true},
		{[]string{"version"}, "", false, true},
	} {
		c, err := ParseTool(tc.args, testutil.Getenv(nil))
		if !tc.help && !tc.version {
			assert.Error(t, err, "%q", tc.args)
			continue
		}
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.command, c.Command, "%q", tc.args)
		assert.Equal(t, tc.help, c.Help, "%q", tc.args)
		assert.Equal(t, tc.version, c.Version, "%q", tc.args)
	}
}

// Each mistake is one usage error that names it, with the fix.
func TestToolUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		msg  string
		hint string
	}{
		{nil, nil, "no command: give one of check, inject or policy", "run proxy-awaitctl check PATH..., or proxy-awaitctl --help"},
		{[]string{"chek", "x"}, nil, "unknown command chek: give one of check, inject or policy", "did you mean check?"},
		{[]string{"k8s/"}, nil, "unknown command k8s/: give one of check, inject or policy", "to check the manifests at k8s/: proxy-awaitctl check k8s/"},
		{[]string{"--versions", "linkerd=2.20", "check", "x"}, nil, "proxy-awaitctl needs a command before its flags, not --versions", "put the command first: proxy-awaitctl check|inject|policy [FLAGS] [PATH...]"},
		{[]string{"help", "lint"}, nil, "unknown command lint: give one of check, inject or policy", "run proxy-awaitctl --help for the commands"},
		{[]string{"check"}, nil, "check needs a PATH to read", "give files or directories of manifests, or - for stdin"},
		{[]string{"check", "--versions", "linkerd=2.20"}, nil, "check needs a PATH to read", "give files or directories of manifests, or - for stdin"},
		{[]string{"inject", "-q"}, nil, "inject needs a PATH to read", "give files or directories of manifests, or - for stdin"},
		{[]string{"policy", "k8s/"}, nil, "policy reads no PATH: it writes the policy to stdout", "drop k8s/ and what follows it"},
		{[]string{"check", "--versions", "cilium=1.16", "x"}, nil, `invalid value "cilium=1.16" for --versions: unknown name cilium`, "name one of kubernetes, linkerd, istio, dapr, consul"},
		{[]string{"policy", "--action", "block"}, nil, `invalid value "block" for --action: choose deny or warn`, ""},
		{[]string{"policy", "--namespaces-excluded", "ci,Prod"}, nil, `invalid value "ci,Prod" for --namespaces-excluded: Prod is not a namespace's name (lower case letters, digits and -, at most 63)`, ""},
		{[]string{"check", "--action", "deny", "x"}, nil, "unknown flag --action", "see --help for the flags"},
		{[]string{"check", "--versions", "kubernetes=1.33+native", "x"}, nil, `invalid value "kubernetes=1.33+native" for --versions: kubernetes has no setting of the whole mesh that --versions states, not +native`, "only linkerd, istio, dapr, consul take +native or +classic"},
		{[]string{"check", "--versions", "istio=1.26+on", "x"}, nil, `invalid value "istio=1.26+on" for --versions: unknown setting on for istio`, "write istio=V+native or istio=V+classic, or istio=native alone"},
		{[]string{"check", "--versions", "dapr=1.18", "x"}, nil, `invalid value "dapr=1.18" for --versions: the release of dapr makes no difference to what proxy-awaitctl judges`, "write dapr=native or dapr=classic, for the setting of its whole mesh"},
		{[]string{"check", "x", "--versions", "linkerd"}, nil, `invalid value "linkerd" for --versions: want NAME=VERSION, as in linkerd=2.20, not linkerd`, "write --versions linkerd=2.20,istio=1.27,kubernetes=1.33"},
		{[]string{"check", "--versions", "linkerd=edge-25.1.1", "x"}, nil, `invalid value "linkerd=edge-25.1.1" for --versions: version edge-25.1.1 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"check", "--versions", "linkerd=2", "x"}, nil, `invalid value "linkerd=2" for --versions: version 2 is not MAJOR.MINOR, as in 2.20`, ""},
		{[]string{"check", "x", "--versions"}, nil, "--versions needs a value", "write --versions=linkerd=2.20"},
		{[]string{"check", "-q", "false", "x"}, nil, `invalid value "false" for --quiet: a boolean flag takes its value only after =`, "write --quiet=false, or put -- before a path named false"},
		{[]string{"check", "x", "--verions", "linkerd=2.20"}, nil, "unknown flag --verions", "did you mean --versions?"},
		{[]string{"check", "--image", "pa:1", "x"}, nil, "unknown flag --image", "see --help for the flags"},
		{[]string{"inject", "--image", "", "x"}, nil, `invalid value "" for --image: not an image reference, as in ghcr.io/proxy-await/proxy-await:v1.2.3`, ""},
		{[]string{"inject", "--container", "a,b", "x"}, nil, `invalid value "a,b" for --container: not a container's name`, ""},
		{[]string{"inject", "--platform", "amd64", "x"}, nil, `invalid value "amd64" for --platform: not OS/ARCH or OS/ARCH/VARIANT`, "write --platform linux/amd64, linux/arm64 or linux/arm/v7"},
		{[]string{"inject", "x", "--platform=linux/"}, nil, `invalid value "linux/" for --platform: not OS/ARCH or OS/ARCH/VARIANT`, "write --platform linux/amd64, linux/arm64 or linux/arm/v7"},
		{[]string{"inject", "--entrypoints=", "x"}, nil, `invalid value "" for --entrypoints: no file named`, ""},
		{[]string{"inject", "--registry", "false", "x"}, nil, `invalid value "false" for --registry: a boolean flag takes its value only after =`, "write --registry=false, or put -- before a path named false"},
		{[]string{"check", "--undo", "x"}, nil, "unknown flag --undo", "see --help for the flags"},
		{[]string{"check", "--registry=false", "x"}, nil, "unknown flag --registry", "see --help for the flags"},
		{[]string{"check", "--log-format", "yaml", "x"}, nil, `invalid value "yaml" for --log-format: choose text or json`, ""},
		{[]string{"check", "x"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "yaml"}, `invalid value "yaml" for $PROXY_AWAIT_LOG_FORMAT (--log-format): choose text or json`, ""},
		{[]string{"check", "--versions=http://u:pa55w0rd@127.0.0.1:1/x", "x"}, nil, `invalid value "http://u:xxxxx@127.0.0.1:1/x" for --versions: no item of this flag has an @: is it a URL meant for another flag?`, "write --versions linkerd=2.20,istio=1.27,kubernetes=1.33"},
		{[]string{"http://u:pa55w0rd@127.0.0.1:1/x"}, nil, "unknown command http://u:xxxxx@127.0.0.1:1/x: give one of check, inject or policy", "to check the manifests at http://u:xxxxx@127.0.0.1:1/x: proxy-awaitctl check http://u:xxxxx@127.0.0.1:1/x"},
		{[]string{"check", "x"}, map[string]string{"PROXY_AWAIT_QUIET": "sometimes"}, `invalid value "sometimes" for $PROXY_AWAIT_QUIET (--quiet): must be true or false`, ""},
	} {
		_, err := ParseTool(tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		if assert.True(t, errors.As(err, &u), "%q: %v", tc.args, err) {
			assert.Equal(t, tc.msg, u.Error(), "%q", tc.args)
			assert.Equal(t, tc.hint, hint.Of(u), "%q", tc.args)
		}
	}
}

// A usage error is JSON under --log-format json wherever it is on the
// line, or in the variable.
func TestToolUsageErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"check", "--bogus", "--log-format", "json"}, nil, "json"},
		{[]string{"check", "--log-format=json", "--versions", "x=1"}, nil, "json"},
		{[]string{"chek"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": "json"}, "json"},
		{[]string{"check", "--versions", "x=1", "y"}, nil, "text"},
	} {
		_, err := ParseTool(tc.args, testutil.Getenv(tc.env))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q", tc.args)
		assert.Equal(t, tc.want, u.Format, "%q", tc.args)
	}
}
