package main

import (
	"bufio"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/fakeproxy"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/readiness"
	"github.com/proxy-await/proxy-await/shutdown"
	"github.com/proxy-await/proxy-await/tests/process"
	"github.com/proxy-await/proxy-await/wrapper"
)

// commands are the programs this test binary is, by the name it runs
// under: proxy-await, under its own name and the drop-in names it answers
// to, and the fake proxy. TestMain puts each on PATH (testscript.Main), so
// that the tests run proxy-await's own main, with -race and -cover as the
// tests have them, and build nothing.
var commands = map[string]func(){
	"proxy-await":   main,
	"linkerd-await": main,
	"scuttle":       main,
	"fakeproxy":     fakeproxy.Main,
}

// TestMain runs a command when this binary is started under its name; a
// child scenario when testchild's variable names one; else the tests. The
// name comes first: proxy-await passes the variable on to its child.
func TestMain(m *testing.M) {
	if _, ok := commands[filepath.Base(os.Args[0])]; !ok {
		testchild.Main()
		testchild.NoRaceExitSleep()
		testchild.DetachTerminal()
		testchild.UnignoreSignals()
	}
	testscript.Main(m, commands)
}

// TestProcess runs the process-level tests of tests/process, with this
// binary as proxy-await, the fake proxy and the children: signals,
// terminals, PID 1, the drain, HAProxy, the sidecars, faults.
func TestProcess(t *testing.T) {
	process.Run(t)
}

// A test in tests/process is a method of process.Tests: a plain func
// TestX there compiles, and no test binary ever runs it.
func TestProcessTestsAreMethods(t *testing.T) {
	files, err := filepath.Glob("tests/process/*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				t.Errorf("%s: func %s runs nowhere: write it as func (Tests) %s(t *testing.T)", f, fn.Name.Name, fn.Name.Name)
			}
		}
	}
}

// TestScripts runs the command-line scenarios in testdata/script, one file
// a scenario, named after it (go test -run TestScripts/usage-boolean-trap):
// what a user types and what proxy-await answers, as testscript files in
// the manner of Go's own cmd tests. A proxy that turns ready while
// proxy-await waits is proxy -ready-after-probes N, which counts probes,
// not time. Scenarios that need a signal at a moment, terminals, PID 1 or
// servers the fake proxy cannot play are Go tests in tests/process
// (TestProcess).
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

// passMark starts and ends every password the fuzz target tries: nothing
// else it prints contains it, so a match is never innocent, and a part of a
// password shown from either end shows it.
const passMark = "Qz7"

// secretSeeds are passwords with what confuses a reader of URLs: commas (a
// list's separator), "@" and ":" (userinfo's), percent-escapes valid and
// not, the characters that end an authority, and a comma followed by the
// start of another URL.
var secretSeeds = []string{
	"secret", "pa,ss", "p@ss", "p:ss", "p%40ss", "p%2C,ss", "p%zzss", "p%4", "pa/ss", "pa?ss", "pa#ss",
	",http://127.0.0.1:1/ready", "a,,b", "p ss", "1234", "p@127.0.0.1:1/x,", "p=ss",
}

// endpoints are loopback servers that fail in each way a readiness probe or
// a shutdown POST can: refused, 503 (retried until the budget), 404, 404
// "shutdown endpoint is not enabled", no answer at all, and 200.
type endpoints struct {
	refused, unavailable, notFound, notEnabled, hang, ok string
}

