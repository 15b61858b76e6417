package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo stands in for the go command under scripts/fuzz.sh: one package with
// one target, FuzzA, whose fuzzing run ends as FAKE_FUZZ says.
const fakeGo = `#!/bin/sh
case "$*" in
"list ./...") echo example.com/p ;;
"list -f {{.Dir}} example.com/p") echo "$FAKE_DIR" ;;
"test -list ^Fuzz example.com/p") printf 'FuzzA\nok  \texample.com/p\t0.01s\n' ;;
"test -count=1 -run ^FuzzA$ example.com/p") echo ok ;;
"test -run ^$ -fuzz ^FuzzA$ -fuzztime 2s -fuzzminimizetime 5s example.com/p")
	case "$FAKE_FUZZ" in
	pass) echo PASS ;;
	race|crash)
		printf 'fuzz: elapsed: 2s, execs: 10 (0/sec), new interesting: 0 (total: 3)\n--- FAIL: FuzzA (2.01s)\n    context deadline exceeded\nFAIL\nexit status 1\n'
		if [ "$FAKE_FUZZ" = crash ]; then mkdir -p "$FAKE_DIR/testdata/fuzz/FuzzA" && : >"$FAKE_DIR/testdata/fuzz/FuzzA/0123"; fi
		exit 1 ;;
	found)
		printf -- '--- FAIL: FuzzA (0.50s)\n    --- FAIL: FuzzA (0.00s)\n        p_test.go:9: bad\n\n    Failing input written to testdata/fuzz/FuzzA/0123\nFAIL\n'
		mkdir -p "$FAKE_DIR/testdata/fuzz/FuzzA" && : >"$FAKE_DIR/testdata/fuzz/FuzzA/0123"
		exit 1 ;;
	other) printf -- '--- FAIL: FuzzA (2.01s)\n    fuzzing process hung or terminated unexpectedly: exit status 2\nFAIL\n'; exit 1 ;;
	esac ;;
*) echo "fake go: unexpected: $*" >&2; exit 9 ;;
esac
`

// TestMain runs the tests from the repository's root, where the paths they
// name start.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestFuzzScriptDeadlineRace checks how scripts/fuzz.sh judges a fuzzing run
// that fails: Go's own -fuzztime deadline race (no input written) passes with
// a line that says so; anything else, or the same words with an input written,
// fails the run.
func TestFuzzScriptDeadlineRace(t *testing.T) {
	for _, tc := range []struct {
		fuzz     string
		wantFail bool
	}{
		{"pass", false},
		{"race", false},
		{"crash", true},
		{"found", true},
		{"other", true},
	} {
		t.Run(tc.fuzz, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), []byte(fakeGo), 0o755))
			cmd := exec.Command("bash", "scripts/fuzz.sh")
			cmd.Env = append(os.Environ(), "GO="+filepath.Join(dir, "go"), "FUZZTIME=2s",
				"FAKE_DIR="+dir, "FAKE_FUZZ="+tc.fuzz)
			out, err := cmd.CombinedOutput()
			if !tc.wantFail {
				require.NoError(t, err, "%s", out)
				assert.Contains(t, string(out), "fuzz: every target passed")
				if tc.fuzz == "race" {
					assert.Contains(t, string(out), "fuzz: example.com/p FuzzA: no failing input; the failure is Go's own -fuzztime deadline (go.dev/issue/75804)\n")
				}
				return
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out)
			assert.Equal(t, 1, exit.ExitCode(), "%s", out)
			assert.Contains(t, string(out), "fuzz: failed: example.com/p FuzzA\n")
			assert.NotContains(t, string(out), "go.dev/issue/75804")
		})
	}
}
