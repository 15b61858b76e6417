package main

// --drain-quiet against servers it cannot see in /proc, with real
// privileges: proxy-await as root without CAP_SYS_PTRACE (Kubernetes'
// default capabilities lack it), a server running as nobody. Each runs in a
// network namespace of its own, as a pod does, so that no other listener of
// this machine is in the watch's view.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// drainAddr is where the servers listen, in their network namespace. They
// run as nobody.
const drainAddr = "127.0.0.1:8080"

// drained is proxy-await in a network namespace of its own, and a client of
// that namespace.
type drained struct {
	*proc
	client *http.Client
	url    string
}

// startDrained runs `proxy-await ARGS -- COMMAND...` in a new network
// namespace with loopback up, without CAP_SYS_PTRACE, its child playing
// scenario (run from a copy of the test binary that any user may run), and
// waits until the child listens on drainAddr. In command, "@" stands for
// that copy.
func startDrained(t *testing.T, scenario string, args []string, command ...string) *drained {
	t.Helper()
	_, err := exec.LookPath("ip")
	require.NoError(t, err, "ip is needed: apt-get install iproute2")
	self := publicSelf(t)
	for i, a := range command {
		if a == "@" {
			command[i] = self
		}
	}
	argv := []string{"--net", "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		"setpriv", "--bounding-set", "-sys_ptrace", "--", proxyAwaitBin, "--proxy", "none"}
	argv = append(append(append(argv, args...), "--"), command...)
	cmd := exec.Command("unshare", argv...)
	cmd.Env = []string{testchild.Env + "=" + scenario}
	p := startCmd(t, cmd, nil)
	require.Equal(t, "listening "+drainAddr, p.next())
	require.Equal(t, "ready", p.next())
	// unshare, sh and setpriv each exec the next: the PID is proxy-await's.
	d := &drained{proc: p, url: "http://" + drainAddr + "/"}
	d.client = &http.Client{Transport: &http.Transport{DialContext: testutil.NetnsDialer(t, cmd.Process.Pid)}}
	return d
}

var public struct {
	once sync.Once
	path string
	err  error
}

// publicSelf is a copy of the test binary that user nobody may run, beside
// proxy-await's build.
func publicSelf(t *testing.T) string {
	public.once.Do(func() {
		dir := filepath.Dir(proxyAwaitBin)
		public.path = filepath.Join(dir, "testchild")
		if public.err = os.Chmod(dir, 0o755); public.err == nil {
			copyFile(t, testchild.Self(), public.path)
		}
	})
	require.NoError(t, public.err)
	return public.path
}

// requests sends GET / every testutil.RequestGap until dur has passed since
// the first (one request with dur = 0), and returns when the last one was
// sent.
func (d *drained) requests(dur time.Duration) (sent time.Time) {
	d.t.Helper()
	sent, _ = testutil.Requests(d.t, d.client, d.url, dur, testutil.RequestGap, 1)
	return sent
}

// signalAt reads the child's next line, "signal NAME UNIXNANO", and returns
// the time.
func (d *drained) signalAt(name string) time.Time {
	d.t.Helper()
	var ns int64
	line := d.next()
	_, err := fmt.Sscanf(line, "signal "+name+" %d", &ns)
	require.NoError(d.t, err, "next line %q", line)
	return time.Unix(0, ns)
}

// termDuringRequests: a first request opens the kept-alive connection, then
// the pod's SIGTERM, then requests for testutil.BusyFor once the watch is
// armed. The child's SIGTERM must come testutil.DrainQuiet after the last
// request, not sooner, and not much later.
func (d *drained) termDuringRequests() {
	d.t.Helper()
	d.requests(0)
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")
	sent := d.requests(testutil.BusyFor)
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(d.t, got.Sub(sent), testutil.DrainQuiet, "SIGTERM only --drain-quiet after the last request")
	assert.Less(d.t, got.Sub(sent), testutil.DrainQuiet+testutil.LateBound, "SIGTERM soon after the quiet period")
	assert.Equal(d.t, 0, d.wait())
	assert.NotContains(d.t, d.stderr.String(), "warning")
}

var drainFlags = []string{"--term-delay", "1m", "--drain-quiet", testutil.DrainQuiet.String()}

// A server started through setpriv (or gosu, su-exec) as another user hides
// its descriptors from root without CAP_SYS_PTRACE. Its listener, created by
// that user, is still its own to the watch.
func TestDrainServerOfAnotherUser(t *testing.T) {
	d := startDrained(t, "http", drainFlags,
		"setpriv", "--reuid="+nobody, "--regid="+nobody, "--clear-groups", "--", "@", drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), "listeners="+drainAddr)
}

