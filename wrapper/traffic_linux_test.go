package wrapper

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// --drain-quiet against real HTTP traffic: the "http" child serves HTTP/1.1
// and h2c, and the clients keep their connections open, as a mesh proxy's
// pool, HTTP/2 and gRPC clients do.

// The drain tests' timing (see testutil).
const (
	drainQuiet = testutil.DrainQuiet
	requestGap = testutil.RequestGap
	busyFor    = testutil.BusyFor
	lateBound  = testutil.LateBound
)

// startHTTP runs scenario ("http" or "http-worker") on addrs under cfg and
// returns it with the addresses it listens on, in order.
func startHTTP(t *testing.T, cfg Config, scenario string, addrs ...string) (*running, []string) {
	t.Helper()
	r := start(t, cfg, scenario, addrs...)
	var got []string
	for range addrs {
		got = append(got, strings.TrimPrefix(r.next(), "listening "))
	}
	require.Equal(t, "ready", r.next())
	return r, got
}

// next is the child's next line, whatever it is.
func (r *running) next() string {
	r.t.Helper()
	return r.lines.Next(r.t, "the next line")
}

// idleConnections opens n kept-alive connections to addr, sends one request
// on each, and leaves them open and idle.
func idleConnections(t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		client := &http.Client{Transport: &http.Transport{}}
		_, _ = requests(t, client, "http://"+addr+"/", 0, 0, 1)
	}
}

// requests is testutil.Requests.
func requests(t *testing.T, client *http.Client, url string, d, gap time.Duration, parallel int) (sent, answered time.Time) {
	t.Helper()
	return testutil.Requests(t, client, url, d, gap, parallel)
}

// connCounter counts the connections an http.Client opens.
type connCounter struct {
	mu  sync.Mutex
	new int
}

func (c *connCounter) client(tr *http.Transport) *http.Client {
	dial := (&net.Dialer{}).DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.mu.Lock()
		c.new++
		c.mu.Unlock()
		return dial(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// termDuringRequests is the common case: a first request opens the client's
// connections, then the pod's SIGTERM, then once the watch is armed requests
// every requestGap for busyFor on those connections. The child's SIGTERM
// must come after the last answer, drainQuiet after the last request was
// sent (a watch blind to the requests would end the quiet period drainQuiet
// after it was armed, about busyFor earlier), and not much later.
func termDuringRequests(t *testing.T, r *running, client *http.Client, url string, parallel int) {
	t.Helper()
	_, _ = requests(t, client, url, 0, 0, parallel)
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	sent, answered := requests(t, client, url, busyFor, requestGap, parallel)
	got := r.signalTime("SIGTERM")
	assert.True(t, got.After(answered), "SIGTERM %s before the last answer", answered.Sub(got))
	assert.GreaterOrEqual(t, got.Sub(sent), drainQuiet, "SIGTERM only --drain-quiet after the last request")
	assert.Less(t, got.Sub(sent), drainQuiet+lateBound, "SIGTERM soon after the quiet period")
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), fmt.Sprintf(`reason="no traffic for %s"`, drainQuiet))
}

func TestDrainQuietKeepAliveRequests(t *testing.T) {
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "http", "127.0.0.1:0")
	var cc connCounter
	client := cc.client(&http.Transport{MaxConnsPerHost: 1})
	termDuringRequests(t, r, client, "http://"+addrs[0]+"/", 1)
	assert.Equal(t, 1, cc.new, "every request on one kept-alive connection")
}

func TestDrainQuietHTTP2Multiplexed(t *testing.T) {
	// A wildcard IPv6 bind, reached over IPv4.
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "http", "[::]:0")
	_, port, err := net.SplitHostPort(addrs[0])
	require.NoError(t, err)
	// One client connection, which every request uses: a Transport's pool
	// could open a second one, as it shares a new HTTP/2 connection only
	// once its dial has finished in the background, which on a loaded
	// machine can come after the first answer.
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	conn, err := tr.NewClientConn(context.Background(), "http", "127.0.0.1:"+port)
	require.NoError(t, err)
	defer conn.Close()
	client := &http.Client{Transport: conn}
	url := "http://127.0.0.1:" + port + "/"
	resp, err := client.Get(url)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor, "HTTP/2: the parallel requests are streams of the one connection")
	termDuringRequests(t, r, client, url, 3)
}

