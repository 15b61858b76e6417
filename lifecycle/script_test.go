package lifecycle_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/proxy-await/proxy-await/internal/scripttest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command-line scenarios in testdata/script, one file
// a scenario, named after it (go test -run TestScripts/usage-boolean-trap):
// what a user types and what proxy-await answers, as testscript files in
// the manner of Go's own cmd tests. A proxy that turns ready while
// proxy-await waits is proxy -ready-after-probes N, which counts probes,
// not time. Scenarios that need a signal at a moment, terminals, PID 1 or
// servers the fake proxy cannot play are the Go tests beside this one.
//
// Besides testscript's own commands (exec, stdout, stderr, cmp, exists, ...):
//
//	exits N PROG [ARG...]   run PROG, which must exit with N; its output
//	                        is what stdout and stderr match next
//	proxy [FLAG...]         start fakeproxy in the background with
//	                        FLAGs, its request log in $WORK/requests.log
//	                        (grep -count=N '"method":"GET","path":"/ready"'
//	                        requests.log counts requests); $PROXY is its
//	                        admin address, $PROXY_PORT that address's port,
//	                        $PROXY_READY its readiness listener where the
//	                        proxy serves readiness on a port of its own
//	cmplog FILE WANT        FILE (or stdout, stderr) is WANT, line for
//	                        line, as cmpenv compares, once what differs
//	                        from run to run is * in FILE
//	                        (testutil.NormalizeLog: times, PIDs,
//	                        durations, addresses, as key=VALUE in a text
//	                        line and as "key":VALUE in a JSON one,
//	                        requests.log's too); so a scenario asserts
//	                        every log line and their order, not a line
//	                        somewhere
//
// proxy-await, linkerd-await, scuttle and fakeproxy are on PATH: this test
// binary, run under each name (TestMain); $PROXY_AWAIT is proxy-await's
// path. The environment holds nothing of the developer's.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// A hang guard: a script that hangs fails instead of holding the
		// whole run until go test's own timeout.
		Deadline: time.Now().Add(5 * time.Minute),
		Setup: func(env *testscript.Env) error {
			path, err := exec.LookPath("proxy-await")
			env.Setenv("PROXY_AWAIT", path)
			return err
		},
		Cmds: scripttest.Commands(),
	})
}
