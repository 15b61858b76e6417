// Package fakeproxy stands in for a sidecar's admin server in tests and in
// `make demo` (testdata/fakeproxy is the command; the tests' binary runs Main
// under the name fakeproxy). It answers as docs/sidecars.md says the real ones do:
//
//   - linkerd: GET /ready answers "503 not ready\n" until ready, then
//     "200 ready\n" (text/plain); POST /shutdown answers "200 shutdown\n" to a
//     loopback client, 403 to any other client, 405 to any other method. With
//     -shutdown-disabled, as proxies ship since Linkerd 2.16, POST /shutdown answers
//     "404 shutdown endpoint is not enabled\n".
//   - istio: GET /healthz/ready on the ready listener, POST /quitquitquit
//     on the admin listener (loopback only).
//   - envoy: GET /ready and POST /quitquitquit on the admin listener.
//   - cloudsql (Cloud SQL Auth Proxy v2): GET /startup on the ready listener
//     ("200 ok", "503 error" before); GET or POST /quitquitquit on the admin
//     listener answers 200 with no body, 400 to any other method. With
//     -quitquitquit=false, as cloud-sql-proxy started without --quitquitquit,
//     there is no admin listener.
//   - dapr (daprd): GET /v1.0/healthz/outbound answers 204 once ready, 500
//     with a JSON error before; POST /v1.0/shutdown answers 204; daprd
//     takes both from any client.
//   - consul (consul-dataplane): Envoy's GET /ready on the admin listener
//     ("200 LIVE\n", "503 PRE_INITIALIZING\n" before); /graceful_shutdown on
//     the lifecycle listener (the graceful port, 20600 as consul-k8s sets
//     it) answers 200 with no body to any method.
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
// again. A request to
// any other path is logged and answered 404, so tests see stray requests
// (a followed redirect, say). It prints "listening NAME ADDR" for each listener
// once it accepts connections, then "serving"; Listening reads that.
package fakeproxy

import (
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
	flavor           string
	shutdownDisabled bool
	ready            atomic.Bool
	readyFault       atomic.Value // string
	notReadyLeft     int          // -ready-after-probes: not-ready answers left, under logMu
	shutdownFault    string
	log              *json.Encoder
	logMu            sync.Mutex
	stop             chan struct{}
	stopOnce         sync.Once
}

// defaultAddr is where the real proxy serves e, by the proxy table: the
// fake listens where proxy-await's presets look.
func defaultAddr(e proxies.Endpoint) string {
	return net.JoinHostPort(proxies.Host, strconv.Itoa(e.Port))
}

// Main is the fakeproxy command: it reads its flags from os.Args and runs
// until a shutdown it answers, SIGTERM or SIGINT.
func Main() {
	flags := flag.NewFlagSet("fakeproxy", flag.ExitOnError)
	flavor := flags.String("flavor", "linkerd", "linkerd, istio, envoy, cloudsql, dapr or consul")
	addr := flags.String("addr", defaultAddr(proxies.Lookup("linkerd").Ready), "admin listener (shutdown; readiness too for linkerd, envoy, dapr and consul)")
	readyAddr := flags.String("ready-addr", defaultAddr(proxies.Lookup("istio").Ready), "readiness listener of istio and cloudsql")
	lifecycleAddr := flags.String("lifecycle-addr", defaultAddr(proxies.Lookup("consul").Shutdown), "consul-dataplane's lifecycle (shutdown) listener")
	quitquitquit := flags.Bool("quitquitquit", true, "cloudsql: serve /quitquitquit on the admin listener; false opens no admin listener")
	shutdownDisabled := flags.Bool("shutdown-disabled", false, "linkerd: answer 404, the shutdown endpoint is not enabled")
	readyAfter := flags.String("ready-after", "0s", `turn ready after this long; "never" waits for SIGUSR1`)
	readyAfterProbes := flags.Int("ready-after-probes", 0, "turn ready once this many probes were answered not ready (instead of -ready-after)")
	logPath := flags.String("log", "", "append a JSON line per request to this file")
	readyFault := flags.String("ready-fault", "", "readiness fault: hang, 500, redirect or reset")
	shutdownFault := flags.String("shutdown-fault", "", "shutdown fault: hang, 500, redirect or reset")
	stayUp := flags.Bool("stay-up", false, "keep running after a shutdown request")
	_ = flags.Parse(os.Args[1:]) // ExitOnError: it exits on an error

	p := &proxy{flavor: *flavor, shutdownDisabled: *shutdownDisabled, shutdownFault: *shutdownFault, stop: make(chan struct{})}
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

	listeners := map[string]string{"admin": *addr}
	switch p.flavor {
	case "linkerd", "envoy", "dapr":
	case "istio", "cloudsql":
		listeners["ready"] = *readyAddr
		if p.flavor == "cloudsql" && !*quitquitquit {
			delete(listeners, "admin")
		}
	case "consul":
		listeners["lifecycle"] = *lifecycleAddr
	default:
		fatal(fmt.Errorf("unknown flavor %q", p.flavor))
	}
	var servers []*http.Server
	for _, name := range []string{"admin", "ready", "lifecycle"} {
		a, ok := listeners[name]
		if !ok {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fatal(err)
		}
		srv := &http.Server{Handler: p.mux(name, listeners)}
		servers = append(servers, srv)
		go srv.Serve(ln)
		fmt.Printf("listening %s %s\n", name, ln.Addr())
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

func (p *proxy) mux(listener string, listeners map[string]string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.answer(w, r, http.StatusNotFound, "not found\n")
	})
	// Each endpoint where the proxy table says the flavor serves it: on a
	// listener of its own, or else on the admin listener.
	px := proxies.Lookup(p.flavor)
	_, ownReady := listeners["ready"]
	_, ownLifecycle := listeners["lifecycle"]
	if listener == "ready" || listener == "admin" && !ownReady {
		mux.HandleFunc(px.Ready.Path, p.readyHandler)
	}
	if listener == "lifecycle" || listener == "admin" && !ownLifecycle {
		mux.HandleFunc(px.Shutdown.Path, p.shutdownHandler)
	}
	return mux
}