// A master that holds the listener and a worker of another user that serves
// on it, as nginx runs: the worker hides its descriptors, the master does
// not.
func TestDrainWorkerOfAnotherUser(t *testing.T) {
	d := startDrained(t, "prefork", drainFlags, "@", nobody, drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), "listeners="+drainAddr)
}

// A server that binds as root and then runs as nobody: nothing readable
// says which listener is its own. The watch never guesses quiet: one
// warning, and the whole --term-delay.
func TestDrainCannotSeeHoldsTheWholeDelay(t *testing.T) {
	const delay = 3 * time.Second
	d := startDrained(t, "http-as-user", []string{"--term-delay", delay.String(), "--drain-quiet", "200ms"},
		"@", nobody, drainAddr)
	d.requests(0)
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay")
	assert.Equal(t, 0, d.wait())
	log := d.stderr.String()
	const warning = "cannot tell which listening sockets are below proxy-await: holding the stop signal for the whole --term-delay"
	assert.Equal(t, 1, strings.Count(log, "warning:"), "one warning:\n%s", log)
	assert.Regexp(t, warning+` pid=\d+ uid=`+nobody+` error=".*: permission denied" \(hint: set --drain-ports`, log)
}

// --drain-ports watches the ports it names, whoever listens there: the
// server of the test above, which the watch cannot see.
func TestDrainPortsWatchWhatCannotBeSeen(t *testing.T) {
	d := startDrained(t, "http-as-user", append(drainFlags, "--drain-ports", "8080"), "@", nobody, drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), "ports=8080")
}

// A listener the watch can see (a metrics endpoint) does not make up for
// one it cannot: the server that hides its descriptors may be the one with
// traffic.
func TestDrainVisibleMetricsPortDoesNotHideTheServer(t *testing.T) {
	const delay = 3 * time.Second
	d := startDrained(t, "with-metrics", []string{"--term-delay", delay.String(), "--drain-quiet", "200ms"},
		"@", "127.0.0.1:9090", "http-as-user", nobody, drainAddr)
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay")
	assert.Equal(t, 0, d.wait())
	assert.Equal(t, 1, strings.Count(d.stderr.String(), "cannot tell which listening sockets are below proxy-await"))
}

// A server the watch cannot see that turns up while the stop signal is held
// (a script starts it after the watch began) pauses the watch: whatever
// traffic it takes is invisible, so the hold lasts the whole --term-delay,
// though the server the watch follows has fallen quiet.
func TestDrainPausesWhenAHiddenServerTurnsUp(t *testing.T) {
	const delay = 8 * time.Second
	const hiddenAddr = "127.0.0.1:8081"
	quiet := 2 * testutil.DrainQuiet // room for the hidden server's start on a loaded machine
	d := startDrained(t, "hidden-later", []string{"--term-delay", delay.String(), "--drain-quiet", quiet.String()},
		"@", nobody, drainAddr, hiddenAddr)
	d.requests(0)
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")

	// Requests keep the followed server busy, so that the quiet period
	// cannot end, until the hidden server listens. The watch looks at every
	// process again before it says quiet, and finds the hidden one then
	// at the latest.
	type requested struct {
		last time.Time // when the last request was answered
		err  error
	}
	stop, stopped := make(chan struct{}), make(chan requested, 1)
	var once sync.Once
	stopRequests := func() { once.Do(func() { close(stop) }) }
	t.Cleanup(stopRequests)
	go func() {
		r := requested{last: time.Now()}
		for r.err == nil {
			select {
			case <-stop:
				stopped <- r
				return
			case <-time.After(testutil.RequestGap):
			}
			if r.err = testutil.Round(d.client, d.url, 1); r.err == nil {
				r.last = time.Now()
			}
		}
		stopped <- r
	}()
	_, err := io.WriteString(d.stdin, "hidden\n")
	require.NoError(t, err)
	require.Equal(t, "listening "+hiddenAddr, d.next())
	require.Equal(t, "ready", d.next())
	stopRequests()
	r := <-stopped
	require.NoError(t, r.err, "the followed server must keep serving while the stop signal is held")
	last := r.last

	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay, not --drain-quiet after the last request (%s after the stop signal)", last.Sub(sent))
	assert.Equal(t, 0, d.wait())
	log := d.stderr.String()
	assert.Regexp(t, `(?s)holding the stop signal until the listeners have no traffic.*\n`+
		`[^\n]*the watch pauses: it cannot tell quiet until it sees every listener again[^\n]*\n`+
		`[^\n]*warning: cannot tell which listening sockets are below proxy-await: holding the stop signal for the whole --term-delay pid=\d+ uid=`+nobody, log)
	assert.Equal(t, 1, strings.Count(log, "warning:"), "one warning:\n%s", log)
}
