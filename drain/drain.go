// Package drain watches the listening TCP sockets of the processes below
// proxy-await, or a fixed list of ports, and says when they have gone quiet:
// it owns everything --drain-quiet reads from the kernel (the process tree
// and its sockets in /proc, sock_diag dumps and the socket-destroy
// multicast). The supervisor starts a Watch with the child (Learn), tells
// it when it holds the stop signal (Hold), waits on Quiet, and stops it.
//
// It never says quiet when it cannot see: it follows every listening socket
// that could be one of those processes', and when one of them has a UDP
// socket (traffic it cannot see), or it finds no listener, it warns once
// and stays silent, so that --term-delay decides.
//
// It works on Linux only (Supported); elsewhere Learn returns nil,
// a Watch that is never quiet.
package drain

import (
	"log/slog"
	"net/netip"
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
	// Self is proxy-await's own process, the root in a run: the sockets it
	// holds (the pod's probes it serves on --probe-port) are never watched.
	// 0: none is left out.
	Self int
	// Own knows the connections that proxy-await opened (the app's checks
	// behind --probe-port): such a connection to a watched socket is never
	// traffic. nil: none is.
	Own Owner
	// Quiet is how long the listeners must have had no traffic, at least:
	// longer when new connections from outside the pod came further apart
	// (see Learn).
	Quiet time.Duration
	// TermDelay is the longest the hold lasts (--term-delay): the more
	// gaps between connections it could see, the longer a gap it takes
	// for the end of the traffic.
	TermDelay time.Duration
	Logger    *slog.Logger
}

// An Owner knows the connections that proxy-await opened itself
// (probes.Server).
type Owner interface {
	// Own says whether addr is the local end of one of them.
	Own(addr netip.AddrPort) bool
}

// Status is what a Watch has seen, for the supervisor's logs.
type Status struct {
	Armed       bool          // the watch sees the sockets and follows them
	Quiet       time.Duration // the quiet period: Options.Quiet, or longer for sparse traffic (see Learn)
	Connections int           // connections open on the listeners at the last look
	LastTraffic time.Time     // the latest traffic, or when the watch began to follow the sockets
	// LastPinned is the latest data on a connection from outside the pod,
	// which is traffic only while new connections arrive (see Watch); zero
	// when there was none since the watch began.
	LastPinned time.Time
}

// Pinned says whether connections from outside the pod sent data after the
// latest traffic: they alone still send.
func (s Status) Pinned() bool {
	return s.Armed && s.LastPinned.After(s.LastTraffic)
}

// Reason says why the watch found the listeners quiet, for the log of the
// stop signal's delivery.
func (s Status) Reason() string {
	if s.Pinned() {
		return "no new connection for " + s.Quiet.String() +
			": only connections from outside the pod still send, and the endpoint removal does not move them"
	}
	return "no traffic for " + s.Quiet.String()
}
