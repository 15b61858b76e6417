// Package scripttest holds the commands that the testscript scenarios of
// proxy-await and proxy-awaitctl share, beside testscript's own: exits,
// proxy and cmplog (lifecycle's TestScripts says what each does).
package scripttest

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/proxy-await/proxy-await/internal/fakeproxy"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// Commands are the commands, by name, for testscript.Params.Cmds.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exits":  exits,
		"proxy":  proxy,
		"cmplog": cmplog,
	}
}

// exits is the exits command: exits N PROG [ARG...].
func exits(ts *testscript.TestScript, neg bool, args []string) {
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

// proxy is the proxy command: start the fake proxy in the background.
func proxy(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: proxy [FLAG...]")
	}
	work := ts.Getenv("WORK")
	args = append([]string{"-log", filepath.Join(work, "requests.log"),
		"-addr", "127.0.0.1:0", "-ready-addr", "127.0.0.1:0"}, args...)
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
	for name, v := range map[string]string{"admin": "PROXY", "ready": "PROXY_READY"} {
		if addr, ok := addrs[name]; ok {
			ts.Setenv(v, addr)
		}
	}
	if _, port, ok := strings.Cut(addrs["admin"], ":"); ok {
		ts.Setenv("PROXY_PORT", port)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
}

// cmplog is the cmplog command: cmplog FILE WANT.
func cmplog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmplog FILE WANT")
	}
	got := testutil.NormalizeLog(ts.ReadFile(args[0]))
	want := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	if got != want {
		ts.Logf("%s", diff.Diff(args[0], []byte(got), args[1], []byte(want)))
		ts.Fatalf("%s and %s differ", args[0], args[1])
	}
}
