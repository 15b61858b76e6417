package lifecycle_test

// What counts as traffic in a pod: clients outside the pod that cannot
// follow the endpoint removal, the kubelet's probes, proxy-await's own check
// of the app. proxy-await runs in a network namespace of its own, the pod,
// and a client in a second one, outside the pod, reaches it over a veth
// pair, as kube-proxy's clients reach a pod's address.

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
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

// The pod's address on the veth pair, and the outside client's.
const (
	podIP     = "10.77.0.1"
	outsideIP = "10.77.0.2"
	podAddr   = podIP + ":8080"
)

// pod is proxy-await in a network namespace of its own with a veth pair to
// a second namespace, outside the pod, that holds a client.
type pod struct {
	*drained
	outside *http.Client // kept-alive connections from outside the pod
	fresh   *http.Client // a new connection for each request from outside the pod
}

// startPod runs `proxy-await --proxy none ARGS -- COMMAND...` as startDrained
// does, in a namespace whose veth end has podIP; the child plays scenario
// and must listen on drainAddr first.
func startPod(t *testing.T, scenario string, args []string, command ...string) *pod {
	t.Helper()
	// The outside namespace: a process that holds it, ended at cleanup.
	holder := exec.Command("unshare", "--net", "--", "sh", "-c", "ip link set lo up && echo ready && exec cat")
	stdin, err := holder.StdinPipe()
	require.NoError(t, err)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { stdin.Close(); _ = holder.Wait() })
	ready := make([]byte, 6)
	_, err = io.ReadFull(out, ready)
	require.NoError(t, err, "the outside namespace")

	script := fmt.Sprintf(`ip link set lo up &&
ip link add pa0 type veth peer name pa1 netns %d &&
ip addr add %s/24 dev pa0 && ip link set pa0 up &&
nsenter --net=/proc/%d/ns/net sh -c 'ip addr add %s/24 dev pa1 && ip link set pa1 up' &&
exec "$@"`, holder.Process.Pid, podIP, holder.Process.Pid, outsideIP)
	d := startDrainedScript(t, script, scenario, args, command...)
	dial := testutil.NetnsDialer(t, holder.Process.Pid)
	return &pod{
		drained: d,
		outside: &http.Client{Transport: &http.Transport{DialContext: dial}},
		fresh:   &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}},
	}
}

// sender sends GET url with client every testutil.RequestGap until stopped,
// and keeps the requests that failed, by when they were sent.
type sender struct {
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	last   time.Time // when the last request that was answered 200 was sent
	failed []failure
}

// failure is a request that failed: when it was sent, and when it failed.
type failure struct {
	at, failed time.Time
	err        error
}

