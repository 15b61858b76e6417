package lifecycle_test

// The sidecars a Job meets: each proxy of the proxy table against the fake
// proxy answering as the table says it does, several presets at once, a
// shutdown endpoint that is off or missing, and a real Cloud SQL Auth Proxy
// v2. The fakes listen on free ports; the preset's paths come from the
// preset table, so a wrong path in a preset fails here, and a new proxy of
// the table is tested here without a line of its own.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/testutil"
	"github.com/proxy-await/proxy-await/proxies"
)

// presetPath is the path of a preset's URL.
// startedThenExit3 is a job that says it started, then fails with 3.
var startedThenExit3 = []string{"--", "sh", "-c", "echo started; exit 3"}

func presetPath(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u.Path
}

// notReadyAnswers holds once n readiness probes of path got an error status
// (503 from most proxies, 500 from daprd).
func notReadyAnswers(path string, n int) func([]testutil.Request) bool {
	return func(rs []testutil.Request) bool {
		c := 0
		for _, r := range rs {
			if r.Method == "GET" && r.Path == path && r.Status >= 500 {
				c++
			}
		}
		return c >= n
	}
}

// notReady is the readiness probes that got an error status.
func notReady(rs []testutil.Request) []testutil.Request {
	var out []testutil.Request
	for _, r := range rs {
		if r.Method == "GET" && r.Status >= 500 {
			out = append(out, r)
		}
	}
	return out
}

// readyAddr is the fake proxy's listener of px's readiness endpoint: its
// own, or the admin listener where px serves both endpoints on one port.
func readyAddr(px *proxies.Proxy, fp *testutil.FakeProxy) string {
	if px.Ready.Port == px.Shutdown.Port {
		return fp.Addr
	}
	return fp.Ready
}

// sidecarURLs are the readiness and shutdown URLs of a fake proxy playing
// the preset name, on the fake's own ports.
func sidecarURLs(t *testing.T, fp *testutil.FakeProxy, name string) (ready, shutdown string) {
	t.Helper()
	px, p := proxies.Lookup(name), preset(name)
	require.NotEmpty(t, readyAddr(px, fp))
	require.NotEmpty(t, fp.Addr)
	return "http://" + readyAddr(px, fp) + presetPath(t, p.Ready), "http://" + fp.Addr + presetPath(t, p.Shutdown)
}

func TestEachSidecarPreset(t *testing.T) {
	for _, px := range proxies.All {
		t.Run(px.Preset, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-flavor", px.Preset, "-ready-after", "never", "-stay-up")
			ready, shutdown := sidecarURLs(t, fp, px.Preset)
			p := startPA(t, nil, append([]string{"-S", "--ready-url", ready, "--shutdown-url", shutdown},
				startedThenExit3...)...)
			readyPath, shutdownPath := presetPath(t, preset(px.Preset).Ready), presetPath(t, preset(px.Preset).Shutdown)
			fp.WaitFor("a not-ready probe", notReadyAnswers(readyPath, 1))
			p.silent("the sidecar is not ready")
			fp.Signal(syscall.SIGUSR1)
			assert.Equal(t, "started", p.expect(""))
			assert.Equal(t, 3, p.wait())

			var shutdowns []testutil.Request
			for _, r := range fp.Requests() {
				if r.Path == shutdownPath {
					shutdowns = append(shutdowns, r)
				}
			}
			require.Len(t, shutdowns, 1, "exactly one shutdown request")
			assert.Equal(t, "POST", shutdowns[0].Method)
			assert.Equal(t, px.Shutdown.OK.Status, shutdowns[0].Status)
		})
	}
}

