//go:build linux

package testchild

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Scenarios for the drain: servers that the watch must find although they
// left the child's tree or hide their descriptors, and the load of the churn
// benchmark.
func init() {
	// daemonize SCENARIO ARG...: start SCENARIO as a daemon (a double
	// fork: its parent exits at once, so it is reparented to the nearest
	// subreaper) in a session of its own, sharing our stdin; relay its
	// lines up to its "ready", then behave as "signals SIGTERM".
	scenarios["daemonize"] = func(args []string) {
		r, w, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		mid := Command("spawn-daemon", args...)
		mid.Stdin, mid.Stdout, mid.Stderr = os.Stdin, w, os.Stderr
		if err := mid.Run(); err != nil {
			panic(err)
		}
		w.Close()
		lines := bufio.NewScanner(r)
		printSignalsUntil([]string{"SIGTERM"}, true, func() {
			for lines.Scan() && lines.Text() != "ready" {
				fmt.Println(lines.Text())
			}
		})
	}

	// spawn-daemon SCENARIO ARG...: start SCENARIO in a new session with
	// our stdin, stdout and stderr, and exit without waiting for it.
	scenarios["spawn-daemon"] = func(args []string) {
		d := Command(args[0], args[1:]...)
		d.Stdin, d.Stdout, d.Stderr = os.Stdin, os.Stdout, os.Stderr
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := d.Start(); err != nil {
			panic(err)
		}
	}

	// http-as-user UID ADDR: listen on ADDR, then run as user and group
	// UID (no longer dumpable, as after any change of uid), and serve as
	// "http" does: a server that binds as root and drops its privileges.
	scenarios["http-as-user"] = func(args []string) {
		ln := listenTCP(args[1])
		becomeUser(atoi(args[0]))
		serveHTTPOn([]net.Listener{ln})
	}

	// prefork UID ADDR: listen on ADDR and keep the listener, start a
	// worker that serves on it as "http" does as user UID, and supervise
	// it as "http-worker" does: a master and its worker, as nginx runs.
	scenarios["prefork"] = func(args []string) {
		ln := listenTCP(args[1]).(*net.TCPListener)
		f, err := ln.File()
		if err != nil {
			panic(err)
		}
		w := Command("http-fd", args[0])
		w.ExtraFiles = []*os.File{f}
		superviseWorker(w)
	}

	// http-fd UID: serve as "http" does, as user UID, on the listener
	// inherited as file descriptor 3.
	scenarios["http-fd"] = func(args []string) {
		ln, err := net.FileListener(os.NewFile(3, "listener"))
		if err != nil {
			panic(err)
		}
		becomeUser(atoi(args[0]))
		serveHTTPOn([]net.Listener{ln})
	}

	// http-drop UID ADDR STATS: listen on ADDR, then run as user and group
	// UID, listen on STATS as that user, and serve both as "http" does: a
	// server that binds its port as root, drops its privileges and then
	// opens a stats port, as HAProxy, named and postfix can.
	scenarios["http-drop"] = func(args []string) {
		ln := listenTCP(args[1])
		becomeUser(atoi(args[0]))
		serveHTTPOn([]net.Listener{ln, listenTCP(args[2])})
	}

	// listening-parent ADDR SCENARIO ARG...: listen on ADDR and keep the
	// listener (idle: it never accepts), start SCENARIO as a worker that
	// shares our stdin, stdout and stderr and none of our descriptors, and
	// supervise it as "http-worker" does: a parent that holds a port of its
	// own beside its child's.
	scenarios["listening-parent"] = func(args []string) {
		ln := listenTCP(args[0])
		defer ln.Close()
		superviseWorker(Command(args[1], args[2:]...))
	}

	// http-udp UDPADDR ADDR...: echo every datagram on UDPADDR back to its
	// sender, and serve as "http ADDR..." does: a UDP server (DNS, QUIC,
	// syslog) beside a TCP port.
	scenarios["http-udp"] = func(args []string) {
		echoUDP(args[0])
		serveHTTP(args[1:])
	}

	// udp UDPADDR: echo every datagram on UDPADDR back to its sender; print
	// "listening udp UDPADDR" and "ready", and exit when stdin closes.
	scenarios["udp"] = func(args []string) {
		echoUDP(args[0])
		fmt.Printf("listening udp %s\nready\n", args[0])
		_, _ = io.Copy(io.Discard, os.Stdin)
	}

	// later ADDR SCENARIO ARG...: start "http ADDR" and relay its lines up
	// to its "ready"; when a line "later" comes on stdin, start SCENARIO
	// ARG... beside it the same way: a server that turns up late, as a
	// script may start one. later itself holds no socket. On SIGTERM print
	// "signal SIGTERM UNIXNANO", stop both servers and exit.
	scenarios["later"] = func(args []string) {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		var mu sync.Mutex
		stops := []func(){relay(Command("http", args[0]))}
		go func() {
			lines := bufio.NewScanner(os.Stdin)
			for lines.Scan() {
				if lines.Text() == "later" {
					mu.Lock()
					stops = append(stops, relay(Command(args[1], args[2:]...)))
					mu.Unlock()
				}
			}
		}()
		<-term
		fmt.Printf("signal SIGTERM %d\n", time.Now().UnixNano())
		mu.Lock()
		for _, stop := range stops {
			stop()
		}
		os.Exit(0)
	}

	// with-metrics ADDR SCENARIO ARG...: start a metrics endpoint serving as
	// "http" on ADDR (sharing our stdin, and no other descriptor: it exits
	// at EOF on stdin, not with us), wait until it is ready, then become
	// SCENARIO: a server with a metrics port beside it.
	scenarios["with-metrics"] = func(args []string) {
		metrics := Command("http", args[0])
		metrics.Stdin = os.Stdin
		out, err := metrics.StdoutPipe()
		if err != nil {
			panic(err)
		}
		if err := metrics.Start(); err != nil {
			panic(err)
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() && lines.Text() != "ready" {
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		env := append(os.Environ(), Env+"="+args[1])
		panic(syscall.Exec(Self(), append([]string{Self()}, args[2:]...), env))
	}

	// churn ADDR DURATION: connect to ADDR and close at once with a reset
	// (no port left in TIME_WAIT), from a few goroutines, as fast as the
	// machine allows, for DURATION; then print "connections N".
	scenarios["churn"] = func(args []string) {
		addr, d := args[0], duration(args[1])
		const workers = 4
		counts := make(chan int)
		end := time.Now().Add(d)
		for range workers {
			go func() {
				n := 0
				for time.Now().Before(end) {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						panic(err)
					}
					_ = c.(*net.TCPConn).SetLinger(0)
					c.Close()
					n++
				}
				counts <- n
			}()
		}
		total := 0
		for range workers {
			total += <-counts
		}
		fmt.Printf("connections %d\n", total)
	}

	// close-each: listen on 127.0.0.1, print "listening ADDR", and close
	// every connection as soon as it is accepted, until stdin closes.
	scenarios["close-each"] = func([]string) {
		ln := listenTCP("127.0.0.1:0")
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		fmt.Printf("listening %s\n", ln.Addr())
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
}

// relay starts server with a pipe of its own as stdin, copies its stdout
// lines to ours up to its "ready" and discards the rest. stop closes that
// stdin, at which the server exits, and waits for it.
func relay(server *exec.Cmd) (stop func()) {
	in, keep, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	out, err := server.StdoutPipe()
	if err != nil {
		panic(err)
	}
	server.Stdin, server.Stderr = in, os.Stderr
	if err := server.Start(); err != nil {
		panic(err)
	}
	in.Close()
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		fmt.Println(lines.Text())
		if lines.Text() == "ready" {
			break
		}
	}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, out)
		close(copied)
	}()
	return func() {
		keep.Close()
		<-copied
		_ = server.Wait()
	}
}

// echoUDP binds addr and sends every datagram back to its sender, in the
// background.
func echoUDP(addr string) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		panic(err)
	}
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
}

// becomeUser makes every thread run as user and group id, with no
// supplementary groups.
func becomeUser(id int) {
	if err := syscall.Setgroups(nil); err != nil {
		panic(err)
	}
	if err := syscall.Setresgid(id, id, id); err != nil {
		panic(err)
	}
	if err := syscall.Setresuid(id, id, id); err != nil {
		panic(err)
	}
}
