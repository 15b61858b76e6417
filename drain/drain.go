// Package drain watches the listening TCP sockets of a process tree and says
// when they have gone quiet: it owns everything --drain-quiet reads from the
// kernel (the process tree and its sockets in /proc, sock_diag dumps and the
// socket-destroy multicast). The supervisor only starts a Watch when it holds
// a SIGTERM, waits on Quiet, and stops it.
//
// It works on Linux only (Supported); elsewhere Start returns nil, a Watch
// that is never quiet.
package drain

import "time"

// Status is what a Watch has seen so far, for the supervisor's logs.
type Status struct {
	Armed       bool      // the watch found the sockets and follows them
	Connections int       // connections open on the listeners at the last look
	LastTraffic time.Time // the latest traffic, or the start of the watch if none
}
