package lifecycle_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// The HAProxy example of --help and examples/, for real: HAProxy stops hard on SIGTERM and
// softly on SIGUSR1 (it closes its listeners and finishes the requests in
// flight), in single-process mode and in master-worker mode alike. Behind
// `--rewrite TERM:USR1` a pod deletion is a graceful stop.

// haproxyModes are the two ways HAProxy runs in the foreground.
var haproxyModes = []struct {
	name   string
	args   []string
	master bool // master-worker mode
	hard   int  // proxy-await's exit code after a hard stop
}{
	// HAProxy dies of SIGTERM.
	{"single process", []string{"-db"}, false, 143},
	// The master reports its killed worker, then exits 0.
	{"master-worker", []string{"-W", "-db"}, true, 0},
}

func TestHAProxyGracefulStopWithRewrite(t *testing.T) {
	for _, mode := range haproxyModes {
		t.Run(mode.name, func(t *testing.T) {
			gracefulStop(t, mode.args, mode.master, []string{"--rewrite", "TERM:USR1"}, func(hp *haproxy) {
				hp.pa.signal(syscall.SIGTERM)
			})
		})
	}
}

// A pod deleted by hand twice, or a Ctrl-C after the kubelet's SIGTERM: a
// second stop signal during the hold ends it, and HAProxy gets the soft stop
// alone. A SIGINT after the USR1 would stop it hard.
func TestHAProxySecondStopSignalDuringTheHold(t *testing.T) {
	for _, mode := range haproxyModes {
		t.Run(mode.name, func(t *testing.T) {
			gracefulStop(t, mode.args, mode.master, []string{"--rewrite", "TERM:USR1", "--term-delay", "1h"}, func(hp *haproxy) {
				hp.pa.signal(syscall.SIGTERM)
				hp.pa.waitLog("holding SIGTERM while the child keeps serving")
				hp.pa.signal(syscall.SIGINT)
			})
		})
	}
}

// gracefulStop runs HAProxy behind proxy-await with paArgs, with a request
// in flight, calls stop, and checks that HAProxy stopped softly: it closed
// its listener, finished the request in flight, and exited 0.
func gracefulStop(t *testing.T, modeArgs []string, master bool, paArgs []string, stop func(*haproxy)) {
	be := startSlowBackend(t)
	hp := startHAProxy(t, be, paArgs, modeArgs, master)
	slow := hp.get("/slow")
	be.waitArrived(t)

	stop(hp)
	hp.waitRefused(t)
	select {
	case r := <-slow:
		t.Fatalf("the in-flight request ended before the backend answered: %+v", r)
	default:
	}

	be.releaseAll()
	r := waitResult(t, slow)
	require.NoError(t, r.err, "the in-flight request must complete")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "slow done\n", r.body)
	assert.Equal(t, 0, hp.pa.wait(), "HAProxy exits 0 after a soft stop")
}

// The control case: without the rewrite, SIGTERM kills the request in flight.
func TestHAProxyHardStopWithoutRewrite(t *testing.T) {
	for _, mode := range haproxyModes {
		t.Run(mode.name, func(t *testing.T) {
			be := startSlowBackend(t)
			hp := startHAProxy(t, be, nil, mode.args, mode.master)
			slow := hp.get("/slow")
			be.waitArrived(t)

			hp.pa.signal(syscall.SIGTERM)
			r := waitResult(t, slow)
			assert.Error(t, r.err, "a hard stop must cut the in-flight request (got %d %q)", r.status, r.body)
			be.releaseAll()
			assert.Equal(t, mode.hard, hp.pa.wait())
		})
	}
}

// slowBackend is an HTTP server whose /slow requests block until the test
// releases them; any other path answers at once.
type slowBackend struct {
	srv     *httptest.Server
	arrived chan struct{} // one value per /slow request received
	release chan struct{} // closed to let /slow requests answer
	once    sync.Once
}

func startSlowBackend(t *testing.T) *slowBackend {
	t.Helper()
	be := &slowBackend{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	be.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slow" {
			fmt.Fprintln(w, "ok")
			return
		}
		be.arrived <- struct{}{}
		select {
		case <-be.release:
			fmt.Fprintln(w, "slow done")
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		be.releaseAll()
		be.srv.Close()
	})
	return be
}

