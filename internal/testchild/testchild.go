// Package testchild lets a test binary impersonate the child programs that
// proxy-await's tests run, as Go's os/exec tests do: a test starts its own
// binary with TESTCHILD_SCENARIO naming a scenario, and TestMain calls Main
// first thing, which runs the scenario and exits instead of the tests.
//
// Every scenario that waits for a signal from the test prints "ready" on
// stdout once its handlers are set, so tests never sleep to synchronise.
// Scenarios that only wait for stdin to close ("cat", "wait-stdin") print
// nothing of their own: closing stdin needs no synchronisation.
package testchild

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Env names the scenario; its arguments are the command's own arguments. It
// passes through proxy-await to the child, so it is not a PROXY_AWAIT_
// name: proxy-await would warn of it.
const Env = "TESTCHILD_SCENARIO"

// Command returns a command running scenario in this test binary.
func Command(scenario string, args ...string) *exec.Cmd {
	cmd := exec.Command(Self(), args...)
	cmd.Env = append(os.Environ(), Env+"="+scenario)
	return cmd
}

// Self is the path of the running test binary.
func Self() string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe
}

// NoRaceExitSleep stops the race detector's one-second sleep at exit in the
// children started from now on; it only slows the tests down.
func NoRaceExitSleep() {
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// Main runs the scenario named by Env, if any, and exits; otherwise it returns.
func Main() {
	scenario, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	os.Unsetenv(Env)
	run, ok := scenarios[scenario]
	if !ok {
		fmt.Fprintf(os.Stderr, "testchild: unknown scenario %q\n", scenario)
		os.Exit(99)
	}
	run(os.Args[1:])
	os.Exit(0)
}

// Add adds a scenario that a package's own tests run, for one that needs
// the package's unexported code. Call it from an init function of a test
// file, before TestMain calls Main.
func Add(scenario string, run func(args []string)) { scenarios[scenario] = run }

var scenarios = map[string]func(args []string){
	// exit N: exit with status N.
	"exit": func(args []string) { os.Exit(atoi(args[0])) },

	// signals [EXIT_ON...]: catch every signal but SIGKILL, SIGSTOP,
	// SIGCHLD, SIGURG, SIGPROF and 32 to 34, print "ready", then "signal
	// NAME UNIXNANO" for each one it gets; exit 0 after one of EXIT_ON
	// (names such as SIGTERM) or at EOF on stdin.
	"signals": printSignals,

	// exit-on CODE SIGNAL...: as "signals SIGNAL...", but exit CODE after
	// one of them, or at EOF on stdin.
	"exit-on": func(args []string) {
		printSignals(args[1:])
		os.Exit(atoi(args[0]))
	},

	// ignore-term: ignore SIGTERM and SIGINT, print "ready", then wait for
	// stdin to close.
	"ignore-term": func([]string) {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
	},

	// cat: copy stdin to stdout.
	"cat": func([]string) { _, _ = io.Copy(os.Stdout, os.Stdin) },

	// args: print each argument on its own line.
	"args": func(args []string) {
		for _, a := range args {
			fmt.Println(a)
		}
	},

	// env NAME...: print NAME=VALUE for each variable.
	"env": func(args []string) {
		for _, n := range args {
			fmt.Printf("%s=%s\n", n, os.Getenv(n))
		}
	},

	// orphan: start a grandchild through a parent that exits at once, so the
	// grandchild is orphaned; print "orphan PID" (the grandchild's), then
	// behave as "until-term". The grandchild exits when stdin closes,
	// leaving a zombie for the reaper while this process still runs.
	"orphan": func([]string) {
		r, w, _ := os.Pipe()
		mid := Command("spawn-orphan")
		mid.Stdout, mid.Stdin = w, os.Stdin
		if err := mid.Run(); err != nil {
			panic(err)
		}
		w.Close()
		line, _ := bufio.NewReader(r).ReadString('\n')
		fmt.Print(line)
		untilTerm(nil)
	},

	// spawn-orphan: start "wait-stdin" and exit without waiting for it.
	"spawn-orphan": func([]string) {
		gc := Command("wait-stdin")
		gc.Stdin = os.Stdin
		if err := gc.Start(); err != nil {
			panic(err)
		}
		fmt.Printf("orphan %d\n", gc.Process.Pid)
	},

	// wait-stdin: exit once stdin closes.
	"wait-stdin": func([]string) { _, _ = io.Copy(io.Discard, os.Stdin) },

	// group: start an "until-term" member in our process group, print
	// "member PID", then behave as "signals". The member prints "ready" and
	// its signals to our stdout too, in any order with ours, and exits on
	// SIGTERM only; we exit at EOF on stdin, leaving it behind.
	"group": func([]string) {
		m := Command("until-term")
		m.Stdout = os.Stdout
		if err := m.Start(); err != nil {
			panic(err)
		}
		fmt.Printf("member %d\n", m.Process.Pid)
		printSignals(nil)
	},

	// stubborn-group: start an "ignore-term-forever" member in our process
	// group, holding none of our descriptors, print "member PID" once it is
	// set up, then behave as "signals SIGTERM".
	"stubborn-group": func([]string) {
		r, w, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		m := Command("ignore-term-forever")
		m.Stdout = w
		if err := m.Start(); err != nil {
			panic(err)
		}
		w.Close()
		if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
			panic(err)
		}
		r.Close()
		fmt.Printf("member %d\n", m.Process.Pid)
		printSignals([]string{"SIGTERM"})
	},

	// ignore-term-forever: ignore SIGTERM and SIGINT, print "ready", and
	// run until killed.
	"ignore-term-forever": func([]string) {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	},

	// until-term: like "signals SIGTERM", but stdin's EOF does not end it.
	"until-term": untilTerm,

	// listen ADDR-FILE: listen on 127.0.0.1:0, answer each connection
	// "hello" and close it; once its signal handlers are set, write the
	// address to ADDR-FILE and print "ready". Then behave as "signals
	// SIGTERM": it exits 0 on SIGTERM or at EOF on stdin.
	"listen": func(args []string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = c.Write([]byte("hello\n"))
				c.Close()
			}
		}()
		printSignalsUntil([]string{"SIGTERM"}, true, func() {
			if err := os.WriteFile(args[0], []byte(ln.Addr().String()), 0o644); err != nil {
				panic(err)
			}
		})
	},

	// http ADDR...: serve HTTP/1.1 (kept alive) and HTTP/2 without TLS (h2c)
	// on each ADDR, print "listening HOST:PORT" for each, then "ready". A
	// line "listen ADDR" on stdin opens one more and prints the same. Print
	// "signal NAME UNIXNANO" for every signal; exit 0 on SIGTERM or at EOF
	// on stdin.
	"http": serveHTTP,

	// drain-serve N and drain-clients ADDR N GAP DURATION: a server and N
	// clients, idle and then busy, for the drain benchmark.
	"drain-serve":   drainServe,
	"drain-clients": drainClients,

	// http-worker ADDR...: run "http ADDR..." as a worker process that owns
	// the listeners and says "listening" and "ready" itself; print "signal
	// NAME UNIXNANO" for every signal; on SIGTERM stop the worker and exit 0.
	"http-worker": func(args []string) { superviseWorker(Command("http", args...)) },
}