// --proxy istio,cloudsql: both sidecars are awaited, the command starts only
// once the second is ready too, and both are shut down once.
func TestSeveralSidecars(t *testing.T) {
	istio := testutil.StartFakeProxy(t, "-flavor", "istio", "-stay-up")
	cloudsql := testutil.StartFakeProxy(t, "-flavor", "cloudsql", "-ready-after", "never", "-stay-up")
	istioReady, istioQuit := sidecarURLs(t, istio, "istio")
	sqlReady, sqlQuit := sidecarURLs(t, cloudsql, "cloudsql")

	p := startPA(t, nil, append([]string{steadyProbe, "10s", "-S",
		"--ready-url", istioReady, "--ready-url", sqlReady,
		"--shutdown-url", istioQuit, "--shutdown-url", sqlQuit},
		startedThenExit3...)...)
	cloudsql.WaitFor("three not-ready probes", notReadyAnswers("/startup", 3))
	istio.WaitFor("istio ready", func(rs []testutil.Request) bool { return len(rs) > 0 })
	p.silent("cloud-sql-proxy is not ready")
	cloudsql.Signal(syscall.SIGUSR1)
	assert.Equal(t, "started", p.expect(""))
	assert.Equal(t, 3, p.wait())

	assert.Equal(t, 1, istio.Count("GET", "/healthz/ready"), "a ready URL is not probed again")
	assert.Equal(t, 1, istio.Count("POST", "/quitquitquit"))
	assert.Equal(t, 1, cloudsql.Count("POST", "/quitquitquit"))
	assert.Equal(t, 1, cloudsql.Count("GET", "/startup")-len(notReady(cloudsql.Requests())), "one probe saw it ready")
}

// A Linkerd proxy whose shutdown endpoint is not enabled answers 404: the
// error says what that means and what to do, the 404 is not retried, and
// proxy-await still exits with the child's code.
func TestLinkerdShutdownNotEnabled(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-shutdown-off", "-stay-up")
	p := startPA(t, nil, append([]string{"-S", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")},
		child("exit", "3")...)...)
	assert.Equal(t, 3, p.wait())
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"), "a 404 is not retried")
	var line string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, "shutdown endpoint is not enabled") {
			line = l
		}
	}
	require.NotEmpty(t, line, "no line says the shutdown endpoint is not enabled")
	assert.Contains(t, line, "proxy.enableShutdownEndpoint")
	assert.Contains(t, line, "native sidecar")
}

// A Job whose sidecar runs on, while nothing listens at the shutdown URL:
// the shutdown endpoint is missing, not the proxy gone. proxy-await asks
// again until --shutdown-timeout runs out, then ends with an error that
// names the likely cause for that sidecar (its MissingHint), and exits with
// the job's 0. For each proxy that has such a hint: consul-dataplane on its
// own graceful port while the preset POSTs consul-k8s's, the Cloud SQL Auth
// Proxy without --quitquitquit, Linkerd with its endpoint left off.
func TestMissingShutdownEndpointInAJob(t *testing.T) {
	for _, px := range proxies.All {
		if px.MissingHint == "" {
			continue
		}
		t.Run(px.Preset, func(t *testing.T) {
			t.Parallel() // the budget must run out: in parallel, it is spent once
			fp := testutil.StartFakeProxy(t, "-flavor", px.Preset, "-shutdown-off", "-stay-up")
			ready := "http://" + readyAddr(px, fp) + presetPath(t, preset(px.Preset).Ready)
			shutdown := "http://" + testutil.RefusingAddr(t) + presetPath(t, preset(px.Preset).Shutdown)
			p := startPA(t, nil, append([]string{"-v", "--proxy", px.Preset, "-S", "--shutdown-timeout", "2s",
				"--ready-url", ready, "--shutdown-url", shutdown}, child("exit", "0")...)...)
			assert.Equal(t, 0, p.wait(), "the job's status")
			lines := shutdownLines(t, p)
			require.GreaterOrEqual(t, len(lines), 3, "asked again within the budget")
			assert.Regexp(t, `^proxy-await: error: proxy still running: nothing listens at its shutdown URL url=`+
				regexp.QuoteMeta(shutdown)+` elapsed=\S+ ready_url=`+regexp.QuoteMeta(ready)+` `+
				regexp.QuoteMeta("(hint: "+px.MissingHint+")")+`$`, lines[len(lines)-1])
			assert.Zero(t, fp.Count("POST", presetPath(t, preset(px.Preset).Shutdown)), "nothing reached the sidecar")
		})
	}
}

