// Command httpapp is the server of the end-to-end scenarios: an HTTP/1.1
// server that answers every request with its host's name (in a pod, the
// pod's), keeps connections alive, counts the connections it accepted and the
// requests it served, and on SIGTERM appends "TERM <uptime> conns=N
// requests=M" to its -out file, then exits 0. It writes "listening" there
// once it accepts connections. Times come from /proc/uptime, the clock the
// scenario runner and the other containers share.
//
// With -keepalive URL it is instead a client that stands for a sidecar
// proxy's pooled connection: it opens one kept-alive connection to URL (a
// GET, retried until answered) and writes "connected"; on SIGTERM, as a
// proxy drains, it writes "TERM <uptime>" and sends a GET on that
// connection every 200 ms for -for, then writes "last <uptime> requests=N
// conns=M" (M: the connections it had to open) and exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("serve", "127.0.0.1:8080", "listen address")
	out := flag.String("out", "/out/app", "file the events are appended to")
	keepalive := flag.String("keepalive", "", "be a client of this URL instead (see the package comment)")
	sendFor := flag.Duration("for", 2*time.Second, "with -keepalive: how long to send after SIGTERM")
	flag.Parse()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if *keepalive != "" {
		client(*keepalive, *out, *sendFor, sigs)
		return
	}

	host, err := os.Hostname()
	if err != nil {
		fatal(err)
	}
	var conns, requests atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			fmt.Fprintln(w, host)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fatal(err)
	}
	go srv.Serve(ln)
	record(*out, "listening")

	<-sigs
	record(*out, fmt.Sprintf("TERM %s conns=%d requests=%d", uptime(), conns.Load(), requests.Load()))
	_ = srv.Shutdown(context.Background())
}

// client is -keepalive: one kept-alive connection, used again after SIGTERM.
func client(url, out string, sendFor time.Duration, sigs <-chan os.Signal) {
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	conns := 0
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			conns++
		}
	}}
	get := func() error {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	for get() != nil {
		time.Sleep(100 * time.Millisecond)
	}
	record(out, "connected")

	<-sigs
	record(out, "TERM "+uptime())
	requests, last := 0, ""
	for end := time.Now().Add(sendFor); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		t := uptime()
		if err := get(); err != nil {
			fatal(err)
		}
		requests, last = requests+1, t
	}
	record(out, fmt.Sprintf("last %s requests=%d conns=%d", last, requests, conns))
}

func uptime() string {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		fatal(err)
	}
	return strings.Fields(string(b))[0]
}

func record(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "httpapp:", err)
	os.Exit(1)
}
