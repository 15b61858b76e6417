// Command httpapp is the server of the end-to-end scenarios: an HTTP/1.1
// server that answers every request with its host's name (in a pod, the
// pod's), keeps connections alive, counts the connections it accepted and the
// requests it served, and on SIGTERM appends "TERM <uptime> conns=N
// requests=M" to its -out file, then exits 0. It writes "listening" there
// once it accepts connections. Times come from /proc/uptime, the clock the
// scenario runner and the other containers share.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("serve", "127.0.0.1:8080", "listen address")
	out := flag.String("out", "/out/app", "file the events are appended to")
	flag.Parse()

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
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
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