// readyAnswers are each flavor's readiness answers: ready, then not ready.
var readyAnswers = map[string][2]answer{
	"linkerd":  {{http.StatusOK, "ready\n"}, {http.StatusServiceUnavailable, "not ready\n"}},
	"istio":    {{http.StatusOK, "ready\n"}, {http.StatusServiceUnavailable, "not ready\n"}},
	"envoy":    {{http.StatusOK, "ready\n"}, {http.StatusServiceUnavailable, "not ready\n"}},
	"cloudsql": {{http.StatusOK, "ok"}, {http.StatusServiceUnavailable, "error"}},
	"dapr": {{http.StatusNoContent, ""}, {http.StatusInternalServerError,
		`{"errorCode":"ERR_HEALTH_OUTBOUND_NOT_READY","message":"dapr outbound is not ready"}`}},
	"consul": {{http.StatusOK, "LIVE\n"}, {http.StatusServiceUnavailable, "PRE_INITIALIZING\n"}},
}

// shutdownAnswers are each flavor's answer to an accepted shutdown request.
var shutdownAnswers = map[string]answer{
	"linkerd":  {http.StatusOK, "shutdown\n"},
	"istio":    {http.StatusOK, ""},
	"envoy":    {http.StatusOK, "OK\n"},
	"cloudsql": {http.StatusOK, ""},
	"dapr":     {http.StatusNoContent, ""},
	"consul":   {http.StatusOK, ""},
}

type answer struct {
	status int
	body   string
}

func (p *proxy) readyHandler(w http.ResponseWriter, r *http.Request) {
	if p.fault(w, r, p.readyFault.Load().(string)) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		p.answer(w, r, http.StatusMethodNotAllowed, "method not allowed\n")
		return
	}
	// The state is read and the probe logged under the log's lock, which
	// turnReady holds too: the log shows every ready answer after the
	// "turned ready" line, and every not-ready answer before it.
	p.logMu.Lock()
	a := readyAnswers[p.flavor][1]
	if p.ready.Load() {
		a = readyAnswers[p.flavor][0]
	}
	p.recordLocked(r.Method, r.URL.Path, r.RemoteAddr, "", a.status)
	if !p.ready.Load() && p.notReadyLeft > 0 {
		if p.notReadyLeft--; p.notReadyLeft == 0 {
			p.ready.Store(true)
			p.recordLocked("-", "-", "-", "turned ready", 0)
		}
	}
	p.logMu.Unlock()
	reply(w, a.status, a.body)
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
	switch {
	case p.flavor == "consul": // any method
	case p.flavor == "cloudsql" && r.Method != http.MethodGet && r.Method != http.MethodPost:
		p.answer(w, r, http.StatusBadRequest, "")
		return
	case p.flavor != "cloudsql" && r.Method != http.MethodPost:
		p.answer(w, r, http.StatusMethodNotAllowed, "method not allowed\n")
		return
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); p.flavor != "dapr" && (ip == nil || !ip.IsLoopback()) {
		p.answer(w, r, http.StatusForbidden, "shutdown is only allowed from localhost\n")
		return
	}
	if p.shutdownDisabled { // after the client check, as in Linkerd's proxy
		p.answer(w, r, http.StatusNotFound, "shutdown endpoint is not enabled\n")
		return
	}
	if p.fault(w, r, p.shutdownFault) {
		return
	}
	a := shutdownAnswers[p.flavor]
	p.answer(w, r, a.status, a.body)
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