func startEndpoints(t testing.TB) endpoints {
	status := func(code int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	hang, _ := testutil.RawServer(t, func(conn net.Conn, r *bufio.Reader) {
		for testutil.ReadRequest(r) != nil { // never answered; ends when the client leaves
		}
	})
	return endpoints{
		refused:     testutil.RefusingAddr(t),
		unavailable: status(http.StatusServiceUnavailable, "not ready\n"),
		notFound:    status(http.StatusNotFound, "not found\n"),
		notEnabled:  status(http.StatusNotFound, "shutdown endpoint is not enabled\n"),
		hang:        hang,
		ok:          status(http.StatusOK, "ok\n"),
	}
}

// FuzzPasswordNeverPrinted puts URLs whose password the fuzzer varies
// through every path of proxy-await that prints a URL, and finds the
// password nowhere in what they print, raw or percent-decoded: usage errors
// from flags, environment variables and scuttle's variables, and from words
// that hold a URL (a long flag typed with one dash), in text and JSON; and, when the URLs are accepted, the readiness wait and the
// shutdown against endpoints that refuse, answer 503, 404, not at all or
// 200, with debug logging, in text or JSON.
func FuzzPasswordNeverPrinted(f *testing.F) {
	for i, s := range secretSeeds {
		f.Add(s, uint8(i))
	}
	ep := startEndpoints(f)
	f.Fuzz(func(t *testing.T, fuzzed string, shape uint8) {
		pass := passMark + fuzzed + passMark
		withPass := func(addr, path string) string {
			switch shape % 3 {
			case 1:
				return "http://user:" + pass + "@" + addr + path + "?a=1,2"
			case 2:
				return "HTTP://user:" + pass + "@" + addr + path
			}
			return "http://user:" + pass + "@" + addr + path
		}
		format := []string{"text", "json"}[shape/3%2]
		var out testutil.Buffer

		// Usage errors: URLs that are wrong whatever the password, and
		// the lists of URLs below, which a password may make wrong.
		var ready, quit []string
		for _, addr := range []string{ep.refused, ep.unavailable, ep.notFound, ep.hang, ep.ok} {
			ready = append(ready, withPass(addr, "/ready"))
		}
		for _, addr := range []string{ep.refused, ep.unavailable, ep.notFound, ep.notEnabled, ep.hang, ep.ok} {
			quit = append(quit, withPass(addr, "/shutdown"))
		}
		bad := []string{withPass("10.0.0.1:1", "/q"), withPass("127.0.0.1:99999", "/q"), "ftp" + withPass("127.0.0.1:1", "/q")[4:]}
		for _, f := range []string{"text", "json"} {
			for _, u := range append(bad, ready[0]) {
				usageError(t, &out, "proxy-await", []string{"--log-format", f, "--shutdown-url", u, "--", "true"}, nil)
				usageError(t, &out, "proxy-await", []string{"--", "true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f,
					"PROXY_AWAIT_SHUTDOWN_URL": ready[1] + "," + u, "PROXY_AWAIT_READY_URL": u + "," + ready[2]})
				for _, v := range []string{"ENVOY_ADMIN_API", "ISTIO_QUIT_API", "GENERIC_QUIT_ENDPOINTS"} {
					usageError(t, &out, "scuttle", []string{"--", "true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f, v: u})
				}
				// Words that hold a URL: a long flag typed with one dash,
				// which pflag reads as short flags, short flags run into
				// the URL, an unknown flag, a flag or variable that takes
				// no URL, and a command named in a hint.
				for _, w := range []string{"-shutdown-urls=" + u, "-ready_url=" + u, "-url=" + u, "-x=" + u, "-Sx" + u,
					"--nosuch=" + u, "-S=" + u, "--proxy=" + u, "-r" + u} {
					usageError(t, &out, "proxy-await", []string{"--log-format", f, w, "--", "true"}, nil)
				}
				usageError(t, &out, "proxy-await", []string{"--install", "/pa", u}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f})
				usageError(t, &out, "proxy-await", []string{"true"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": f, "PROXY_AWAIT_TIMEOUT": u})
			}
		}

		// The endpoints that fail until the budget runs out get a short
		// one; the others answer at once, and the budget only guards a
		// hang.
		args := []string{"-v", "--log-format", format, "--proxy", "cloudsql", "-S", "--timeout", "30ms", "--timeout-fatal=false",
			"--probe-timeout", "10ms", "--shutdown-timeout", "60ms"}
		for _, u := range ready {
			args = append(args, "--ready-url", u)
		}
		for _, u := range quit[:2] { // refused, 503
			args = append(args, "--shutdown-url", u)
		}
		args = append(args, "--shutdown-url", quit[4]) // no answer
		c, err := config.Parse("proxy-await", append(args, "--", "true"), testutil.Getenv(nil))
		if err == nil {
			answering := *c
			answering.ShutdownURLs, answering.ShutdownTimeout = []string{quit[2], quit[3], quit[5]}, time.Minute
			lifecycle(t, &out, c, &answering)
		}
		noPassword(t, out.String(), pass)
	})
}

// usageError parses args and env as proxy-await does when invoked as name
// and, if they are refused, prints the usage error to out.
func usageError(t *testing.T, out *testutil.Buffer, name string, args []string, env map[string]string) {
	_, err := config.Parse(name, args, testutil.Getenv(env))
	var u *config.UsageError
	if errors.As(err, &u) {
		reportUsage(out, u)
	} else {
		require.NoError(t, err)
	}
}

// lifecycle runs what prints URLs once they are accepted: the readiness
// wait (its start, each probe's failure, its timeout) and the shutdown
// (every outcome), as run does, with c; a shutdown with answering, whose
// endpoints answer at once; and beside them the wait's progress lines,
// which come after seconds in a run, and a shutdown whose proxy has gone,
// which needs a proxy that answered first. The lines that come whatever the
// timing are all there: the paths did run.
func lifecycle(t *testing.T, out *testutil.Buffer, c, answering *config.Config) {
	log := logging.New(out, c.LogFormat, slog.LevelDebug)
	var wg sync.WaitGroup
	wg.Go(func() {
		code, start, answered := awaitProxy(c, log, new(wrapper.Supervisor))
		assert.Equal(t, 0, code)
		assert.True(t, start)
		shutdownProxy(c, log, answered)
		shutdownProxy(answering, log, answered)
	})
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, _ = readiness.Await(ctx, readiness.Options{URLs: c.ReadyURLs, MaxInterval: 5 * time.Millisecond,
			ProbeTimeout: 10 * time.Millisecond, ProgressEvery: 5 * time.Millisecond, RefusedHintAfter: 5 * time.Millisecond, Logger: log})
	})
	wg.Go(func() {
		gone := c.ShutdownURLs[0] // refused
		_ = shutdown.Post(context.Background(), shutdown.Options{Targets: shutdown.Targets(gone),
			Answered: []string{gone}, Timeout: time.Minute, Logger: log})
	})
	wg.Wait()
	text := out.String()
	for _, line := range []string{"waiting for the proxy", "proxy not ready: starting the command anyway",
		"proxy did not shut down within", "proxy shutdown failed", "the proxy's shutdown endpoint is not enabled",
		"proxy shutdown requested", "proxy already gone"} {
		assert.Contains(t, text, line)
	}
}

// noPassword fails if text shows any of pass, raw or percent-decoded.
func noPassword(t *testing.T, text, pass string) {
	t.Helper()
	forms := []string{passMark, pass}
	if dec, err := url.PathUnescape(pass); err == nil {
		forms = append(forms, dec)
	}
	for _, form := range forms {
		if i := strings.Index(text, form); i >= 0 {
			t.Fatalf("the password %q is printed as %q:\n%s", pass, form, text)
		}
	}
}
