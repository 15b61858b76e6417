package drain

import (
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Supported says whether the watch works on this system.
const Supported = true

// How the watch sees traffic
//
// Traffic is a new connection to a listening TCP socket of the process tree,
// or data received on a connection to one. The kernel keeps, for every TCP
// socket, the number of bytes it has received and the time since it last
// received data (struct tcp_info's tcpi_bytes_received and
// tcpi_last_data_recv; for a connection that never received data, the time
// since it was accepted). sock_diag reports both without privilege, for the
// sockets that are open (a dump) and for each socket as the kernel frees it
// (the SKNLGRP_INET{,6}_TCP_DESTROY multicast, whose report carries the
// socket's last tcp_info). Every connection is either open at a dump or
// reported as it is freed, so none is missed, however short.
//
// The time since the last data places the latest traffic exactly, not at the
// time of the look: the latest traffic is the most recent "now minus time
// since the last data" over every connection looked at. So the watch needs to
// look only when the quiet period would end: it dumps the connections then,
// and either finds later traffic (and waits for the new end) or lets the
// destroy reports in flight arrive for a moment and says quiet. Between those
// looks it only reads the destroy reports as they come and, every
// refreshPeriod, the short list of listening sockets, to find listeners
// opened after the start (with the destroy reports on other ports kept until
// then, for connections a new listener had before it was found).
//
// A socket is known by its cookie, a number the kernel gives it for its whole
// life. A connection seen before whose byte count has not grown is not looked
// at again (its time since the last data says nothing new). If the kernel
// drops destroy reports (ENOBUFS, a storm), the watch counts that as traffic
// now, erring towards serving longer.

const (
	// statusPeriod is how often a long hold is logged.
	statusPeriod = 5 * time.Second
	// settle is how long the watch waits, once a dump finds the quiet
	// period over, for destroy reports the kernel has queued but not sent.
	settle = 10 * time.Millisecond
	// tick covers the kernel's clock granularity: tcp_info's times are in
	// jiffies, as coarse as 10 ms.
	tick = 10 * time.Millisecond
	// maxPending bounds the destroy reports kept for a listener not yet found.
	maxPending = 4096
)

// refreshPeriod is how often the watch looks for new listeners: half the
// quiet period, from 10 ms to 1 s. It bounds how long destroy reports wait
// for a listener not found yet, not how late traffic is seen: the look at
// the end of the quiet period finds new listeners too.
func refreshPeriod(quiet time.Duration) time.Duration {
	return min(max(quiet/2, 10*time.Millisecond), time.Second)
}

// Watch tells when the listeners of a process tree have gone quiet.
type Watch struct {
	quietC chan struct{}
	stopC  chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	status Status
}

// Start watches the listening TCP sockets of pid's process tree and closes
// Quiet() once they have had no traffic for quiet, counting from now or from
// the latest traffic. It logs drain_started once it follows the sockets.
func Start(pid int, quiet time.Duration, log *slog.Logger) *Watch {
	w := &Watch{quietC: make(chan struct{}), stopC: make(chan struct{}), done: make(chan struct{})}
	go w.run(pid, quiet, log)
	return w
}

// Quiet is closed once the listeners have been quiet; nil on a nil Watch.
func (w *Watch) Quiet() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.quietC
}

