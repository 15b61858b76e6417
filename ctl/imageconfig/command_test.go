package imageconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kubernetes' rule, as the container runtime applies it: no args, the
// image's CMD; args, those instead; an empty list is no list; an
// ENTRYPOINT of one empty word is none.
func TestCommandKeepsKubernetesRule(t *testing.T) {
	for _, tc := range []struct {
		name             string
		entrypoint, cmd  []string
		args             []string
		wantCmd, wantArg []string
	}{
		{"no args: ENTRYPOINT and CMD", []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}, nil,
			[]string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}},
		{"args: ENTRYPOINT and args", []string{"/usr/bin/tini", "--"}, []string{"/bin/sh"}, []string{"argocd-server"},
			[]string{"/usr/bin/tini", "--"}, []string{"argocd-server"}},
		{"empty args are none", []string{"docker-entrypoint.sh"}, []string{"node"}, []string{},
			[]string{"docker-entrypoint.sh"}, []string{"node"}},
		{"CMD alone", nil, []string{"python", "app.py"}, nil, nil, []string{"python", "app.py"}},
		{"args alone run as the command", nil, nil, []string{"/bin/app", "-v"}, nil, []string{"/bin/app", "-v"}},
		{"ENTRYPOINT alone", []string{"/server"}, nil, nil, []string{"/server"}, nil},
		{"an ENTRYPOINT of one empty word is none", []string{""}, []string{"sh"}, nil, nil, []string{"sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, args, err := Command(Config{Image: "x", Entrypoint: tc.entrypoint, Cmd: tc.cmd}, tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCmd, cmd, "command")
			assert.Equal(t, tc.wantArg, args, "args")
		})
	}
}

// An image that runs nothing, with a container that gives no args, is an
// error: there is no command to write out.
func TestCommandOfAnImageThatRunsNothing(t *testing.T) {
	for _, ep := range [][]string{nil, {}, {""}} {
		_, _, err := Command(Config{Image: "index.docker.io/library/scratch:1", Entrypoint: ep}, nil)
		e := requireReason(t, err, NoCommand)
		assert.Equal(t, "index.docker.io/library/scratch:1: its configuration has neither ENTRYPOINT nor CMD, and the container no args, "+
			"so there is nothing it runs: write the command the container runs into the manifest as its command", e.Error())
	}
}

// Command's lists are the caller's to change: the cached Config is not.
func TestCommandCopies(t *testing.T) {
	img := Config{Entrypoint: []string{"/a"}, Cmd: []string{"b"}}
	cmd, args, err := Command(img, nil)
	require.NoError(t, err)
	cmd[0], args[0] = "changed", "changed"
	assert.Equal(t, Config{Entrypoint: []string{"/a"}, Cmd: []string{"b"}}, img)
}