// superviseWorker runs w, sharing our stdin, stdout and stderr, prints
// "signal NAME UNIXNANO" for every signal, and on SIGTERM stops w and
// returns; it returns as well when w exits.
func superviseWorker(w *exec.Cmd) {
	c := make(chan os.Signal, 64)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	w.Stdin, w.Stdout, w.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := w.Start(); err != nil {
		panic(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = w.Wait()
		close(exited)
	}()
	for {
		select {
		case s := <-c:
			fmt.Printf("signal %s %d\n", sigName(s.(syscall.Signal)), time.Now().UnixNano())
			if s == syscall.SIGTERM {
				_ = w.Process.Signal(syscall.SIGKILL)
				<-exited
				return
			}
		case <-exited:
			return
		}
	}
}

// drainServe listens on 127.0.0.1, prints "listening ADDR", and echoes back
// what every connection sends, until stdin closes. drainClients opens N
// connections to ADDR and keeps them idle, prints "ready", then on a line
// "go" on stdin sends one byte on one of them (in turn) every GAP for
// DURATION and reads its echo, and prints "last UNIXNANO", the time the last
// byte was sent; it exits at EOF on stdin. Both raise their open-file limit
// to fit N connections.
func drainServe(args []string) {
	openFiles(atoi(args[0]) + 64)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				fmt.Fprintf(os.Stderr, "testchild: accept: %v\n", err)
				os.Exit(1)
			}
			go echo(c)
		}
	}()
	fmt.Printf("listening %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// echo sends back what c receives. Not io.Copy: on Linux it splices
// through a pipe, two more descriptors for each idle connection.
func echo(c net.Conn) {
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

func drainClients(args []string) {
	addr, n, gap, d := args[0], atoi(args[1]), duration(args[2]), duration(args[3])
	openFiles(n + 64)
	conns := make([]net.Conn, n)
	for i := range conns {
		var err error
		if conns[i], err = net.Dial("tcp", addr); err != nil {
			panic(err)
		}
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "go" {
		return
	}
	var last time.Time
	buf := make([]byte, 1)
	for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
		c := conns[i%n]
		last = time.Now()
		if _, err := c.Write([]byte("x")); err != nil {
			panic(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			panic(err)
		}
		time.Sleep(gap)
	}
	fmt.Printf("last %d\n", last.UnixNano())
	for in.Scan() {
	}
}

func duration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

func serveHTTP(args []string) {
	var lns []net.Listener
	for _, a := range args {
		lns = append(lns, listenTCP(a))
	}
	serveHTTPOn(lns)
}

func listenTCP(addr string) net.Listener {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	return ln
}

// serveHTTPOn is "http" on listeners already open.
func serveHTTPOn(lns []net.Listener) {
	var mu sync.Mutex // one line at a time on stdout
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "ok %s\n", r.Proto)
	})}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	serve := func(ln net.Listener) {
		go func() { _ = srv.Serve(ln) }()
		say("listening %s", ln.Addr())
	}
	c := make(chan os.Signal, 64)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	for _, ln := range lns {
		serve(ln)
	}
	eof := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "listen "); ok {
				serve(listenTCP(addr))
			}
		}
		close(eof)
	}()
	say("ready")
	for {
		select {
		case s := <-c:
			say("signal %s %d", sigName(s.(syscall.Signal)), time.Now().UnixNano())
			if s == syscall.SIGTERM {
				return
			}
		case <-eof:
			return
		}
	}
}