func TestDrainQuietIPv6Loopback(t *testing.T) {
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "http", "[::1]:0")
	termDuringRequests(t, r, &http.Client{Transport: &http.Transport{}}, "http://"+addrs[0]+"/", 1)
}

func TestDrainQuietWorkerOwnsTheListener(t *testing.T) {
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "http-worker", "127.0.0.1:0")
	termDuringRequests(t, r, &http.Client{Transport: &http.Transport{}}, "http://"+addrs[0]+"/", 1)
}

func TestDrainQuietListenerOpenedAfterTerm(t *testing.T) {
	// Short connections (a new one for each request, closed at once) on a
	// listener the child opens once the SIGTERM is held: the watch must find
	// the listener and the connections it had before finding it. The quiet
	// period is long beside what must happen before the first request (the
	// child opens the listener and says so), even when the test or the child
	// stalls for a second.
	const quiet = 2 * time.Second
	r, _ := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: quiet}, "http", "127.0.0.1:0")
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	_, err := fmt.Fprintln(r.stdin, "listen 127.0.0.1:0")
	require.NoError(t, err)
	addr := strings.TrimPrefix(r.next(), "listening ")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	sent, answered := requests(t, client, "http://"+addr+"/", busyFor, requestGap, 1)

	// A watch that missed the new listener would end the quiet period quiet
	// after it was armed, before the last request plus quiet.
	got := r.signalTime("SIGTERM")
	assert.True(t, got.After(answered), "SIGTERM %s before the last answer", answered.Sub(got))
	assert.GreaterOrEqual(t, got.Sub(sent), quiet, "SIGTERM only --drain-quiet after the last request")
	assert.Less(t, got.Sub(sent), quiet+lateBound)
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), "a process below proxy-await opened a listening socket")
}

func TestDrainQuietIdleConnectionsDoNotHold(t *testing.T) {
	// Nothing the test does races the quiet period: it may be short.
	const quiet = 500 * time.Millisecond
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: quiet}, "http", "127.0.0.1:0")
	idleConnections(t, addrs[0], 5)
	termAt := time.Now()
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(termAt), quiet)
	assert.Less(t, got.Sub(termAt), quiet+lateBound, "idle connections are not traffic")
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), "connections=5")
}

func TestDrainQuietNewConnectionResets(t *testing.T) {
	// Idle connections, then one new connection that sends nothing.
	const quiet = 2 * time.Second
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: quiet}, "http", "127.0.0.1:0")
	idleConnections(t, addrs[0], 5)
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	// The connection comes once the watch is armed, late enough that a
	// watch blind to it would end the quiet period visibly before connected
	// plus quiet, and well before the quiet period ends even if the test
	// stalls for a second.
	time.Sleep(quiet / 8)
	connected := time.Now()
	c, err := net.Dial("tcp", addrs[0])
	require.NoError(t, err)
	defer c.Close()
	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(connected), quiet, "the new connection restarted the quiet period")
	assert.Equal(t, 0, r.wait())
}

func TestDrainQuietThroughHAProxyPool(t *testing.T) {
	// Short-lived clients to HAProxy, which sends their requests to the child
	// over one pooled backend connection, as a mesh proxy does.
	r, addrs := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "http", "127.0.0.1:0")
	hp := testutil.NewHAProxy(t, addrs[0])
	hp.Start(t, "/")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	termDuringRequests(t, r, client, "http://"+hp.Addr+"/", 1)
}

