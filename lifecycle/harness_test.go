package lifecycle_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// proxyAwaitBin is proxy-await's path: this test binary under that name,
// which TestMain puts on PATH.
var proxyAwaitBin string

// waitLimit bounds every wait of the harness, so a broken build fails instead
// of hanging; it is never how long a test expects something to take.
const waitLimit = testutil.WaitLimit

// steadyProbe, with a long value, is for tests that count probes: a probe
// that a loaded machine slows past the default --probe-timeout of 1 s would
// be sent again, and counted twice.
const steadyProbe = "--probe-timeout"

// nobody is the uid and gid the tests run a process as where another user
// must, as an application container that runs as non-root would.
const nobody = "65534"

// proc is a running proxy-await, its stdout read line by line.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *testutil.Lines
	stderr *testutil.Buffer
	done   chan struct{} // closed once cmd has exited and code is set
	code   int

	restLines []string // stdout lines read by wait
}

// child returns the arguments that run a testchild scenario as the command.
func child(scenario string, args ...string) []string {
	return append([]string{"--", testchild.Self(), "@" + scenario}, args...)
}

// startPA runs proxy-await with args, in cleanEnv's environment plus env.
// An argument "@SCENARIO" right after the test binary's path selects the
// scenario the child plays.
func startPA(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startBinary(t, proxyAwaitBin, env, args...)
}

// startBinary is startPA for proxy-await under another path, such as a link
// named linkerd-await.
func startBinary(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return startCmd(t, cmd, nil)
}

// startCmd runs cmd, in cleanEnv's environment plus cmd.Env, and reads its stdout line by line. An "@SCENARIO" argument
// right after the test binary's path selects the scenario the child plays.
// At cleanup, if cmd is still running, stop ends it (nil: SIGKILL to cmd).
func startCmd(t *testing.T, cmd *exec.Cmd, stop func()) *proc {
	t.Helper()
	cmd.Env = append(cleanEnv(), cmd.Env...)
	for i, a := range cmd.Args {
		if strings.HasPrefix(a, "@") && i > 0 && cmd.Args[i-1] == testchild.Self() {
			cmd.Env = append(cmd.Env, testchild.Env+"="+a[1:])
			cmd.Args = append(cmd.Args[:i:i], cmd.Args[i+1:]...)
			break
		}
	}
	p := &proc{t: t, cmd: cmd, stderr: &testutil.Buffer{}, done: make(chan struct{})}
	if cmd.Stderr == nil { // else the test's own, such as a pipe with no reader
		cmd.Stderr = p.stderr
	}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	if cmd.Stdin == nil { // else the test's own, such as a terminal
		p.stdin, err = cmd.StdinPipe()
		require.NoError(t, err)
	}
	// Wait closes stdout, so it waits until the last line has been read.
	eof := make(chan struct{})
	p.lines = testutil.NewLines(readUntilEOF(stdout, eof), waitLimit,
		func() string { return filepath.Base(cmd.Path) + " stderr:\n" + p.stderr.String() })
	require.NoError(t, cmd.Start())
	go func() {
		<-eof
		p.code = exitCode(cmd.Wait())
		close(p.done)
	}()
	if stop == nil {
		stop = func() { _ = cmd.Process.Kill() }
	}
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			stop()
			p.lines.Discard() // so that the reader reaches EOF, and Wait
			select {
			case <-p.done:
			case <-time.After(waitLimit):
				t.Errorf("%s still running %s after it was stopped", cmd.Path, waitLimit)
			}
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(cmd.Path), p.stderr.String())
		}
	})
	return p
}

// cleanEnv is our environment without the variables proxy-await reads
// (its own, linkerd-await's and scuttle's) or the scenario's, so that a
// developer's settings cannot leak into the tests.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, config.EnvPrefix) || strings.HasPrefix(name, "LINKERD_") ||
			scuttleVars[name] || name == testchild.Env {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// scuttleVars are the variables proxy-await reads when run as scuttle.
var scuttleVars = map[string]bool{
	"ENVOY_ADMIN_API": true, "ISTIO_QUIT_API": true, "GENERIC_QUIT_ENDPOINTS": true,
	"NEVER_KILL_ISTIO": true, "NEVER_KILL_ISTIO_ON_FAILURE": true, "START_WITHOUT_ENVOY": true,
	"WAIT_FOR_ENVOY_TIMEOUT": true, "QUIT_WITHOUT_ENVOY_TIMEOUT": true, "SCUTTLE_LOGGING": true,
	"QUIT_REQUEST_TIMEOUT": true, "GENERIC_QUIT_ONLY": true,
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return -1
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// expect returns proxy-await's next stdout line, which must start with
// prefix: not a later one, so that an unexpected line fails the test.
func (p *proc) expect(prefix string) string {
	p.t.Helper()
	return p.lines.Expect(p.t, prefix)
}

// next returns the next stdout line, whatever it is.
func (p *proc) next() string {
	p.t.Helper()
	return p.lines.Next(p.t, "the next line")
}

// silent fails the test if proxy-await's stdout already has a line: the
// child, which prints as its first act, must not have started.
func (p *proc) silent(why string) {
	p.t.Helper()
	p.lines.Silent(p.t, why)
}

// wait reads what is left of stdout into restLines, until it closes, and
// returns proxy-await's exit code.
func (p *proc) wait() int {
	p.t.Helper()
	out := p.lines.Rest(p.t)
	select {
	case <-p.done:
	case <-time.After(waitLimit):
		p.t.Fatalf("proxy-await still running after %s; stderr:\n%s", waitLimit, p.stderr.String())
	}
	p.restLines = out
	return p.code
}

// waitLog waits until proxy-await's stderr has want: a log event.
func (p *proc) waitLog(want string) {
	p.t.Helper()
	p.stderr.WaitFor(p.t, want, waitLimit)
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig))
}

// readUntilEOF is r, closing eof once r has returned its last byte.
func readUntilEOF(r io.Reader, eof chan struct{}) io.Reader {
	return &eofReader{r: r, eof: eof}
}

type eofReader struct {
	r   io.Reader
	eof chan struct{}
}

func (e *eofReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil {
		select {
		case <-e.eof:
		default:
			close(e.eof)
		}
	}
	return n, err
}