func untilTerm([]string) { printSignalsUntil([]string{"SIGTERM"}, false, nil) }

func printSignals(exitOn []string) { printSignalsUntil(exitOn, true, nil) }

// printSignalsUntil is "signals"; setUp, if any, runs once the signals are
// caught, before "ready".
func printSignalsUntil(exitOn []string, exitAtEOF bool, setUp func()) {
	c := make(chan os.Signal, 64)
	var all []os.Signal
	for n := 1; n <= 64; n++ {
		s := syscall.Signal(n)
		if s == syscall.SIGKILL || s == syscall.SIGSTOP || s == syscall.SIGCHLD || s == syscall.SIGURG || (n >= 32 && n <= 34) || s == syscall.SIGPROF {
			continue
		}
		all = append(all, s)
	}
	signal.Notify(c, all...)
	var eof chan struct{} // nil, never ready, unless exitAtEOF
	if exitAtEOF {
		eof = make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
	}
	if setUp != nil {
		setUp()
	}
	fmt.Println("ready")
	for {
		select {
		case s := <-c:
			name := sigName(s.(syscall.Signal))
			fmt.Printf("signal %s %d\n", name, time.Now().UnixNano())
			for _, e := range exitOn {
				if e == name {
					return
				}
			}
		case <-eof:
			return
		}
	}
}

func sigName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return "SIG" + strconv.Itoa(int(s))
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		panic(err)
	}
	return n
}
