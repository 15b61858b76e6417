//go:build !no_server

package main

import (
	"net"
	"net/http"
)

// net/http's server, as the probe server's.
func init() {
	serve = func(ln net.Listener) {
		_ = (&http.Server{Handler: http.NotFoundHandler()}).Serve(ln)
	}
}