func (be *slowBackend) releaseAll() { be.once.Do(func() { close(be.release) }) }

func (be *slowBackend) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-be.arrived:
	case <-time.After(waitLimit):
		t.Fatalf("the slow request did not reach the backend within %s", waitLimit)
	}
}

// haproxy is HAProxy running behind proxy-await.
type haproxy struct {
	*testutil.HAProxy
	pa     *proc
	client *http.Client
}

// startHAProxy runs `proxy-await --proxy none PAARGS -- haproxy MODEARGS -f
// CFG` in front of be and waits until HAProxy answers through to it and
// handles its stop signals.
func startHAProxy(t *testing.T, be *slowBackend, paArgs, modeArgs []string, master bool) *haproxy {
	t.Helper()
	h := testutil.NewHAProxy(t, be.srv.Listener.Addr().String())
	args := append(append([]string{"--proxy", "none"}, paArgs...), "--")
	hp := &haproxy{
		HAProxy: h,
		pa:      startPA(t, nil, append(args, h.Args(modeArgs...)...)...),
		// A fresh connection each request: an idle keep-alive connection
		// would be one more thing for the soft stop to wait for.
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	}
	testutil.Eventually(t, func() bool {
		select {
		case <-hp.pa.done:
			t.Fatalf("proxy-await exited %d before HAProxy served; stderr:\n%s", hp.pa.code, hp.pa.stderr)
		default:
		}
		return h.Serves("/ok")
	}, "HAProxy did not serve on %s; stderr:\n%s", h.Addr, hp.pa.stderr)
	hp.waitSignalsHandled(t, master)
	return hp
}

// waitSignalsHandled waits until HAProxy, proxy-await's child, catches
// SIGUSR1. A master re-executes itself in "wait mode" once its worker runs,
// and a signal sent during that exec is lost, so with a master this also waits
// for the re-executed image (HAPROXY_MWORKER_WAIT_ONLY in its environment).
func (hp *haproxy) waitSignalsHandled(t *testing.T, master bool) {
	t.Helper()
	testutil.Eventually(t, func() bool {
		pid, ok := childPID(hp.pa.cmd.Process.Pid)
		if !ok {
			return false
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		reexeced := bytes.Contains(env, []byte("\x00HAPROXY_MWORKER_WAIT_ONLY=1\x00"))
		return catches(pid, syscall.SIGUSR1) && (!master || reexeced)
	}, "HAProxy did not set up its signal handlers; stderr:\n%s", hp.pa.stderr)
}

// childPID finds a child of pid in /proc.
func childPID(pid int) (int, bool) {
	kids := testutil.Children(pid)
	if len(kids) == 0 {
		return 0, false
	}
	return kids[0].PID, true
}

// catches reports whether process pid has a handler for sig.
func catches(pid int, sig syscall.Signal) bool {
	st, ok := proctree.ReadStatus(pid)
	return ok && st.Caught&(1<<(sig-1)) != 0
}

// result is how one request through HAProxy ended.
type result struct {
	status int
	body   string
	err    error
}

// get sends a GET through HAProxy in the background.
func (hp *haproxy) get(path string) <-chan result {
	c := make(chan result, 1)
	go func() {
		resp, err := hp.client.Get("http://" + hp.Addr + path)
		if err != nil {
			c <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		c <- result{status: resp.StatusCode, body: string(body), err: err}
	}()
	return c
}

// waitRefused waits until HAProxy no longer accepts connections.
func (hp *haproxy) waitRefused(t *testing.T) {
	t.Helper()
	testutil.Eventually(t, func() bool {
		c, err := net.Dial("tcp", hp.Addr)
		if err != nil {
			require.ErrorIs(t, err, syscall.ECONNREFUSED)
			return true
		}
		c.Close()
		return false
	}, "HAProxy still accepts connections after SIGTERM; stderr:\n%s", hp.pa.stderr)
}

func waitResult(t *testing.T, c <-chan result) result {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(waitLimit):
		t.Fatalf("the request through HAProxy did not end within %s", waitLimit)
		return result{}
	}
}
