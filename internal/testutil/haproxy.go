package testutil

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// HAProxy is a configuration of HAProxy for the tests: one HTTP frontend on
// Addr that sends every request to one backend server over connections it
// keeps and shares among its clients, as a mesh proxy does. The tests run
// it behind proxy-await (its graceful stop) and in front of proxy-await's
// child (the drain of a pooled connection).
type HAProxy struct {
	Bin    string // the haproxy binary
	Addr   string // the frontend's address
	Config string // the configuration file
}

// NewHAProxy writes the configuration of an HAProxy in front of backend, on
// a free loopback port, and finds the binary; it starts nothing.
func NewHAProxy(t testing.TB, backend string) *HAProxy {
	t.Helper()
	h := &HAProxy{Bin: haproxyPath(t), Config: filepath.Join(t.TempDir(), "haproxy.cfg")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h.Addr = ln.Addr().String()
	require.NoError(t, ln.Close())
	require.NoError(t, os.WriteFile(h.Config, []byte(fmt.Sprintf(`global
    maxconn 100

defaults
    mode http
    timeout connect 10s
    timeout client 1m
    timeout server 1m
    timeout http-keep-alive 1m

frontend web
    bind %s
    default_backend app

backend app
    http-reuse always
    server app1 %s
`, h.Addr, backend)), 0o644))
	return h
}

// Args is HAProxy's command line with mode, the arguments that choose how
// it runs (-db, -W): the binary, then mode, then the configuration.
func (h *HAProxy) Args(mode ...string) []string {
	return append(append([]string{h.Bin}, mode...), "-f", h.Config)
}

// Start runs HAProxy in the foreground, until the test ends, and returns
// once it serves path.
func (h *HAProxy) Start(t testing.TB, path string) {
	t.Helper()
	args := h.Args("-db")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	Eventually(t, func() bool { return h.Serves(path) }, "HAProxy did not serve on %s", h.Addr)
}

// Serves says whether a GET of path through HAProxy, on a connection of its
// own, answers 200.
func (h *HAProxy) Serves(path string) bool {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + h.Addr + path)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// haproxyPath finds the haproxy binary; Debian installs it in /usr/sbin,
// which a user's PATH may lack.
func haproxyPath(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		if p := filepath.Join(dir, "haproxy"); isFile(p) {
			return p
		}
	}
	t.Fatal("haproxy is not installed: run `make deps` (or apt-get install haproxy)")
	return ""
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
