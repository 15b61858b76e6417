package lifecycle_test

// --drain-quiet against servers it cannot see in /proc, with real
// privileges: proxy-await as root without CAP_SYS_PTRACE (Kubernetes'
// default capabilities lack it), a server running as nobody. Each runs in a
// network namespace of its own, as a pod does, so that no other listener of
// this machine is in the watch's view.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
// waits until the child listens on drainAddr, and on any other address it
// names after it, and is ready. In command, "@" stands for that copy.
func startDrained(t *testing.T, scenario string, args []string, command ...string) *drained {
	t.Helper()
	return startDrainedScript(t, `ip link set lo up && exec "$@"`, scenario, args, command...)
}

var public struct {
	once      sync.Once
	dir, path string
	err       error
}

// publicSelf is a copy of the test binary that user nobody may run, in a
// directory of its own that every user can search; TestMain removes it
// after the last test.
func publicSelf(t *testing.T) string {
	public.once.Do(func() {
		if public.dir, public.err = os.MkdirTemp("", "proxy-await-public"); public.err != nil {
			return
		}
		if public.err = os.Chmod(public.dir, 0o755); public.err == nil {
			public.path = filepath.Join(public.dir, "testchild")
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

// logFrom is proxy-await's log from the first line that starts with
// first, one line an element, without the lines of the periodic
// drain_waiting event (how many there are depends on the machine's speed).
func (d *drained) logFrom(first string) []string {
	d.t.Helper()
	lines := strings.Split(strings.TrimSuffix(d.stderr.String(), "\n"), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, first) })
	require.GreaterOrEqual(d.t, i, 0, "no line %q in:\n%s", first, d.stderr.String())
	return slices.DeleteFunc(lines[i:], func(l string) bool {
		return strings.HasPrefix(l, "proxy-await: still holding the stop signal: the listeners had traffic within the quiet period ")
	})
}

// expectLog checks proxy-await's log from the stop signal on, line by line:
// each line must match the regular expression in want at its place.
func (d *drained) expectLog(want ...string) {
	d.t.Helper()
	got := d.logFrom("proxy-await: holding SIGTERM while the child keeps serving ")
	for i, w := range want {
		if !assert.Less(d.t, i, len(got), "too few lines, expecting %q:\n%s", w, strings.Join(got, "\n")) {
			return
		}
		assert.Regexp(d.t, "^"+w+"$", got[i], "line %d", i+1)
	}
	assert.Len(d.t, got, len(want), "more lines:\n%s", strings.Join(got, "\n"))
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

// A server that binds as root and then runs as nobody hides its
// descriptors, and its listener is root's: one of the sockets that could be
// its, which the watch follows.
func TestDrainServerThatBoundAsRoot(t *testing.T) {
	d := startDrained(t, "http-as-user", drainFlags, "@", nobody, drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), "listeners="+drainAddr)
}

// statsAddr is where a server opens its second port: a stats or metrics
// endpoint, idle.
const statsAddr = "127.0.0.1:8081"

// keepSendingThroughTheHold: a first request opens the kept-alive
// connection, then the stop signal, then once the watch follows the
// sockets requests on that connection for twice the quiet period. The
// child's SIGTERM must come --drain-quiet after the last request, not while
// the client still sends. The log says exactly that, with listeners the
// addresses the watch follows.
func (d *drained) keepSendingThroughTheHold(listeners string) {
	d.t.Helper()
	d.requests(0)
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")
	sent := d.requests(2 * testutil.DrainQuiet)
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(d.t, got.Sub(sent), testutil.DrainQuiet, "SIGTERM only --drain-quiet after the last request")
	assert.Less(d.t, got.Sub(sent), testutil.DrainQuiet+testutil.LateBound, "SIGTERM soon after the quiet period")
	assert.Equal(d.t, 0, d.wait())
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1m0s drain_quiet=1.5s`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=1 drain_quiet=1.5s listeners="`+listeners+`"`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no traffic for 1.5s" connections=1 since_traffic=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// Seeing one socket of a process is not seeing the process: a server binds
// its port as root, drops to nobody and opens a stats port as nobody. The
// stats port is nobody's, the port with the traffic root's: the watch
// follows both, and holds the stop signal while a kept-alive client sends
// on the root's.
func TestDrainServerThatDropsAndBindsAgain(t *testing.T) {
	d := startDrained(t, "http-drop", drainFlags, "@", nobody, drainAddr, statsAddr)
	d.keepSendingThroughTheHold(drainAddr + " " + statsAddr)
}

// The same through a parent: a readable parent holds a port of its own, its
// child binds another as root and drops to nobody. The parent's port does
// not stand for the child's.
func TestDrainServerThatDropsBesideItsParentsPort(t *testing.T) {
	d := startDrained(t, "listening-parent", drainFlags, "@", statsAddr, "http-as-user", nobody, drainAddr)
	d.keepSendingThroughTheHold(drainAddr + " " + statsAddr)
}

// udpAddr is where the UDP servers listen.
const udpAddr = "127.0.0.1:5353"

// datagram sends one datagram to the server at udpAddr and reads its echo.
func (d *drained) datagram() {
	d.t.Helper()
	c, err := testutil.NetnsDialer(d.t, d.cmd.Process.Pid)(context.Background(), "udp", udpAddr)
	require.NoError(d.t, err)
	defer c.Close()
	require.NoError(d.t, c.SetDeadline(time.Now().Add(waitLimit)))
	_, err = c.Write([]byte("query"))
	require.NoError(d.t, err)
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	require.NoError(d.t, err)
	require.Equal(d.t, "query", string(buf[:n]))
}

// udpHint is the drain_blind warning's hint.
const udpHint = `\(hint: set --drain-ports to the TCP ports to watch, and its UDP traffic holds the stop signal no longer; or use --term-delay alone\)`

// A UDP server beside an idle TCP port: the watch cannot see the
// datagrams, so it says so and holds the stop signal for the whole
// --term-delay, though the TCP port is quiet.
func TestDrainUDPServerHoldsTheWholeDelay(t *testing.T) {
	const delay = 3 * time.Second
	d := startDrained(t, "http-udp", []string{"--term-delay", delay.String(), "--drain-quiet", "200ms"},
		"@", udpAddr, drainAddr)
	d.datagram()
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	d.datagram()
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay")
	assert.Equal(t, 0, d.wait())
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=3s drain_quiet=200ms`,
		`proxy-await: warning: cannot see the traffic of a UDP socket below proxy-await: holding the stop signal for the whole --term-delay, or until the socket closes udp=`+udpAddr+` pid=\d+ `+udpHint,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="term delay elapsed"`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// The same server as nobody hides its descriptors: its UDP socket,
// nobody's, could be its, and counts the same.
func TestDrainUDPServerOfAnotherUser(t *testing.T) {
	const delay = 3 * time.Second
	d := startDrained(t, "http-udp", []string{"--term-delay", delay.String(), "--drain-quiet", "200ms"},
		"setpriv", "--reuid="+nobody, "--regid="+nobody, "--clear-groups", "--", "@", udpAddr, drainAddr)
	d.datagram()
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay")
	assert.Equal(t, 0, d.wait())
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=3s drain_quiet=200ms`,
		`proxy-await: warning: cannot see the traffic of a UDP socket below proxy-await: holding the stop signal for the whole --term-delay, or until the socket closes udp=`+udpAddr+` pid=\d+ uid=`+nobody+` error=".*: permission denied" `+udpHint,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="term delay elapsed"`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// --drain-ports watches the ports it names, whoever listens there: the
// server of the test above, which the watch cannot see.
func TestDrainPortsWatchWhatCannotBeSeen(t *testing.T) {
	d := startDrained(t, "http-as-user", append(drainFlags, "--drain-ports", "8080"), "@", nobody, drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), "ports=8080")
}

// A listener the watch can see (a metrics endpoint) does not make up for
// one it cannot: the server that hides its descriptors (it bound as root,
// then became nobody) may be the one with traffic, and the watch follows
// its listener too.
func TestDrainVisibleMetricsPortDoesNotHideTheServer(t *testing.T) {
	d := startDrained(t, "with-metrics", drainFlags, "@", "127.0.0.1:9090", "http-as-user", nobody, drainAddr)
	d.termDuringRequests()
	assert.Contains(t, d.stderr.String(), `listeners="`+drainAddr+` 127.0.0.1:9090"`)
}

// A UDP server that turns up while the stop signal is held (a script
// starts it after the watch began) pauses the watch: whatever traffic it
// takes is invisible, so the hold lasts the whole --term-delay, though the
// server the watch follows has fallen quiet.
func TestDrainPausesWhenAUDPServerTurnsUp(t *testing.T) {
	const delay = 8 * time.Second
	quiet := 2 * testutil.DrainQuiet // room for the UDP server's start on a loaded machine
	d := startDrained(t, "later", []string{"--term-delay", delay.String(), "--drain-quiet", quiet.String()},
		"@", drainAddr, "udp", udpAddr)
	d.requests(0)
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")

	// Requests keep the followed server busy, so that the quiet period
	// cannot end, until the UDP server is bound. The watch looks at every
	// process and UDP socket again before it says quiet, and finds the UDP
	// server then at the latest.
	stopRequests := d.busy()
	_, err := io.WriteString(d.stdin, "later\n")
	require.NoError(t, err)
	require.Equal(t, "listening udp "+udpAddr, d.next())
	require.Equal(t, "ready", d.next())
	last := stopRequests()
	d.datagram()

	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay, not --drain-quiet after the last request (%s after the stop signal)", last.Sub(sent))
	assert.Equal(t, 0, d.wait())
	udp := `udp=` + udpAddr + ` pid=\d+`
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=8s drain_quiet=3s`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=1 drain_quiet=3s listeners=`+drainAddr,
		`proxy-await: the watch pauses: it cannot see the traffic of a UDP socket `+udp,
		`proxy-await: warning: cannot see the traffic of a UDP socket below proxy-await: holding the stop signal for the whole --term-delay, or until the socket closes `+udp+` `+udpHint,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="term delay elapsed"`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// A server that hides its descriptors and turns up while the stop signal is
// held (a script starts it after the watch began; it binds as root and
// becomes nobody): its listener, root's, could be its, and the watch
// follows it from then on, counting that moment as traffic.
func TestDrainFollowsAHiddenServerThatTurnsUp(t *testing.T) {
	const delay = 15 * time.Second
	quiet := 2 * testutil.DrainQuiet // room for the hidden server's start on a loaded machine
	d := startDrained(t, "later", []string{"--term-delay", delay.String(), "--drain-quiet", quiet.String()},
		"@", drainAddr, "http-as-user", nobody, statsAddr)
	d.requests(0)
	sent := time.Now()
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")

	// Requests keep the followed server busy, so that the quiet period
	// cannot end, until the hidden server listens. The watch looks for new
	// listeners every second, and at every process again before it says
	// quiet.
	stopRequests := d.busy()
	started := time.Now()
	_, err := io.WriteString(d.stdin, "later\n")
	require.NoError(t, err)
	require.Equal(t, "listening "+statsAddr, d.next())
	require.Equal(t, "ready", d.next())
	stopRequests()
	got := d.signalAt("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(started), quiet, "SIGTERM only --drain-quiet after the hidden server listened")
	assert.Less(t, got.Sub(sent), delay, "not at --term-delay")
	assert.Equal(t, 0, d.wait())
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=15s drain_quiet=3s`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=1 drain_quiet=3s listeners=`+drainAddr,
		`proxy-await: a process below proxy-await opened a listening socket: the watch follows it from now on listener=`+statsAddr,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no traffic for 3s" connections=1 since_traffic=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// busy sends requests every testutil.RequestGap until the function it
// returns is called, which returns when the last request was answered.
// Every request must be answered: the server must keep serving while the
// stop signal is held.
func (d *drained) busy() (stop func() time.Time) {
	type requested struct {
		last time.Time // when the last request was answered
		err  error
	}
	done, stopped := make(chan struct{}), make(chan requested, 1)
	var once sync.Once
	end := func() { once.Do(func() { close(done) }) }
	d.t.Cleanup(end)
	go func() {
		r := requested{last: time.Now()}
		for r.err == nil {
			select {
			case <-done:
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
	return func() time.Time {
		end()
		r := <-stopped
		require.NoError(d.t, r.err, "the followed server must keep serving while the stop signal is held")
		return r.last
	}
}