func send(client *http.Client, url string) *sender {
	s := &sender{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(testutil.RequestGap):
			}
			at := time.Now()
			err := testutil.Round(client, url, 1)
			s.mu.Lock()
			if err == nil {
				s.last = at
			} else {
				s.failed = append(s.failed, failure{at, time.Now(), err})
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// end stops the requests and returns when the last answered one was sent,
// and the requests that failed before held ended: while the stop signal was
// held and the app served. (A request still open when the app gets its
// SIGTERM meets the app leaving, as it would in a pod: the test app exits
// at once.)
func (s *sender) end(held time.Time) (time.Time, []error) {
	close(s.stop)
	<-s.done
	var failed []error
	for _, f := range s.failed {
		if f.failed.Before(held) {
			failed = append(failed, fmt.Errorf("%s: %w", f.at.Format(time.StampMilli), f.err))
		}
	}
	return s.last, failed
}

// A client outside the pod on a kept-alive connection stays on the pod
// whatever the endpoints say (kube-proxy moves only new connections), so
// its requests end the hold no sooner than the app's SIGTERM does. Once no
// new connection has come for --drain-quiet, proxy-await delivers SIGTERM
// while it still sends, and says why.
func TestDrainPinnedClientOutsideThePod(t *testing.T) {
	p := startPod(t, "http", drainFlags, "@", drainAddr, podAddr)
	url := "http://" + podAddr + "/"
	require.NoError(t, testutil.Round(p.outside, url, 1), "the kept-alive connection")
	stop := time.Now()
	p.signal(syscall.SIGTERM)
	p.waitLog("holding the stop signal until the listeners have no traffic")
	s := send(p.outside, url)
	got := p.signalAt("SIGTERM")
	last, failed := s.end(got)
	assert.Empty(t, failed, "no request fails while the stop signal is held")
	assert.GreaterOrEqual(t, got.Sub(stop), testutil.DrainQuiet, "SIGTERM only --drain-quiet after the stop signal")
	assert.Less(t, got.Sub(stop), testutil.DrainQuiet+testutil.LateBound, "SIGTERM while the pinned client still sends, not at --term-delay")
	assert.Less(t, got.Sub(last), testutil.DrainQuiet, "the client was still sending")
	assert.Equal(t, 0, p.wait())
	p.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1m0s drain_quiet=1.5s`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=1 drain_quiet=1.5s listeners="`+podAddr+` `+drainAddr+`"`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no new connection for 1.5s: only connections from outside the pod still send, and the endpoint removal does not move them" connections=1 since_traffic=\S+ since_pinned=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// New connections from outside the pod are traffic: the endpoint removal
// has not reached their balancer yet. They came a request gap apart, so
// the quiet period is --drain-quiet or a little longer (about 2 s for
// gaps of about 110 ms and a minute's --term-delay), and the delivery line
// says which.
func TestDrainNewConnectionsOutsideThePod(t *testing.T) {
	p := startPod(t, "http", drainFlags, "@", drainAddr, podAddr)
	url := "http://" + podAddr + "/"
	p.signal(syscall.SIGTERM)
	p.waitLog("holding the stop signal until the listeners have no traffic")
	sent, _ := testutil.Requests(t, p.fresh, url, 2*testutil.DrainQuiet, testutil.RequestGap, 1)
	got := p.signalAt("SIGTERM")
	assert.Equal(t, 0, p.wait())
	m := regexp.MustCompile(`reason="no traffic for (\S+)"`).FindStringSubmatch(p.stderr.String())
	require.NotNil(t, m, "the delivery line gives the quiet period")
	quiet, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, quiet, testutil.DrainQuiet, "the quiet period is --drain-quiet or longer")
	assert.GreaterOrEqual(t, got.Sub(sent), quiet, "SIGTERM only the quiet period after the last new connection")
	assert.Less(t, got.Sub(sent), quiet+testutil.LateBound, "SIGTERM soon after the quiet period")
}

// A service whose clients connect seldom is not taken for quiet between two
// of their connections while the endpoint removal spreads: the watch
// follows the listeners from the child's start, and holds the stop signal
// until new connections from outside the pod have paused far longer than
// they did (16.8 mean gaps here, see drain's arrivals), not for
// --drain-quiet alone.
func TestDrainSparseConnectionsOutsideThePod(t *testing.T) {
	const gap = 300 * time.Millisecond
	p := startPod(t, "http", []string{"--term-delay", "1m", "--drain-quiet", "100ms"}, "@", drainAddr, podAddr)
	url := "http://" + podAddr + "/"
	testutil.Requests(t, p.fresh, url, 15*gap, gap, 1)
	p.signal(syscall.SIGTERM)
	p.waitLog("holding the stop signal until the listeners have no traffic")
	// They go on while the endpoint removal spreads, six times closer
	// together than before: every one is answered, and the hold still waits
	// for the quiet period that the gaps before the stop signal asked for.
	sent, _ := testutil.Requests(t, p.fresh, url, 4*gap, gap/6, 1)
	got := p.signalAt("SIGTERM")
	assert.Greater(t, got.Sub(sent), 15*gap, "SIGTERM no sooner than 15 gaps after the last connection")
	assert.Less(t, got.Sub(sent), 40*gap+testutil.LateBound, "SIGTERM once the connections paused that long, not at --term-delay")
	assert.Equal(t, 0, p.wait())
	held := regexp.MustCompile(`no traffic connections=\d+ drain_quiet=(\S+) `).FindStringSubmatch(p.stderr.String())
	require.NotNil(t, held, "the drain_started line gives the quiet period")
	quiet, err := time.ParseDuration(held[1])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got.Sub(sent), quiet, "SIGTERM no sooner than the quiet period after the last connection")
	assert.Contains(t, p.stderr.String(), `reason="no traffic for `+held[1]+`"`, "the delivery waited for the quiet period the hold began with")
	p.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1m0s drain_quiet=100ms`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=\d+ drain_quiet=\S+ gaps=\d+ mean_gap=\S+ longest_gap=\S+ listeners="`+podAddr+` `+drainAddr+`"`,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no traffic for \S+" connections=\d+ since_traffic=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
}

// probeAddr is where proxy-await serves the pod's probes in the tests.
const probeAddr = "127.0.0.1:8082"

// The kubelet probes a terminating pod until it exits. Through
// --probe-port its probes reach proxy-await, which checks the app on the
// watched port itself: neither is traffic, and /ready answers 503 from the
// stop signal on.
func TestDrainProbesThroughProbePort(t *testing.T) {
	args := append([]string{"--probe-port", "8082", "--app-probe", "http://" + drainAddr + "/"}, drainFlags...)
	d := startDrained(t, "http", args, "@", drainAddr)
	probe := func(path string) int {
		resp, err := d.client.Get("http://" + probeAddr + path)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, probe("/ready"))
	assert.Equal(t, http.StatusOK, probe("/startup"))
	stop := time.Now()
	d.signal(syscall.SIGTERM)
	d.waitLog("holding the stop signal until the listeners have no traffic")
	assert.Equal(t, http.StatusServiceUnavailable, probe("/ready"))
	// The kubelet's probes, every RequestGap, until the app gets SIGTERM.
	probes := send(d.client, "http://"+probeAddr+"/live")
	got := d.signalAt("SIGTERM")
	last, failed := probes.end(got)
	assert.Empty(t, failed, "/live answers 200 while the app serves")
	assert.Less(t, got.Sub(last), testutil.DrainQuiet, "the probes went on")
	assert.GreaterOrEqual(t, got.Sub(stop), testutil.DrainQuiet, "SIGTERM only --drain-quiet after the stop signal")
	assert.Less(t, got.Sub(stop), testutil.DrainQuiet+testutil.LateBound, "the probes are not traffic")
	assert.Equal(t, 0, d.wait())
	d.expectLog(
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=1m0s drain_quiet=1.5s`,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=0 drain_quiet=1.5s listeners=`+drainAddr,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no traffic for 1.5s" connections=0 since_traffic=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
	)
	assert.Contains(t, d.stderr.String(), "proxy-await: serving the pod's probes address=[::]:8082 app_probe=http://"+drainAddr+"/\n")
}

// startDrainedScript is startDrained with script, a shell script that ends
// in `exec "$@"`, run in the new network namespace before proxy-await.
func startDrainedScript(t *testing.T, script, scenario string, args []string, command ...string) *drained {
	t.Helper()
	_, err := exec.LookPath("ip")
	require.NoError(t, err, "ip is needed: apt-get install iproute2")
	self := publicSelf(t)
	for i, a := range command {
		if a == "@" {
			command[i] = self
		}
	}
	argv := []string{"--net", "--", "sh", "-c", script, "sh",
		"setpriv", "--bounding-set", "-sys_ptrace", "--", proxyAwaitBin, "--proxy", "none"}
	argv = append(append(append(argv, args...), "--"), command...)
	cmd := exec.Command("unshare", argv...)
	cmd.Env = []string{testchild.Env + "=" + scenario}
	p := startCmd(t, cmd, nil)
	require.Equal(t, "listening "+drainAddr, p.next())
	for line := p.next(); line != "ready"; line = p.next() {
		require.True(t, strings.HasPrefix(line, "listening "), "next line %q", line)
	}
	// unshare, sh and setpriv each exec the next: the PID is proxy-await's.
	d := &drained{proc: p, url: "http://" + drainAddr + "/"}
	d.client = &http.Client{Transport: &http.Transport{DialContext: testutil.NetnsDialer(t, cmd.Process.Pid)}}
	return d
}
