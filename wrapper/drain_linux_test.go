package wrapper

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// armed is the message of drain_started: the watch follows the sockets.
const armed = "holding the stop signal until the listeners have no traffic"

// startListener runs the "listen" child under cfg and returns it with the
// address it listens on.
func startListener(t *testing.T, cfg Config) (*running, string) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	r := start(t, cfg, "listen", addrFile)
	r.expect("ready")
	return r, listenAddr(t, addrFile)
}

// listenAddr waits for the "listen" child to write its address.
func listenAddr(t *testing.T, path string) string {
	t.Helper()
	var data []byte
	testutil.Eventually(t, func() bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil && len(data) > 0
	}, "the child never said where it listens")
	return string(data)
}

// connectFor opens and closes connections to addr every gap until d has
// passed, and returns when the last one was started. Each connection lives
// for well under a millisecond: far shorter than any sampling period.
func connectFor(t *testing.T, addr string, d, gap time.Duration) (last time.Time) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		last = time.Now()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		require.NoError(t, c.Close())
		time.Sleep(gap)
	}
	return last
}

func TestDrainQuietWaitsForTheLastConnection(t *testing.T) {
	const quiet, upper = 1500 * time.Millisecond, 20 * time.Second
	r, addr := startListener(t, Config{TermDelay: upper, DrainQuiet: quiet})

	sent := time.Now()
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	// Short connections 100ms apart for 2s: gaps far shorter than
	// --drain-quiet, even if the test stalls for a second, and for longer
	// than it, so the quiet period must start again more than once.
	last := connectFor(t, addr, 2*time.Second, 100*time.Millisecond)

	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(last), quiet, "SIGTERM only after the last connection plus --drain-quiet")
	assert.Less(t, got.Sub(sent), upper, "not at the upper bound")
	assert.Equal(t, 0, r.wait())
	assert.Contains(t, r.log.String(), "reason=\"no traffic for 1.5s\"")
}

func TestDrainQuietSeesShortConnectionsBetweenSamples(t *testing.T) {
	// One connection, open for microseconds, after the first sample: only the
	// kernel's destroy report can show it.
	const quiet, upper = 2 * time.Second, 20 * time.Second
	r, addr := startListener(t, Config{TermDelay: upper, DrainQuiet: quiet})

	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	// The connection comes once the watch is armed, late enough that a
	// watch blind to it would end the quiet period visibly before last plus
	// quiet, and well before the quiet period ends even if the test stalls
	// for a second.
	time.Sleep(quiet / 8)
	last := time.Now()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())

	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(last), quiet, "the short connection restarted the quiet period")
	assert.Equal(t, 0, r.wait())
}

// No listener at all may be a server the watch cannot see: it never
// guesses quiet, but warns once and holds for the whole --term-delay.
func TestDrainQuietWithoutListeners(t *testing.T) {
	const quiet, delay = 200 * time.Millisecond, 2 * time.Second
	r := start(t, Config{TermDelay: delay, DrainQuiet: quiet}, "signals", "SIGTERM")
	r.expect("ready")
	sent := time.Now()
	kill(t, syscall.SIGTERM)
	got := r.signalTime("SIGTERM")
	assert.GreaterOrEqual(t, got.Sub(sent), delay, "the whole --term-delay")
	assert.Equal(t, 0, r.wait())
	const warning = "no listening TCP socket below proxy-await: holding the stop signal until a listener appears and has no traffic, or for the whole --term-delay"
	assert.Equal(t, 1, strings.Count(r.log.String(), warning), "one warning")
	assert.Contains(t, r.log.String(), `reason="term delay elapsed"`)
}

// No listener at the stop signal, and one that appears during the hold: the
// first warning says the hold lasts until a listener appears, and the line
// that names the listener says the watch follows it from then on. The hold
// ends --drain-quiet after it appeared, not at --term-delay.
func TestDrainQuietFollowsAListenerThatAppears(t *testing.T) {
	const quiet, upper = 200 * time.Millisecond, 20 * time.Second
	r := start(t, Config{TermDelay: upper, DrainQuiet: quiet}, "http")
	r.expect("ready")
	sent := time.Now()
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, "no listening TCP socket below proxy-await")
	_, err := r.stdin.WriteString("listen 127.0.0.1:0\n")
	require.NoError(t, err)
	addr := strings.TrimPrefix(r.expect("listening "), "listening ")
	got := r.signalTime("SIGTERM")
	assert.Less(t, got.Sub(sent), upper, "not at --term-delay")
	assert.Equal(t, 0, r.wait())

	log := strings.Split(r.log.String(), "\n")
	i := slices.IndexFunc(log, func(l string) bool { return strings.HasPrefix(l, "proxy-await: holding SIGTERM ") })
	require.GreaterOrEqual(t, i, 0, "no line of the held stop signal")
	want := []string{
		`proxy-await: holding SIGTERM while the child keeps serving signal=SIGTERM term_delay=20s drain_quiet=200ms`,
		`proxy-await: warning: no listening TCP socket below proxy-await: holding the stop signal until a listener appears and has no traffic, or for the whole --term-delay \(hint: set --drain-ports to the ports the command serves on, if it serves TCP\)`,
		`proxy-await: a process below proxy-await opened a listening socket: the watch follows it from now on listener=` + addr,
		`proxy-await: holding the stop signal until the listeners have no traffic connections=0 drain_quiet=200ms listeners=` + addr,
		`proxy-await: delivering termination signal signal=SIGTERM child_pid=\d+ reason="no traffic for 200ms" connections=0 since_traffic=\S+`,
		`proxy-await: child exited child_pid=\d+ exit_code=0`,
		``,
	}
	for j, w := range want {
		require.Less(t, i+j, len(log), "too few lines, expecting %q", w)
		assert.Regexp(t, "^"+w+"$", log[i+j], "line %d", j+1)
	}
	assert.Len(t, log, i+len(want), "more lines")
}

func TestDrainQuietEndedBySecondTerm(t *testing.T) {
	r, _ := startListener(t, Config{TermDelay: time.Hour, DrainQuiet: time.Hour})
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	kill(t, syscall.SIGTERM)
	r.expect("signal SIGTERM ")
	assert.Equal(t, 0, r.wait())
	assert.Regexp(t, `delivering termination signal .*reason="second SIGTERM received" connections=0 since_traffic=\S+`, r.log.String())
}

func TestDrainQuietEndedByTermDelay(t *testing.T) {
	// The connection stays open and idle: not traffic, but counted. The
	// reason line counts the connections only once the watch is armed: the
	// term delay is long beside the time the watch takes to arm, even when
	// the process stalls for a second.
	r, addrs := startHTTP(t, Config{TermDelay: 2 * time.Second, DrainQuiet: time.Hour}, "http", "127.0.0.1:0")
	_, _ = requests(t, &http.Client{Transport: &http.Transport{}}, "http://"+addrs[0]+"/", 0, 0, 1)
	kill(t, syscall.SIGTERM)
	waitLog(t, r.log, armed)
	r.signalTime("SIGTERM")
	assert.Equal(t, 0, r.wait())
	assert.Regexp(t, `delivering termination signal .*reason="term delay elapsed" connections=1 since_traffic=\S+`, r.log.String())
}
