// Package drain watches the listening TCP sockets of the processes below
// proxy-await, or a fixed list of ports, and says when they have gone quiet:
// it owns everything --drain-quiet reads from the kernel (the process tree
// and its sockets in /proc, sock_diag dumps and the socket-destroy
// multicast). The supervisor only starts a Watch when it holds the stop
// signal, waits on Quiet, and stops it.
//
// It never says quiet when it cannot see: it follows every listening socket
// that could be one of those processes', and when one of them has a UDP
// socket (traffic it cannot see), or it finds no listener, it warns once
// and stays silent, so that --term-delay decides.
//
// It works on Linux only (Supported); elsewhere Start returns nil, a Watch
// that is never quiet.
package drain

import (
	"log/slog"
	"time"
)

// Options say what to watch.
type Options struct {
	// Root is the process whose listeners, and those of every process
	// below it, are watched: proxy-await itself, as its children's orphans
	// are reparented to it.
	Root int
	// Ports, when given, are watched instead: every TCP connection to one
	// of these local ports, whoever listens.
	Ports []uint16
	// Quiet is how long the listeners must have had no traffic.
	Quiet  time.Duration
	Logger *slog.Logger
}

// Status is what a Watch has seen, for the supervisor's logs.
type Status struct {
	Armed       bool      // the watch sees the sockets and follows them
	Connections int       // connections open on the listeners at the last look
	LastTraffic time.Time // the latest traffic, or when the watch began to follow the sockets
}
