package main

import (
	"os"
	"os/exec"
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
