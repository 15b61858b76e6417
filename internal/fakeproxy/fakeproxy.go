// Package fakeproxy stands in for a sidecar's admin server in tests and in
// `make demo` (testdata/fakeproxy is the command; the tests' binary runs Main
// under the name fakeproxy). It plays the proxy of the proxy table (package
// proxies) that -flavor names, linkerd by default, and answers as the table
// says that proxy does: its readiness endpoint with its OK or NotReady
// answer; its shutdown endpoint with its OK answer to a method it takes,
// its WrongMethod answer to another, and 403 to a client not on loopback
// unless it takes any client. The two are on one listener, "admin", where
// the proxy serves them on one port; else the readiness endpoint is on
// "ready" and the shutdown endpoint on "admin". Each listens where the table
// puts it unless -addr and -ready-addr say otherwise. With -shutdown-off the
// shutdown endpoint is switched off as the table says the proxy's can be:
// it answers with the proxy's Off answer (Linkerd's 404 since 2.16), or,
// for a proxy that serves it only when started with a flag of its own (the
// Cloud SQL Auth Proxy's --quitquitquit), nothing listens for it.
//
// After a shutdown it has answered, it closes its listeners and exits, as a
// proxy does, so a second POST is refused; with -stay-up it keeps answering,
// so that a test can count a second one. It logs every request as one JSON
// object a line to -log, for tests to assert on.
//
// Faults for tests: -ready-fault and -shutdown-fault make the endpoint hang,
// answer 500, answer a redirect, or reset the connection.
//
// It turns ready after -ready-after ("never" waits for SIGUSR1, which also
// ends a readiness fault), or once it has answered -ready-after-probes
// probes not ready, so that a scenario sees the proxy turn ready while
// proxy-await waits without timing anything; SIGUSR2 makes it not ready
// again. A request to any other path is logged and answered 404, so tests
// see stray requests (a followed redirect, say). It prints "listening NAME
// ADDR" for each listener once it accepts connections, then "serving";
// Listening reads that.
package fakeproxy

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/proxies"
)

type proxy struct {
	px            *proxies.Proxy
	shutdownOff   bool
	ready         atomic.Bool
	readyFault    atomic.Value // string
	notReadyLeft  int          // -ready-after-probes: not-ready answers left, under logMu
	shutdownFault string
	log           *json.Encoder
	logMu         sync.Mutex
	stop          chan struct{}
	stopOnce      sync.Once
}

// addrOf is where the real proxy serves e, by the proxy table: the fake
// listens where proxy-await's presets look.
func addrOf(e proxies.Endpoint) string {
	return net.JoinHostPort(proxies.Host, strconv.Itoa(e.Port))
}

// flavors are the proxies the fake can play, as -flavor names them.
func flavors() string {
	var names []string
	for _, px := range proxies.All {
		names = append(names, px.Preset)
	}
	return strings.Join(names, ", ")
}

// listener is one of the fake's listeners, and the endpoints it serves.
type listener struct {
	name, addr      string
	ready, shutdown bool
}

// listeners are where the fake serves px's endpoints: addr and readyAddr
// where given, else the table's ports; none for a shutdown endpoint that
// off leaves without a listener.
func listeners(px *proxies.Proxy, addr, readyAddr string, off bool) []listener {
	admin := listener{name: "admin", addr: cmp.Or(addr, addrOf(px.Shutdown)), shutdown: true}
	if px.Ready.Port == px.Shutdown.Port {
		admin.ready = true
		return []listener{admin}
	}
	ready := listener{name: "ready", addr: cmp.Or(readyAddr, addrOf(px.Ready)), ready: true}
	if off && px.Off.Status == 0 && px.Shutdown.Flag != "" {
		return []listener{ready} // started without the flag: nothing listens
	}
	return []listener{admin, ready}
}

// Main is the fakeproxy command: it reads its flags from os.Args and runs
// until a shutdown it answers, SIGTERM or SIGINT.
func Main() {
	flags := flag.NewFlagSet("fakeproxy", flag.ExitOnError)
	flavor := flags.String("flavor", proxies.Default.Preset, "the proxy to play: "+flavors())
	addr := flags.String("addr", "", "the admin listener: the shutdown endpoint's, and the readiness endpoint's where the proxy serves both on one port (default: the proxy's port)")
	readyAddr := flags.String("ready-addr", "", "the readiness endpoint's listener, where the proxy serves it on a port of its own (default: the proxy's port)")
	shutdownOff := flags.Bool("shutdown-off", false, "switch the shutdown endpoint off as the proxy's can be: its Off answer, or no listener for one that needs a flag of its own")
	readyAfter := flags.String("ready-after", "0s", `turn ready after this long; "never" waits for SIGUSR1`)
	readyAfterProbes := flags.Int("ready-after-probes", 0, "turn ready once this many probes were answered not ready (instead of -ready-after)")
	logPath := flags.String("log", "", "append a JSON line per request to this file")
	readyFault := flags.String("ready-fault", "", "readiness fault: hang, 500, redirect or reset")
	shutdownFault := flags.String("shutdown-fault", "", "shutdown fault: hang, 500, redirect or reset")
	stayUp := flags.Bool("stay-up", false, "keep running after a shutdown request")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: it exits on an error

	px := proxies.Lookup(*flavor)
	if px == nil {
		fatal(fmt.Errorf("unknown flavor %q: choose %s", *flavor, flavors()))
	}
	p := &proxy{px: px, shutdownOff: *shutdownOff, shutdownFault: *shutdownFault, stop: make(chan struct{})}
	p.readyFault.Store(*readyFault)
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		p.log = json.NewEncoder(f)
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGINT)
	switch {
	case *readyAfterProbes > 0 && *readyAfter != "0s":
		fatal(fmt.Errorf("-ready-after-probes and -ready-after are two ways to turn ready: give one"))
	case *readyAfterProbes > 0:
		p.notReadyLeft = *readyAfterProbes
	case *readyAfter == "never":
	default:
		d, err := time.ParseDuration(*readyAfter)
		if err != nil {
			fatal(err)
		}
		if d == 0 {
			p.ready.Store(true)
		} else {
			time.AfterFunc(d, p.turnReady)
		}
	}

	var servers []*http.Server
	for _, l := range listeners(px, *addr, *readyAddr, *shutdownOff) {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			fatal(err)
		}
		srv := &http.Server{Handler: p.mux(l)}
		servers = append(servers, srv)
		go srv.Serve(ln)
		fmt.Printf("listening %s %s\n", l.name, ln.Addr())
	}
	fmt.Println("serving")

	for {
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGUSR1:
				p.readyFault.Store("")
				p.turnReady()
			case syscall.SIGUSR2:
				p.ready.Store(false)
			default:
				p.close(servers)
				return
			}
		case <-p.stop:
			if !*stayUp {
				p.close(servers)
				return
			}
		}
	}
}