// shutdownLines are proxy-await's log lines after the child exited, each
// before the last one a refused shutdown POST, numbered from 1: the
// shutdown asked again and nothing else happened.
func shutdownLines(t *testing.T, p *proc) []string {
	t.Helper()
	_, after, ok := strings.Cut(p.stderr.String(), "proxy-await: child exited ")
	require.True(t, ok, "the child's exit is not logged")
	lines := strings.Split(strings.TrimSuffix(after, "\n"), "\n")[1:]
	require.NotEmpty(t, lines, "nothing logged after the child exited")
	for i, l := range lines[:len(lines)-1] {
		assert.Regexp(t, fmt.Sprintf(`^proxy-await: debug: shutdown POST failed url=\S+ attempt=%d error="connection refused"$`, i+1), l)
	}
	return lines
}

// cloudSQLProxy is the Cloud SQL Auth Proxy v2 binary that `make deps`
// builds: $CLOUD_SQL_PROXY, or where the Makefile keeps it.
func cloudSQLProxy(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CLOUD_SQL_PROXY")
	if bin == "" {
		cache, err := os.UserCacheDir()
		require.NoError(t, err)
		bin = filepath.Join(cache, "proxy-await", "tools", "bin", "cloud-sql-proxy")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the Cloud SQL Auth Proxy is not installed at %s: run `make deps` (it builds it from the Go module proxy)", bin)
	}
	return bin
}

// cloudSQL is a real Cloud SQL Auth Proxy v2, offline, on free ports.
type cloudSQL struct {
	startup, quit string // its /startup and /quitquitquit URLs
	cmd           *exec.Cmd
	out           *testutil.Buffer
	done          chan error // its exit status, once it has exited
}

// newCloudSQL prepares cloud-sql-proxy with --health-check and flags.
func newCloudSQL(t *testing.T, flags ...string) *cloudSQL {
	httpAddr, adminAddr := freeAddr(t), freeAddr(t)
	_, httpPort, _ := strings.Cut(httpAddr, ":")
	_, adminPort, _ := strings.Cut(adminAddr, ":")
	_, dbPort, _ := strings.Cut(freeAddr(t), ":")
	args := append([]string{"--token", "fake", "--lazy-refresh", "--health-check"}, flags...)
	args = append(args, "--port", dbPort, "--http-port", httpPort, "--admin-port", adminPort,
		"--sqladmin-api-endpoint", "http://127.0.0.1:1", "project:region:instance")
	c := &cloudSQL{
		startup: "http://" + httpAddr + presetPath(t, preset("cloudsql").Ready),
		quit:    "http://" + adminAddr + presetPath(t, preset("cloudsql").Shutdown),
		cmd:     exec.Command(cloudSQLProxy(t), args...),
		out:     &testutil.Buffer{},
		done:    make(chan error, 1),
	}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	return c
}

// start runs cloud-sql-proxy until it exits or the test ends.
func (c *cloudSQL) start(t *testing.T) {
	require.NoError(t, c.cmd.Start())
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		err := <-c.done
		c.done <- err
		if t.Failed() {
			t.Logf("cloud-sql-proxy output:\n%s", c.out.String())
		}
	})
}

// A real Cloud SQL Auth Proxy v2, offline. proxy-await starts first and
// waits; the job, run once cloud-sql-proxy is up, reads its /startup itself
// (busybox wget) to show it was ready, and fails with 3. proxy-await POSTs
// /quitquitquit, cloud-sql-proxy exits 0, and proxy-await exits 3.
func TestRealCloudSQLProxy(t *testing.T) {
	sql := newCloudSQL(t, "--quitquitquit")
	p := startPA(t, nil, "-S", "--ready-url", sql.startup, "--shutdown-url", sql.quit,
		"--", "sh", "-c", "busybox wget -q -O - "+sql.startup+" && echo; exit 3")
	p.waitLog("waiting for the proxy")
	p.silent("cloud-sql-proxy is not running yet")
	sql.start(t)

	assert.Equal(t, "ok", p.expect(""), "the job saw cloud-sql-proxy ready")
	assert.Equal(t, 3, p.wait())
	select {
	case err := <-sql.done:
		sql.done <- err // for the cleanup
		assert.NoError(t, err, "cloud-sql-proxy exits 0 on /quitquitquit")
	case <-time.After(waitLimit):
		t.Fatalf("cloud-sql-proxy still running %s after proxy-await's shutdown", waitLimit)
	}
	assert.Contains(t, p.stderr.String(), "proxy shutdown requested")
	assert.Contains(t, sql.out.String(), "/quitquitquit received request")
}