// Status says what the watch has seen so far; a nil Watch is not armed.
func (w *Watch) Status() Status {
	if w == nil {
		return Status{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// Stop ends the watch and waits for its goroutines. A nil Watch is stopped.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	select {
	case <-w.stopC:
	default:
		close(w.stopC)
	}
	<-w.done
}

func (w *Watch) run(pid int, quiet time.Duration, log *slog.Logger) {
	defer close(w.done)
	d, err := newDiffer()
	if err != nil {
		log.Warn("cannot use sock_diag: waiting the whole --term-delay", "event", "drain_failed", "error", err.Error())
		<-w.stopC
		return
	}
	defer d.close()
	s := newSockets(pid, d)
	// Without its sockets the watch cannot tell quiet from busy: it never
	// fires, and --term-delay decides.
	giveUp := func(what string, err error) {
		log.Warn("cannot "+what+": waiting the whole --term-delay", "event", "drain_failed", "error", err.Error())
		<-w.stopC
	}
	events, closeEvents, err := destroyEvents()
	if err != nil {
		log.Warn("cannot follow closed connections: connections shorter than the quiet period may be missed",
			"event", "drain_degraded", "error", err.Error())
	} else {
		defer closeEvents()
	}
	if _, err := s.findListeners(); err != nil {
		giveUp("find the child's listening sockets", err)
		return
	}
	if err := s.lookAtConnections(); err != nil {
		giveUp("list the child's connections", err)
		return
	}
	w.publish(s)
	log.Info("holding SIGTERM until the child's listeners have no traffic", "event", "drain_started",
		"listeners", s.listenerList(), "connections", len(s.conns), "drain_quiet", quiet)
	if len(s.listeners) == 0 {
		log.Info("the child has no listening TCP socket yet: nothing to drain unless it opens one",
			"event", "drain_no_listener")
	}

	findListeners := func() error {
		added, err := s.findListeners()
		if len(added) > 0 {
			log.Info("the child opened a listening socket", "event", "drain_listener", "listener", strings.Join(added, " "))
		}
		return err
	}
	timer := time.NewTimer(time.Until(s.last.Add(quiet)))
	defer timer.Stop()
	refresh := time.NewTicker(refreshPeriod(quiet))
	defer refresh.Stop()
	status := time.NewTicker(statusPeriod)
	defer status.Stop()
	settling := false
	for {
		select {
		case <-w.stopC:
			return
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			s.destroyed(e)
		case <-refresh.C:
			_ = findListeners()
		case <-status.C:
			_ = s.lookAtConnections()
			log.Info("still holding SIGTERM: the child's listeners have traffic", "event", "drain_waiting",
				"connections", len(s.conns), "since_traffic", since(s.last))
		case <-timer.C:
			if !settling {
				if err := findListeners(); err != nil || s.lookAtConnections() != nil {
					timer.Reset(refreshPeriod(quiet)) // look again soon
					continue
				}
			}
			if d := time.Until(s.last.Add(quiet)); d > 0 {
				log.Debug("traffic: the quiet period starts again", "event", "drain_traffic",
					"connections", len(s.conns), "since_traffic", since(s.last))
				settling = false
				timer.Reset(d)
				continue
			}
			if !settling {
				settling = true
				timer.Reset(settle)
				continue
			}
			w.publish(s)
			close(w.quietC)
			<-w.stopC
			return
		}
		w.publish(s)
	}
}

func (w *Watch) publish(s *sockets) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = Status{Armed: true, Connections: len(s.conns), LastTraffic: s.last}
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// sockets is what the watch knows of the process tree's sockets. Only the
// watch's goroutine touches it.
type sockets struct {
	pid       int
	diag      *differ
	last      time.Time               // the latest traffic, or the start
	listeners map[uint16][]netip.Addr // by port; an unspecified address for a wildcard bind
	checked   map[uint32]bool         // listening socket inodes looked for in the tree: true if found
	conns     map[uint64]uint64       // connections by cookie: bytes received at the last look
	pending   []destroyed             // reports on other ports since the last look for listeners
}

func newSockets(pid int, d *differ) *sockets {
	return &sockets{pid: pid, diag: d, last: time.Now(), listeners: map[uint16][]netip.Addr{},
		checked: map[uint32]bool{}, conns: map[uint64]uint64{}}
}

// traffic records traffic at t.
func (s *sockets) traffic(t time.Time) {
	if t.After(s.last) {
		s.last = t
	}
}

// findListeners looks for listening sockets of the process tree not known
// yet, and returns them. Listening sockets are few, so the dump is cheap; the
// process tree's descriptors are read only for an inode not seen before.
func (s *sockets) findListeners() ([]string, error) {
	socks, err := s.diag.dump(listenStates, nil)
	if err != nil {
		return nil, err
	}
	unknown := map[uint32]bool{}
	for _, l := range socks {
		if _, ok := s.checked[l.inode]; !ok {
			unknown[l.inode] = true
		}
	}
	if len(unknown) > 0 {
		owned, err := ownsAny(s.pid, unknown)
		if err != nil {
			return nil, err
		}
		for inode := range unknown {
			s.checked[inode] = owned[inode]
		}
	}
	var added []string
	for _, l := range socks {
		if s.checked[l.inode] && !slices.Contains(s.listeners[l.port], l.ip) {
			s.listeners[l.port] = append(s.listeners[l.port], l.ip)
			added = append(added, net.JoinHostPort(l.ip.String(), strconv.Itoa(int(l.port))))
		}
	}
	// A connection on a new listener may have come and gone before it was
	// found: its destroy report waited here.
	if len(added) > 0 {
		for _, e := range s.pending {
			s.destroyed(e)
		}
	}
	s.pending = s.pending[:0]
	return added, nil
}

// lookAtConnections dumps the connections on the listeners and records the
// traffic they show.
func (s *sockets) lookAtConnections() error {
	if len(s.listeners) == 0 {
		return nil
	}
	ports := make([]uint16, 0, len(s.listeners))
	for p := range s.listeners {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	socks, err := s.diag.dump(connStates, ports)
	if err != nil {
		return err
	}
	at := time.Now()
	old := s.conns
	s.conns = make(map[uint64]uint64, len(old))
	for _, c := range socks {
		if !s.ours(c) {
			continue
		}
		s.conns[c.cookie] = c.bytesIn
		if prev, seen := old[c.cookie]; !seen || !c.hasInfo || c.bytesIn != prev {
			s.traffic(lastData(c, at))
		}
	}
	return nil
}

// destroyed records a connection the kernel has freed.
func (s *sockets) destroyed(e destroyed) {
	switch {
	case e.lost:
		s.traffic(e.at)
	case s.ours(e.sock):
		prev, seen := s.conns[e.cookie]
		delete(s.conns, e.cookie)
		if !seen || !e.hasInfo || e.bytesIn != prev {
			s.traffic(lastData(e.sock, e.at))
		}
	case len(s.pending) < maxPending:
		s.pending = append(s.pending, e)
	}
}

// lastData is when c last received data (or was accepted), as seen at: late
// by up to one kernel tick rather than early, and never after at.
func lastData(c sock, at time.Time) time.Time {
	if !c.hasInfo {
		return at
	}
	if t := at.Add(-c.sinceDataIn + tick); t.Before(at) {
		return t
	}
	return at
}

// ours reports whether c is a connection on one of the listeners.
func (s *sockets) ours(c sock) bool {
	return slices.ContainsFunc(s.listeners[c.port], func(ip netip.Addr) bool {
		return ip.IsUnspecified() || ip == c.ip
	})
}

// listenerList is "127.0.0.1:8080 [::]:9090", for the logs.
func (s *sockets) listenerList() string {
	var out []string
	for p, ips := range s.listeners {
		for _, ip := range ips {
			out = append(out, net.JoinHostPort(ip.String(), strconv.Itoa(int(p))))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