func (p *proxy) close(servers []*http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(ctx)
	}
}

// mux serves a listener's endpoints, and 404 anywhere else.
func (p *proxy) mux(l listener) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.answer(w, r, http.StatusNotFound, "not found\n")
	})
	if l.ready {
		mux.HandleFunc(p.px.Ready.Path, p.readyHandler)
	}
	if l.shutdown {
		mux.HandleFunc(p.px.Shutdown.Path, p.shutdownHandler)
	}
	return mux
}

func (p *proxy) readyHandler(w http.ResponseWriter, r *http.Request) {
	if p.fault(w, r, p.readyFault.Load().(string)) {
		return
	}
	if !p.px.Ready.Takes(r.Method, false) {
		p.answer(w, r, http.StatusMethodNotAllowed, "method not allowed\n")
		return
	}
	// The state is read and the probe logged under the log's lock, which
	// turnReady holds too: the log shows every ready answer after the
	// "turned ready" line, and every not-ready answer before it.
	p.logMu.Lock()
	a := p.px.Ready.NotReady
	if p.ready.Load() {
		a = p.px.Ready.OK
	}
	p.recordLocked(r.Method, r.URL.Path, r.RemoteAddr, "", a.Status)
	if !p.ready.Load() && p.notReadyLeft > 0 {
		if p.notReadyLeft--; p.notReadyLeft == 0 {
			p.ready.Store(true)
			p.recordLocked("-", "-", "-", "turned ready", 0)
		}
	}
	p.logMu.Unlock()
	reply(w, a.Status, a.Body)
}

// turnReady makes the proxy ready and logs "turned ready", as one step for
// anyone reading the log.
func (p *proxy) turnReady() {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	p.ready.Store(true)
	p.recordLocked("-", "-", "-", "turned ready", 0)
}

func (p *proxy) shutdownHandler(w http.ResponseWriter, r *http.Request) {
	e := p.px.Shutdown
	if !e.Takes(r.Method, true) {
		p.answer(w, r, e.WrongMethod.Status, e.WrongMethod.Body)
		return
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); !e.AnyClient && (ip == nil || !ip.IsLoopback()) {
		p.answer(w, r, http.StatusForbidden, "shutdown is only allowed from localhost\n")
		return
	}
	if p.shutdownOff { // after the client check, as in Linkerd's proxy
		p.answer(w, r, p.px.Off.Status, p.px.Off.Body+"\n")
		return
	}
	if p.fault(w, r, p.shutdownFault) {
		return
	}
	p.answer(w, r, e.OK.Status, e.OK.Body)
	p.stopOnce.Do(func() { close(p.stop) })
}

// fault plays a broken endpoint; it says whether it answered.
func (p *proxy) fault(w http.ResponseWriter, r *http.Request, fault string) bool {
	switch fault {
	case "":
		return false
	case "hang":
		p.record(r.Method, r.URL.Path, r.RemoteAddr, "hang", 0)
		<-r.Context().Done()
	case "500":
		p.answer(w, r, http.StatusInternalServerError, "internal error\n")
	case "redirect":
		w.Header().Set("Location", "/elsewhere")
		p.answer(w, r, http.StatusFound, "found\n")
	case "reset":
		p.record(r.Method, r.URL.Path, r.RemoteAddr, "reset", 0)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0)
			}
			conn.Close()
		}
	default:
		fatal(fmt.Errorf("unknown fault %q", fault))
	}
	return true
}

func (p *proxy) answer(w http.ResponseWriter, r *http.Request, status int, body string) {
	p.record(r.Method, r.URL.Path, r.RemoteAddr, "", status)
	reply(w, status, body)
}

func reply(w http.ResponseWriter, status int, body string) {
	switch {
	case strings.HasPrefix(body, "{"):
		w.Header().Set("Content-Type", "application/json")
	case body != "":
		w.Header().Set("Content-Type", "text/plain")
	}
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// entry is one line of the request log.
type entry struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Remote string    `json:"remote"`
	Status int       `json:"status,omitempty"`
	Note   string    `json:"note,omitempty"`
}

func (p *proxy) record(method, path, remote, note string, status int) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	p.recordLocked(method, path, remote, note, status)
}

// recordLocked is record for a caller that holds logMu.
func (p *proxy) recordLocked(method, path, remote, note string, status int) {
	if p.log == nil {
		return
	}
	_ = p.log.Encode(entry{Time: time.Now(), Method: method, Path: path, Remote: remote, Status: status, Note: note})
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fakeproxy:", err)
	os.Exit(1)
}
