package lifecycle_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No package of proxy-await's own does work at initialisation: a package's
// package-level work (a map literal, a compiled regular expression, a table
// built by a loop) runs at every start, whatever the command line, and pages
// in its code and data. A mode (--check, --install, and what stands beside
// them) costs a normal start nothing only while its packages initialise
// nothing; BENCHMARKS.md's Memory section says what a start costs.
func TestNothingOfOursInitialises(t *testing.T) {
	cmd := exec.Command(proxyAwaitBin, "--version")
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run())

	const module = "github.com/proxy-await/proxy-await/"
	// This binary is the tests' too: their packages initialise what they
	// like, and so do proxy-awaitctl's (ctl/...), which the scenarios run
	// and no pod does: the entrypoint links none of them
	// (TestEntrypointLinksNoTooling).
	tests := map[string]bool{"lifecycle_test": true, "internal/testchild": true,
		"internal/testutil": true, "internal/fakeproxy": true, "internal/scripttest": true}
	var ours []string
	for line := range strings.Lines(stderr.String()) {
		// "init PKG @0.53 ms, 0.034 ms clock, 192 bytes, 2 allocs"
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" || !strings.HasPrefix(f[1], module) {
			continue
		}
		if pkg := strings.TrimPrefix(f[1], module); !tests[pkg] && pkg != "ctl" && !strings.HasPrefix(pkg, "ctl/") {
			ours = append(ours, strings.TrimSpace(line))
		}
	}
	require.Contains(t, stderr.String(), "init runtime", "GODEBUG=inittrace=1 printed nothing")
	assert.Empty(t, ours, "package-level work at every start: make it static data, or do it on first use")
}