// A real Cloud SQL Auth Proxy v2 started without --quitquitquit serves
// /startup but nothing on its admin port: a Job's proxy-await must not
// take the refused POST for a proxy gone. It asks until --shutdown-timeout
// runs out, then names the flag; cloud-sql-proxy is still running.
func TestRealCloudSQLProxyWithoutQuitquitquit(t *testing.T) {
	sql := newCloudSQL(t)
	sql.start(t)
	p := startPA(t, nil, "-v", "--proxy", "cloudsql", "-S", "--shutdown-timeout", "2s", "--ready-url", sql.startup,
		"--shutdown-url", sql.quit, "--", "sh", "-c", "busybox wget -q -O - "+sql.startup+" && echo; exit 0")
	assert.Equal(t, "ok", p.expect(""), "the job saw cloud-sql-proxy ready")
	assert.Equal(t, 0, p.wait())
	lines := shutdownLines(t, p)
	require.GreaterOrEqual(t, len(lines), 3, "asked again within the budget")
	assert.Regexp(t, `^proxy-await: error: proxy still running: nothing listens at its shutdown URL url=`+regexp.QuoteMeta(sql.quit)+
		` elapsed=\S+ ready_url=`+regexp.QuoteMeta(sql.startup)+` \(hint: cloud-sql-proxy serves /quitquitquit only when started with --quitquitquit: `,
		lines[len(lines)-1])
	select {
	case err := <-sql.done:
		sql.done <- err // for the cleanup
		t.Fatalf("cloud-sql-proxy exited (%v): nothing should have stopped it", err)
	default:
	}
}

// The fake proxy answers as the proxy table says each proxy does: its
// readiness endpoint before and once ready, its shutdown endpoint to a
// method it does not take and to one it does, on the listeners the table's
// ports give: the tests above are only as good as these answers.
func TestFakeProxyAnswersAsEachSidecar(t *testing.T) {
	type answer struct {
		method, path string
		status       int
		body         string
	}
	for _, px := range proxies.All {
		t.Run(px.Preset, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-flavor", px.Preset, "-ready-after", "never", "-stay-up")
			readyURL, shutdownURL := sidecarURLs(t, fp, px.Preset)
			check := func(rawURL string, a answer) {
				t.Helper()
				req, err := http.NewRequest(a.method, rawURL, nil)
				require.NoError(t, err)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Equal(t, a.status, resp.StatusCode, "%s %s", a.method, a.path)
				assert.Equal(t, a.body, string(body), "%s %s", a.method, a.path)
			}
			r, q := px.Ready, px.Shutdown
			check(readyURL, answer{"GET", r.Path, r.NotReady.Status, r.NotReady.Body})
			fp.Signal(syscall.SIGUSR1)
			fp.WaitFor("turned ready", func(rs []testutil.Request) bool {
				return len(rs) > 0 && rs[len(rs)-1].Note == "turned ready"
			})
			check(readyURL, answer{"GET", r.Path, r.OK.Status, r.OK.Body})
			if !q.Takes("PUT", true) {
				check(shutdownURL, answer{"PUT", q.Path, q.WrongMethod.Status, q.WrongMethod.Body})
			}
			for _, method := range []string{"GET", "POST"} {
				if q.Takes(method, true) {
					check(shutdownURL, answer{method, q.Path, q.OK.Status, q.OK.Body})
				}
			}
		})
	}
	// Linkerd's endpoint left off answers with the table's Off answer.
	fp := testutil.StartFakeProxy(t, "-shutdown-off", "-stay-up")
	resp, err := http.Post(fp.URL("/shutdown"), "", nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	linkerd := proxies.Lookup("linkerd")
	assert.Equal(t, linkerd.Off.Status, resp.StatusCode)
	assert.Equal(t, linkerd.Off.Body+"\n", string(body))
}

// preset is the named preset, which must exist.
func preset(name string) config.Preset {
	p, ok := config.LookupPreset(name)
	if !ok {
		panic("no preset " + name)
	}
	return p
}

// freeAddr returns a 127.0.0.1 address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
