// Package probes serves the pod's probes on --probe-port, so that the
// kubelet's probes reach proxy-await instead of a port the drain watches:
// the kubelet keeps probing a terminating pod until it exits, and a probe
// against a watched port is traffic that never lets the drain be quiet.
//
// GET /ready, /live and /startup answer 200 when the app's own check
// (--app-probe) succeeds and 503 when it fails. Before the command starts,
// /ready and /startup answer 503 and /live 200: proxy-await is alive and
// waiting for its proxy, and a restart would not make that faster. From the
// stop signal on, /ready answers 503, so that the pod leaves its Services
// whatever sent the signal. Without --app-probe the app is healthy while it
// runs.
//
// The app's check is made from proxy-await's own sockets, and Own says
// which they are, so that the drain never counts them as traffic.
package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// The paths the kubelet's probes are pointed at.
const (
	ReadyPath   = "/ready"
	LivePath    = "/live"
	StartupPath = "/startup"
)

const (
	// maxHeader bounds the app's answer to a check, as it bounds a proxy's.
	maxHeader = 64 << 10
	// checkLimit bounds one check when the kubelet's own request outlives
	// it: the kubelet gives up after its probe's timeoutSeconds (1 s by
	// default) and closes the connection, which ends the check sooner.
	checkLimit = 30 * time.Second
	// ownFor is how long a connection to the app is remembered after it
	// closed: longer than TIME_WAIT (60 s on Linux), during which its local
	// port is not reused for the same peer, so that the drain, which may see
	// the app's end of it later, still knows it for proxy-await's.
	ownFor = 2 * time.Minute
)

// phase is where the command is in its life, as the probes answer it.
type phase int32

const (
	waiting  phase = iota // the command has not started: proxy-await awaits the proxy
	running               // the command runs
	stopping              // the stop signal arrived: not ready, still alive
)

// Options says where to serve and how to check the app.
type Options struct {
	Port   uint16 // --probe-port; all the pod's addresses
	App    string // --app-probe: "http://127.0.0.1:PORT/PATH", "tcp:PORT", or "" for none
	Logger *slog.Logger
}

// Server answers the pod's probes.
type Server struct {
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	phase atomic.Int32
	check func(context.Context) error // nil: healthy while the command runs
	own   ownConns
}

// Listen starts serving the probes on o.Port. The command is not yet
// running: /ready and /startup answer 503 until Started.
func Listen(o Options) (*Server, error) {
	s := &Server{log: o.Logger}
	if o.App != "" {
		check, err := s.appCheck(o.App)
		if err != nil {
			return nil, err
		}
		s.check = check
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("", fmt.Sprint(o.Port)))
	if err != nil {
		return nil, err
	}
	s.ln = ln
	mux := http.NewServeMux()
	mux.HandleFunc(ReadyPath, s.answer(ReadyPath))
	mux.HandleFunc(LivePath, s.answer(LivePath))
	mux.HandleFunc(StartupPath, s.answer(StartupPath))
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxHeader,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	attrs := []any{"event", "probes_serving", "address", ln.Addr().String()}
	if o.App != "" {
		attrs = append(attrs, "app_probe", redact.URL(o.App))
	}
	o.Logger.Info("serving the pod's probes", attrs...)
	return s, nil
}

// Addr is the address the probes are served on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Started says the command runs: the probes answer with the app's check.
// A nil Server serves nothing, here and below.
func (s *Server) Started() {
	if s != nil {
		s.phase.CompareAndSwap(int32(waiting), int32(running))
	}
}

// Stopping says the stop signal arrived: /ready answers 503 from now on.
func (s *Server) Stopping() {
	if s != nil {
		s.phase.Store(int32(stopping))
	}
}

// Close stops serving.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	return s.srv.Close()
}

// Own says whether addr is the local end of a connection that proxy-await
// opened to the app for a check (open, or closed within ownFor).
func (s *Server) Own(addr netip.AddrPort) bool { return s != nil && s.own.has(addr) }

// answer is the handler of one probe path.
func (s *Server) answer(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := s.judge(r.Context(), path); err != nil {
			s.log.Debug("probe answered 503", "event", "probe_failed", "path", path, "error", err.Error())
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "%s\n", err)
			return
		}
		fmt.Fprint(w, "ok\n")
	}
}

// judge says why path's probe fails now, or nil.
func (s *Server) judge(ctx context.Context, path string) error {
	switch phase(s.phase.Load()) {
	case waiting:
		if path == LivePath {
			return nil
		}
		return errors.New("not started: waiting for the proxy")
	case stopping:
		if path == ReadyPath {
			return errors.New("stopping")
		}
	}
	if s.check == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkLimit)
	defer cancel()
	return s.check(ctx)
}

// appCheck turns --app-probe into a check. The value was validated by
// config; an error here is one it let through.
func (s *Server) appCheck(app string) (func(context.Context) error, error) {
	dialer := &net.Dialer{Control: s.own.bindFirst}
	if port, ok := strings.CutPrefix(app, "tcp:"); ok {
		addr := net.JoinHostPort("127.0.0.1", port)
		return func(ctx context.Context) error {
			c, err := dialer.DialContext(ctx, "tcp", addr)
			if err != nil {
				return err
			}
			return c.Close()
		}, nil
	}
	if !strings.HasPrefix(app, "http://") && !strings.HasPrefix(app, "https://") {
		return nil, fmt.Errorf("--app-probe %q: want http://127.0.0.1:PORT/PATH or tcp:PORT", app)
	}
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:            dialer.DialContext,
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: maxHeader,
			// As the kubelet's HTTPS probes: the app's certificate is
			// not verified.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a probe of the pod's own app
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, app, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "proxy-await-probe")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		// The status decides; the body is not waited for.
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("the app's check answered %s", resp.Status)
		}
		return nil
	}, nil
}

// ownConns remembers the local addresses of the connections proxy-await
// opened to the app.
type ownConns struct {
	mu    sync.Mutex
	addrs map[netip.AddrPort]time.Time // when it was bound
}

// bindFirst binds a socket to a local port before it connects, and notes
// the port, so that the app's end of the connection is known for
// proxy-await's from the moment it exists.
func (o *ownConns) bindFirst(network, address string, c syscall.RawConn) error {
	local := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	var sa syscall.Sockaddr = local
	if strings.HasSuffix(network, "6") {
		sa = &syscall.SockaddrInet6{Addr: [16]byte{15: 1}}
	}
	var err error
	cerr := c.Control(func(fd uintptr) {
		if err = syscall.Bind(int(fd), sa); err != nil {
			return
		}
		var got syscall.Sockaddr
		if got, err = syscall.Getsockname(int(fd)); err != nil {
			return
		}
		o.add(got)
	})
	if cerr != nil {
		return cerr
	}
	return err
}

func (o *ownConns) add(sa syscall.Sockaddr) {
	var ap netip.AddrPort
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		ap = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *syscall.SockaddrInet6:
		ap = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	default:
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.addrs == nil {
		o.addrs = map[netip.AddrPort]time.Time{}
	}
	// A check lasts at most checkLimit: what was bound before that and
	// ownFor is closed and long forgotten by the kernel.
	for a, t := range o.addrs {
		if now.Sub(t) > checkLimit+ownFor {
			delete(o.addrs, a)
		}
	}
	o.addrs[ap] = now
}

func (o *ownConns) has(ap netip.AddrPort) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.addrs[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())]
	return ok
}
