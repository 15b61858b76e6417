package main

import (
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/proxy-await/proxy-await/internal/fakeproxy"
)

// TestScripts runs the command-line scenarios in testdata/script, one file
// a scenario, named after it (go test -run TestScripts/usage-boolean-trap):
// what a user types and what proxy-await answers, as testscript files in
// the manner of Go's own cmd tests. Scenarios that need signals, terminals
// or a proxy that changes its answers over time are Go tests beside this
// one.
//
// Besides testscript's own commands (exec, stdout, stderr, cmp, exists, ...):
//
//	exits N PROG [ARG...]   run PROG, which must exit with N; its output
//	                        is what stdout and stderr match next
//	proxy [FLAG...]         start testdata/fakeproxy in the background with
//	                        FLAGs, its request log in $WORK/requests.log;
//	                        $PROXY is its admin address, $PROXY_READY and
//	                        $PROXY_LIFECYCLE its other listeners
//
// proxy-await, linkerd-await, scuttle and fakeproxy are on PATH: this test
// binary, run under each name (TestMain). The environment holds nothing of
// the developer's.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// A hang guard: a script that hangs fails instead of holding the
		// whole run until go test's own timeout.
		Deadline: time.Now().Add(5 * time.Minute),
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"proxy": cmdProxy,
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
	cmd := exec.Command(fakeProxyBin, args...)
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
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
}
