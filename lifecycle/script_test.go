package lifecycle_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/proxy-await/proxy-await/internal/fakeproxy"
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
//	                        $PROXY_READY and $PROXY_LIFECYCLE its other
//	                        listeners
//	cmplog FILE WANT        FILE (or stdout, stderr) is WANT, line for
//	                        line, as cmpenv compares, once what differs
//	                        from run to run is * in FILE: the value of
//	                        time, elapsed, elapsed_ms, child_pid and
//	                        remote, as key=VALUE in a text line and as
//	                        "key":VALUE in a JSON one (requests.log's
//	                        too); so a scenario asserts every log line
//	                        and their order, not a line somewhere
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
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"proxy":  cmdProxy,
			"cmplog": cmdCmplog,
		},
	})
}

// cmdExits is the exits command: exits N PROG [ARG...].
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	var exit *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, not %d", args[1], got, want)
	}
}

// cmdProxy is the proxy command: start the fake proxy in the background.
func cmdProxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: proxy [FLAG...]")
	}
	work := ts.Getenv("WORK")
	args = append([]string{"-log", filepath.Join(work, "requests.log"),
		"-addr", "127.0.0.1:0", "-ready-addr", "127.0.0.1:0", "-lifecycle-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command("fakeproxy", args...)
	cmd.Stderr = ts.Stderr()
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addrs, err := fakeproxy.Listening(stdout)
	ts.Check(err)
	for name, v := range map[string]string{"admin": "PROXY", "ready": "PROXY_READY", "lifecycle": "PROXY_LIFECYCLE"} {
		if addr, ok := addrs[name]; ok {
			ts.Setenv(v, addr)
		}
	}
	if _, port, ok := strings.Cut(addrs["admin"], ":"); ok {
		ts.Setenv("PROXY_PORT", port)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
}

// varying is what cmplog replaces with *: the value of a key whose value
// differs from run to run, in a text line (key=VALUE, up to a space, or
// quoted) and in a JSON line ("key":VALUE, a string or a number).
var varying = regexp.MustCompile(`\b(time|elapsed|elapsed_ms|child_pid|remote)=("(?:[^"\\]|\\.)*"|[^ \n]*)` +
	`|"(time|elapsed|elapsed_ms|child_pid|remote)":("(?:[^"\\]|\\.)*"|[0-9.]+)`)

// cmdCmplog is the cmplog command: cmplog FILE WANT.
func cmdCmplog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmplog FILE WANT")
	}
	got := varying.ReplaceAllStringFunc(ts.ReadFile(args[0]), func(m string) string {
		sub := varying.FindStringSubmatch(m)
		if sub[1] != "" {
			return sub[1] + "=*"
		}
		if strings.HasPrefix(sub[4], `"`) {
			return `"` + sub[3] + `":"*"`
		}
		return `"` + sub[3] + `":*`
	})
	want := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	if got != want {
		ts.Logf("%s", diff.Diff(args[0], []byte(got), args[1], []byte(want)))
		ts.Fatalf("%s and %s differ", args[0], args[1])
	}
}