func TestDrainQuietShortConnectionOnNewListener(t *testing.T) {
	// One connection, opened and closed at once on a listener opened after
	// the SIGTERM: it is usually gone before the watch finds the listener,
	// and only its destroy report, kept until then, shows it.
	const quiet = 2 * time.Second
	r, _ := startHTTP(t, Config{TermDelay: time.Minute, DrainQuiet: quiet}, "http", "127.0.0.1:0")
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	// The listener and its connection come late enough that a watch blind
	// to the connection would end the quiet period visibly before connected
	// plus quiet, and well before the quiet period ends even if the test or
	// the child stalls for a second.
	time.Sleep(quiet / 8)
	_, err := fmt.Fprintln(r.stdin, "listen 127.0.0.1:0")
	require.NoError(t, err)
	addr := strings.TrimPrefix(r.next(), "listening ")
	connected := time.Now()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(connected), quiet, "the connection restarted the quiet period")
	assert.Equal(t, 0, r.wait())
}

// A server that daemonized (a double fork) has left the child's tree: it is
// reparented to proxy-await, and the watch follows it there.
func TestDrainQuietDaemonizedServer(t *testing.T) {
	r := start(t, Config{TermDelay: time.Minute, DrainQuiet: drainQuiet}, "daemonize", "http", "127.0.0.1:0")
	addr := strings.TrimPrefix(r.expect("listening "), "listening ")
	r.expect("ready")
	termDuringRequests(t, r, &http.Client{Transport: &http.Transport{}}, "http://"+addr+"/", 1)
}

// The line that delivers the stop signal says how long ago the last traffic
// was at that moment: the connections are looked at again then, not taken
// from an earlier look, seconds old. The hold's line comes before the
// watch's.
func TestDrainDeliveryLineIsFresh(t *testing.T) {
	r, addrs := startHTTP(t, Config{TermDelay: 3 * time.Second, DrainQuiet: time.Hour}, "http", "127.0.0.1:0")
	client := &http.Client{Transport: &http.Transport{}}
	url := "http://" + addrs[0] + "/"
	_, _ = requests(t, client, url, 0, 0, 1) // the kept-alive connection
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	sent, _ := requests(t, client, url, busyFor, requestGap, 1)
	got := r.signalTime("SIGTERM")
	assert.Equal(t, 0, r.wait())

	log := r.log.String()
	m := regexp.MustCompile(`delivering termination signal .*reason="term delay elapsed" connections=1 since_traffic=(\S+)`).
		FindStringSubmatch(log)
	require.NotNil(t, m, "the delivery line")
	since, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	// The last request arrived after it was sent, and the line was written
	// before the child got the signal: since_traffic is at most got-sent
	// (plus the millisecond it is rounded to). A figure from the look when
	// the watch was armed would be larger by busyFor at least.
	assert.LessOrEqual(t, since, got.Sub(sent)+time.Millisecond, "since_traffic measured at the delivery")
	assert.Less(t, strings.Index(log, "holding SIGTERM while the child keeps serving"), strings.Index(log, armed),
		"the hold is logged before the watch")
}

// No listener at the stop signal: one warning, and no delivery at the end of
// the quiet period. A listener that opens later starts the watch then: the
// requests on it hold the signal, and their end ends the hold before
// --term-delay.
func TestDrainQuietListenerAfterTheWarning(t *testing.T) {
	const quiet = 2 * time.Second
	r := start(t, Config{TermDelay: time.Minute, DrainQuiet: quiet}, "http")
	r.expect("ready")
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, "no listening TCP socket below proxy-await")
	_, err := fmt.Fprintln(r.stdin, "listen 127.0.0.1:0")
	require.NoError(t, err)
	addr := strings.TrimPrefix(r.expect("listening "), "listening ")
	waitLog(t, r.log, armed)
	client := &http.Client{Transport: &http.Transport{}}
	sent, answered := requests(t, client, "http://"+addr+"/", busyFor, requestGap, 1)
	got := r.signalTime("SIGTERM")
	assert.True(t, got.After(answered), "SIGTERM %s before the last answer", answered.Sub(got))
	assert.GreaterOrEqual(t, got.Sub(sent), quiet, "SIGTERM only --drain-quiet after the last request")
	assert.Less(t, got.Sub(sent), quiet+lateBound, "not at --term-delay")
	assert.Equal(t, 0, r.wait())
	assert.Equal(t, 1, strings.Count(r.log.String(), "warning:"), "one warning")
}
