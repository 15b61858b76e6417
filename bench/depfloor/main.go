// Command depfloor is the benchmarks' reference for what proxy-await's
// dependencies cost before any code of its own: what the Go floor
// (bench/gofloor) does, after using each dependency as proxy-await does at
// its least. pflag reads the flags; log/slog is set up for JSON lines; with
// -p PORT, an http.Client gets http://127.0.0.1:PORT/ready until it answers
// 2xx, as the readiness wait does; a go-retryablehttp client is made, as the
// shutdown's is; net/http's server is linked, as the probe server's is, and
// serves only when DEPFLOOR_SERVE is set (proxy-await serves only with
// --probe-port). Each dependency is one file; bench/run.sh builds it whole
// and with each left out (the build tag no_NAME), so that the figures price
// each.
//
//	depfloor [-q] [--proxy NAME] [-p PORT] [--] COMMAND [ARG...]
package main

import (
	"net"
	"os"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/bench/floor"
)

// What each dependency's file sets; without it, the least the standard
// library and golang.org/x/sys do.
var (
	parseFlags = func(args []string) (port string, command []string) {
		for i := 0; i < len(args); i++ {
			switch {
			case args[i] == "-p" && i+1 < len(args):
				i++
				port = args[i]
			case args[i] == "--proxy" && i+1 < len(args):
				i++
			case args[i] == "--":
				return port, args[i+1:]
			case !strings.HasPrefix(args[i], "-"):
				return port, args[i:]
			}
		}
		return port, nil
	}
	logJSON  = func(string) {}
	awaitURL = func(url string) {
		for !answered200(url) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	makeRetryClient = func() {}
	serve           = func(net.Listener) {}
)

func main() {
	port, command := parseFlags(os.Args[1:])
	if len(command) == 0 {
		os.Exit(2)
	}
	logJSON("depfloor started")
	makeRetryClient()
	if os.Getenv("DEPFLOOR_SERVE") != "" {
		if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			go serve(ln)
		}
	}
	if port != "" {
		awaitURL("http://127.0.0.1:" + port + "/ready")
	}

	floor.Run(command)
}

// answered200 is the readiness probe without net/http: one GET on a new
// connection, the status line read by hand.
func answered200(url string) bool {
	hostPort, path, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	conn, err := net.DialTimeout("tcp", hostPort, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("GET /" + path + " HTTP/1.1\r\nHost: " + hostPort + "\r\nConnection: close\r\n\r\n")); err != nil {
		return false
	}
	status := make([]byte, len("HTTP/1.1 200"))
	n, _ := conn.Read(status)
	return n == len(status) && string(status[len("HTTP/1.1 "):]) == "200"
}
