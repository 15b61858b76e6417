package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs main when this binary is started as proxy-await, which it
// puts on PATH (testscript.Main); else the tests. Everything proxy-await
// does is package lifecycle's and tested there: these tests check what main
// adds, the process's exit code.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"proxy-await": main})
}

// main exits with the code the lifecycle returns, on every kind of path: a
// mode, a usage error, the child's own code, the signal that killed it.
func TestMainExitsWithTheLifecyclesCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"--version", []string{"--version"}, 0},
		{"a usage error", []string{"--no-such-flag"}, 2},
		{"the child's code", []string{"--proxy", "none", "--", "sh", "-c", "exit 3"}, 3},
		{"the child killed by SIGTERM", []string{"--proxy", "none", "--", "sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("proxy-await", tc.args...)
			// Nothing of the developer's settings; no second of the race
			// detector's at each exit.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
			out, err := cmd.CombinedOutput()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.want, code, "output:\n%s", out)
		})
	}
}

// proxy-await is what every pod runs, so it links only what a pod needs:
// no YAML library, no shell parser, no registry client, no CEL, none of
// Kubernetes' API types, and none of proxy-awaitctl's packages. go list
// says what the build of this package links, as the release builds it.
func TestEntrypointLinksNoTooling(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-tags", "nethttpomithttp2", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/proxy-await/proxy-await/lifecycle", "go list named not what main links")
	tooling := regexp.MustCompile(`yaml|^mvdan\.cc/sh|go-containerregistry|cel-go|^cel\.dev|^k8s\.io/|^sigs\.k8s\.io/|` +
		`^github\.com/proxy-await/proxy-await/(check|inject|policy|ctl|manifest|invocation|sidecar|rules|registry)(/|$)`)
	var linked []string
	for _, d := range deps {
		if tooling.MatchString(d) {
			linked = append(linked, d)
		}
	}
	assert.Empty(t, linked, "proxy-await links tooling; it belongs in cmd/proxy-awaitctl")
}
