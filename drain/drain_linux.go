package drain

import (
	"fmt"
	"log/slog"
	"maps"
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

// The watch dates the latest traffic by each connection's time since its
// last data, so it needs to look only when the quiet period would end; how it
// sees every connection, and what counts as traffic, is in
// docs/graceful-termination.md ("How --drain-quiet sees traffic").

const (
	// statusPeriod is how often a long hold is logged.
	statusPeriod = 5 * time.Second
	// settle is how long the watch waits, once a dump finds the quiet
	// period over, for destroy reports the kernel has queued but not sent.
	settle = 10 * time.Millisecond
	// tick covers the kernel's clock granularity: tcp_info's times are in
	// jiffies, as coarse as 10 ms.
	tick = 10 * time.Millisecond
)

// refreshPeriod is how often the watch looks for new listeners: half the
// quiet period, from 10 ms to 1 s. It bounds how late a listener opened
// during the hold is found; a new listener found at the end of the quiet
// period starts it again.
func refreshPeriod(quiet time.Duration) time.Duration {
	return min(max(quiet/2, 10*time.Millisecond), time.Second)
}

// Watch tells when the watched listeners have gone quiet.
type Watch struct {
	holdC  chan struct{}
	quietC chan struct{}
	stopC  chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	status Status
}

// Learn follows the listeners that o names from now on, silently, and
// records when new connections from outside the pod arrive: the quiet
// period that Hold then waits for is o.Quiet, or longer when they came
// further apart (see arrivals.quiet). It costs a look at the listening
// sockets every learnRefresh and one report from the kernel for each
// connection to them that closes, read in batches.
func Learn(o Options) *Watch {
	w := &Watch{holdC: make(chan struct{}), quietC: make(chan struct{}), stopC: make(chan struct{}), done: make(chan struct{})}
	go w.keepWatch(o)
	return w
}

// Hold begins the hold: the watch closes Quiet() once the listeners have had
// no traffic for the quiet period, counting from now or from the latest
// traffic. It logs drain_started once it follows the sockets, or one warning
// when it cannot. A nil Watch holds nothing.
func (w *Watch) Hold() {
	if w == nil {
		return
	}
	select {
	case <-w.holdC:
	default:
		close(w.holdC)
	}
}

// Quiet is closed once the listeners have been quiet; nil on a nil Watch.
func (w *Watch) Quiet() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.quietC
}

// Stop ends the watch and returns what it saw, with the connections looked
// at once more, now; stopped again, it returns the same. A nil Watch was
// never armed.
func (w *Watch) Stop() Status {
	if w == nil {
		return Status{}
	}
	select {
	case <-w.stopC:
	default:
		close(w.stopC)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// ownSocket marks, in sockets.checked, a socket of proxy-await's own.
const ownSocket = -1

const (
	portsHint = "set --drain-ports to the ports the command serves on"
	udpHint   = "set --drain-ports to the TCP ports to watch, and its UDP traffic holds the stop signal no longer; or use --term-delay alone"
)

// keepWatch is the watch's goroutine: it learns until Hold, then follows the
// listeners until they are quiet or the watch is stopped.
func (w *Watch) keepWatch(o Options) {
	defer close(w.done)
	d, err := newDumper()
	if err != nil {
		w.giveUp(o.Logger, "use sock_diag", err)
		return
	}
	defer d.close()
	feed, feedErr := newDestroyFeed()
	if feedErr == nil {
		defer feed.close()
	}
	s := newSockets(o, d, feed)
	if err := s.follow(); err != nil {
		w.giveUp(o.Logger, "follow the listening sockets", err)
		return
	}

	timer := time.NewTimer(0)
	timer.Stop()
	defer timer.Stop()
	v := &lookout{Watch: w, o: o, log: o.Logger, s: s, timer: timer, warned: map[string]bool{}}
	if !v.learn(feed) {
		return
	}
	// The hold waits at least for the quiet period its clients' gaps asked
	// for when it began: connections crowding during the hold do not say
	// the last of them has come sooner.
	v.held = v.quietPeriod()
	if feedErr != nil {
		o.Logger.Warn("cannot follow closed connections: connections shorter than the quiet period may be missed",
			"event", "drain_degraded", "error", feedErr.Error())
	}
	if err := v.look(true, false); err != nil {
		w.giveUp(o.Logger, "find the listening sockets", err)
		return
	}
	w.publish(s, v.following(), v.quietPeriod())
	v.untilQuiet(feed)
}

// giveUp is the watch without its sockets: it cannot tell quiet from busy,
// so it never fires, and --term-delay decides. It says so when the hold
// begins.
func (w *Watch) giveUp(log *slog.Logger, what string, err error) {
	select {
	case <-w.holdC:
	case <-w.stopC:
		return
	}
	log.Warn("cannot "+what+": holding the stop signal for the whole --term-delay", "event", "drain_failed",
		"error", err.Error())
	<-w.stopC
}

// watchState is where the watch stands.
type watchState int

const (
	// unarmed: the watch cannot see every listener below the root (a UDP
	// socket holds traffic it cannot see, or there is no listener yet), so
	// it never says quiet; it looks again on every refresh.
	unarmed watchState = iota
	// armed: the watch follows the listeners, and the timer ends at the
	// end of the quiet period since the latest traffic it knows of.
	armed
	// settling: a look at the end of the quiet period found no later
	// traffic; the timer lets the destroy reports in flight arrive.
	settling
	// quiet: the listeners have been quiet; Quiet() is closed.
	quiet
)

// lookout is a Watch's goroutine at work: where it stands and what it has
// seen. Only that goroutine touches it; each transition between states is
// one method.
type lookout struct {
	*Watch
	o      Options
	log    *slog.Logger
	s      *sockets
	state  watchState
	timer  *time.Timer     // in armed and settling, when to look again
	warned map[string]bool // the events warned of: each warning is logged once
	// held is the quiet period at the stop signal, derived from the
	// arrivals before it: the least the hold waits for. Zero while the
	// watch learns.
	held time.Duration
}

// following says whether the watch sees every listener and follows it.
func (v *lookout) following() bool { return v.state != unarmed }

// first says whether event is warned of for the first time.
func (v *lookout) first(event string) bool {
	was := v.warned[event]
	v.warned[event] = true
	return !was
}

// learnRefresh is how often the watch looks for new listeners before the
// stop signal: a listener opened later is learnt from a little later.
const learnRefresh = time.Second

// learnPause is how long the watch reads no report once the clients
// connect so often that more of them teach nothing (arrivals.settled): a
// busy server's every connection would cost a report read and parsed.
const learnPause = 10 * time.Second

// learn follows the listeners until the hold begins, records the new
// connections from outside the pod as their reports come, and says nothing:
// what it cannot see, it says when the hold begins. It returns false when
// the watch was stopped first.
func (v *lookout) learn(feed *destroyFeed) bool {
	_, _ = v.s.findListeners(true) // looked at again when the hold begins
	// Until the app listens, it is looked for every tenth of a second for
	// the first ten seconds.
	refresh := time.NewTicker(learnRefresh / 10)
	began := time.Now()
	defer refresh.Stop()
	resume := time.NewTimer(0)
	resume.Stop()
	defer resume.Stop()
	defer v.s.pause(false)
	var events <-chan destroyed
	if feed != nil {
		events = feed.c
		feed.batching(true)
		defer feed.batching(false)
	}
	for {
		select {
		case <-v.stopC:
			v.stopped()
			return false
		case <-v.holdC:
			return true
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			v.s.destroyed(e)
			if !v.s.paused && v.s.arrivals.settled(v.o.Quiet, v.o.TermDelay) {
				v.s.pause(true)
				resume.Reset(learnPause)
			}
		case <-resume.C:
			v.s.pause(false)
		case <-refresh.C:
			_, _ = v.s.findListeners(false)
			if len(v.s.listeners) > 0 || time.Since(began) > 10*learnRefresh {
				refresh.Reset(learnRefresh)
			}
		}
	}
}

// quietPeriod is the quiet period the hold waits for: o.Quiet, or longer
// for the arrivals seen so far, and never shorter than at the stop signal.
func (v *lookout) quietPeriod() time.Duration {
	return max(v.held, v.s.arrivals.quiet(v.o.Quiet, v.o.TermDelay))
}

// untilQuiet follows the listeners through the hold, until they have been
// quiet for the quiet period or the watch is stopped.
func (v *lookout) untilQuiet(feed *destroyFeed) {
	var refresh <-chan time.Time
	if len(v.o.Ports) == 0 {
		t := time.NewTicker(refreshPeriod(v.o.Quiet))
		defer t.Stop()
		refresh = t.C
	}
	status := time.NewTicker(statusPeriod)
	defer status.Stop()
	var events <-chan destroyed
	if feed != nil {
		events = feed.c
	}
	for {
		select {
		case <-v.stopC:
			v.stopped()
			return
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			v.s.destroyed(e)
		case <-refresh:
			_ = v.look(false, true)
		case <-status.C:
			v.stillHolding()
		case <-v.timer.C:
			v.timerEnded()
			if v.state == quiet {
				v.sayQuiet()
				return
			}
		}
		v.publish(v.s, v.following(), v.quietPeriod())
	}
}

// look finds the listeners again, and arms or disarms the watch: it says
// quiet only while it can see every listener below the root and no UDP
// socket. The processes are walked again when a listener is new, while the
// watch is unarmed, and with walk (before the watch says quiet). announce
// logs the listeners found after the first look.
func (v *lookout) look(walk, announce bool) error {
	added, err := v.s.findListeners(walk || v.state == unarmed)
	if err != nil {
		return err
	}
	if v.s.udpErr != nil && v.first("drain_degraded") {
		v.log.Warn("cannot list the UDP sockets: a UDP server below proxy-await is not seen", "event", "drain_degraded",
			"error", v.s.udpErr.Error())
	}
	if len(added) > 0 && announce {
		v.log.Info("a process below proxy-await opened a listening socket: the watch follows it from now on",
			"event", "drain_listener", "listener", strings.Join(added, " "))
	}
	switch b := v.s.blind; {
	case b != nil:
		v.blinded(b)
	case len(v.s.listeners) == 0:
		if v.first("drain_no_listener") {
			v.log.Warn("no listening TCP socket below proxy-await: holding the stop signal until a listener appears and has no traffic, or for the whole --term-delay",
				"event", "drain_no_listener", "hint", portsHint+", if it serves TCP")
		}
	case v.state == unarmed:
		return v.arm()
	case len(added) > 0:
		v.s.traffic(time.Now())
	}
	return nil
}

// blinded goes to unarmed: a UDP socket holds traffic the watch cannot see.
func (v *lookout) blinded(b *unseen) {
	if v.following() {
		v.state = unarmed
		v.timer.Stop()
		v.log.Info("the watch pauses: it cannot see the traffic of a UDP socket",
			append([]any{"event", "drain_disarmed"}, b.attrs()...)...)
	}
	if v.first("drain_blind") {
		v.log.Warn("cannot see the traffic of a UDP socket below proxy-await: holding the stop signal for the whole --term-delay, or until the socket closes",
			append(append([]any{"event", "drain_blind"}, b.attrs()...), "hint", udpHint)...)
	}
}

// arm goes from unarmed to armed: the quiet period counts from now, or from
// traffic the connections show later.
func (v *lookout) arm() error {
	// The listeners found from now on are followed: what they served
	// before, they served before now.
	v.s.traffic(time.Now())
	if err := v.s.lookAtConnections(); err != nil {
		return err
	}
	v.state = armed
	quiet := v.quietPeriod()
	v.timer.Reset(time.Until(v.s.last.Add(quiet)))
	attrs := []any{"event", "drain_started", "connections", len(v.s.conns), "drain_quiet", quiet}
	if quiet > v.o.Quiet {
		// New connections from outside came further apart than
		// --drain-quiet: a pause that long would not say they stopped.
		n, mean, longest := v.s.arrivals.gaps()
		attrs = append(attrs, "gaps", n, "mean_gap", mean.Round(time.Millisecond), "longest_gap", longest.Round(time.Millisecond))
	}
	if len(v.o.Ports) > 0 {
		attrs = append(attrs, "ports", v.s.listenerList())
	} else {
		attrs = append(attrs, "listeners", v.s.listenerList())
	}
	v.log.Info("holding the stop signal until the listeners have no traffic", attrs...)
	return nil
}

// timerEnded moves on when the timer ends: armed, the quiet period may be
// over, which a look at the listeners and connections tells (and then the
// watch settles); settling, the reports in flight are in, and without later
// traffic the watch is quiet. Traffic since starts the quiet period again.
func (v *lookout) timerEnded() {
	if v.state != settling && !v.lookAgain() {
		return
	}
	switch d := time.Until(v.s.last.Add(v.quietPeriod())); {
	case d > 0:
		v.log.Debug("traffic: the quiet period starts again", "event", "drain_traffic",
			"connections", len(v.s.conns), "since_traffic", since(v.s.last), "drain_quiet", v.quietPeriod())
		v.state = armed
		v.timer.Reset(d)
	case v.state == armed:
		v.state = settling
		v.timer.Reset(settle)
	default:
		v.state = quiet
	}
}

// lookAgain looks at the listeners and their connections; false when the
// watch is not armed after, or a look failed (and then it tries again soon).
func (v *lookout) lookAgain() bool {
	err := v.look(true, true)
	if err == nil && v.state == unarmed {
		return false
	}
	if err == nil {
		err = v.s.lookAtConnections()
	}
	if err != nil {
		v.timer.Reset(refreshPeriod(v.o.Quiet))
		return false
	}
	return true
}

// stillHolding logs a long hold, with a fresh look at the connections.
func (v *lookout) stillHolding() {
	if !v.following() {
		return
	}
	_ = v.s.lookAtConnections()
	v.log.Info("still holding the stop signal: the listeners had traffic within the quiet period", "event", "drain_waiting",
		"connections", len(v.s.conns), "since_traffic", since(v.s.last), "drain_quiet", v.quietPeriod())
}

// sayQuiet says the listeners are quiet (closes Quiet), and waits for Stop.
func (v *lookout) sayQuiet() {
	v.publish(v.s, v.following(), v.quietPeriod())
	close(v.quietC)
	<-v.stopC
	_ = v.s.lookAtConnections()
	v.publish(v.s, v.following(), v.quietPeriod())
}

// stopped ends the watch on Stop, with a last look at the connections.
func (v *lookout) stopped() {
	if v.following() {
		_ = v.s.lookAtConnections()
	}
	v.publish(v.s, v.following(), v.quietPeriod())
}

func (w *Watch) publish(s *sockets, armed bool, quiet time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = Status{Armed: armed, Quiet: quiet, Connections: len(s.conns), LastTraffic: s.last, LastPinned: s.pinned}
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// sockets is what the watch knows of the listeners and their connections.
// Only the watch's goroutine touches it.
type sockets struct {
	diag      *dumper
	feed      *destroyFeed            // nil without the destroy reports
	fixed     []uint16                // --drain-ports: these, and no process walk
	self      int                     // proxy-await's own process: its sockets are never watched
	own       Owner                   // the connections proxy-await opened itself; nil: none
	local     map[netip.Addr]bool     // the network namespace's addresses; nil when unknown: every peer is inside
	procs     *procs                  // the processes below the root
	last      time.Time               // the latest traffic, or the start
	pinned    time.Time               // the latest data from outside the pod, which is not traffic
	listeners map[uint16][]netip.Addr // by port; an unspecified address for a wildcard bind
	checked   map[uint32]int          // socket inodes looked for below the root: the readable process that holds it, or 0
	conns     map[uint64]uint64       // connections by cookie: bytes received at the last look
	looked    bool                    // the connections were looked at before: one not seen then is new
	paused    bool                    // the kernel passes no report (learnPause)
	arrivals  arrivals                // the latest new connections from outside the pod
	udp       []sock                  // the unconnected UDP sockets, at the last walk
	udpErr    error                   // why the UDP sockets could not be listed, at the last walk
	blind     *unseen                 // traffic the watch cannot see, at the last look
}

// unseen is a UDP socket that a process below the root holds, or could
// hold: traffic the watch cannot see.
type unseen struct {
	udp    sock
	holder int        // the readable process that holds it, or 0
	hidden *blindProc // else a process that could hold it and whose descriptors cannot be read
}

// attrs name the socket and its process, for the logs.
func (u *unseen) attrs() []any {
	attrs := []any{"udp", net.JoinHostPort(u.udp.ip.String(), strconv.Itoa(int(u.udp.port)))}
	if u.hidden == nil {
		return append(attrs, "pid", u.holder)
	}
	return append(attrs, "pid", u.hidden.pid, "uid", u.hidden.uids[0], "error", u.hidden.err.Error())
}

func newSockets(o Options, d *dumper, feed *destroyFeed) *sockets {
	s := &sockets{diag: d, feed: feed, fixed: o.Ports, self: o.Self, own: o.Own, local: localAddrs(),
		procs: newProcs(o.Root), last: time.Now(),
		listeners: map[uint16][]netip.Addr{}, checked: map[uint32]int{}, conns: map[uint64]uint64{}}
	for _, p := range o.Ports {
		s.listeners[p] = []netip.Addr{netip.IPv6Unspecified()}
	}
	return s
}

// traffic records traffic at t.
func (s *sockets) traffic(t time.Time) {
	if t.After(s.last) {
		s.last = t
	}
}

// follow has the kernel pass the destroy reports of the listeners' ports,
// none while paused.
func (s *sockets) follow() error {
	if s.feed == nil {
		return nil
	}
	if s.paused {
		return s.feed.watch(nil)
	}
	ports := make([]uint16, 0, len(s.listeners))
	for p := range s.listeners {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	return s.feed.watch(ports)
}

// pause stops the reports, or lets them through again; the arrivals after a
// pause are a new stretch.
func (s *sockets) pause(paused bool) {
	if s.paused == paused {
		return
	}
	s.paused = paused
	if !paused {
		s.arrivals.resume()
	}
	_ = s.follow()
}

// findListeners looks for listening sockets below the root not known yet,
// follows them and returns them, and sets blind to traffic it cannot see
// (see proc_linux.go): every listening socket that could be a blind
// process's is followed, and a UDP socket makes it blind. Listening sockets
// are few, so the dump is cheap. The processes below the root and their UDP
// sockets are walked again when a listening socket is new, or with walk;
// descriptors are read only for an inode not seen before. With fixed ports
// it does nothing.
func (s *sockets) findListeners(walk bool) ([]string, error) {
	if len(s.fixed) > 0 {
		return nil, nil
	}
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
	if walk || len(unknown) > 0 {
		s.procs.walk()
		s.walkUDP(socks, unknown)
	}
	if len(unknown) > 0 {
		held := s.procs.owning(unknown)
		for inode := range unknown {
			s.checked[inode] = held[inode]
			if s.self != 0 && held[inode] == s.self {
				s.checked[inode] = ownSocket
			}
		}
	}
	s.blind = nil
	for _, u := range s.udp {
		pid := s.checked[u.inode]
		if pid == ownSocket {
			continue
		}
		if pid != 0 {
			s.blind = &unseen{udp: u, holder: pid}
			break
		}
		if b := s.procs.couldHold(u.uid); b != nil && s.blind == nil {
			s.blind = &unseen{udp: u, hidden: b}
		}
	}
	var added []string
	for _, l := range socks {
		pid := s.checked[l.inode]
		if (pid > 0 || pid == 0 && s.procs.owners[l.uid]) && !slices.Contains(s.listeners[l.port], l.ip) {
			s.listeners[l.port] = append(s.listeners[l.port], l.ip)
			added = append(added, net.JoinHostPort(l.ip.String(), strconv.Itoa(int(l.port))))
		}
	}
	if len(added) > 0 {
		if err := s.follow(); err != nil {
			return nil, err
		}
	}
	return added, nil
}

// walkUDP lists the unconnected UDP sockets again, adds those not seen
// before to unknown, and forgets the sockets gone: UDP sockets come and go
// with the clients that send from unconnected ones.
func (s *sockets) walkUDP(listening []sock, unknown map[uint32]bool) {
	s.udp, s.udpErr = s.diag.dumpUDP()
	for _, u := range s.udp {
		if _, ok := s.checked[u.inode]; !ok {
			unknown[u.inode] = true
		}
	}
	open := make(map[uint32]bool, len(listening)+len(s.udp))
	for _, l := range listening {
		open[l.inode] = true
	}
	for _, u := range s.udp {
		open[u.inode] = true
	}
	maps.DeleteFunc(s.checked, func(inode uint32, _ int) bool { return !open[inode] })
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
		prev, seen := old[c.cookie]
		s.saw(c, seen, prev, at, s.looked)
	}
	s.looked = true
	return nil
}

// saw records what a look at connection c shows, at: prev is its byte count
// at the look before, if seen then. A connection not seen before is new, and
// traffic wherever it comes from; data on one seen before is traffic from
// inside the pod, and pinned (not traffic) from outside it. A new connection
// from outside the pod is an arrival too when fresh says it opened since the
// watch began to look (the first look finds connections of any age).
func (s *sockets) saw(c sock, seen bool, prev uint64, at time.Time, fresh bool) {
	switch {
	case !seen:
		s.traffic(lastData(c, at))
		if fresh && !s.inside(c.peer.Addr()) {
			s.arrivals.add(lastData(c, at))
		}
	case c.hasInfo && c.bytesIn == prev:
		// nothing received since
	case s.inside(c.peer.Addr()):
		s.traffic(lastData(c, at))
	default:
		if t := lastData(c, at); t.After(s.pinned) {
			s.pinned = t
		}
	}
}

// inside says whether a peer is in the pod: a loopback address, or one of
// the network namespace's own (the pod's address, which a sidecar proxy
// may send from).
func (s *sockets) inside(peer netip.Addr) bool {
	return s.local == nil || peer.IsLoopback() || s.local[peer]
}

// localAddrs are the addresses of the network namespace's interfaces; nil
// when they cannot be listed, and then every peer counts as inside, the
// safe side.
func localAddrs() map[netip.Addr]bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	local := map[netip.Addr]bool{}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				local[ip.Unmap()] = true
			}
		}
	}
	return local
}

// destroyed records a socket the kernel has freed: a connection is traffic
// as a look would find it, a listener or a half-open connection is not.
// Reports the kernel dropped are traffic now: the safe side is to serve on.
func (s *sockets) destroyed(e destroyed) {
	if e.lost {
		s.traffic(e.at)
		return
	}
	switch {
	case e.state == tcpListen || e.state == tcpNewSynRecv:
	case s.ours(e.sock):
		prev, seen := s.conns[e.cookie]
		delete(s.conns, e.cookie)
		s.saw(e.sock, seen, prev, e.at, true)
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

// ours reports whether c is a connection on one of the listeners that
// proxy-await did not open itself (its checks of the app, which are neither
// traffic nor counted).
func (s *sockets) ours(c sock) bool {
	return slices.ContainsFunc(s.listeners[c.port], func(ip netip.Addr) bool {
		return ip.IsUnspecified() || ip == c.ip
	}) && (s.own == nil || !s.own.Own(c.peer))
}

// listenerList is "127.0.0.1:8080 [::]:9090", or "8080 9090" for fixed
// ports, for the logs.
func (s *sockets) listenerList() string {
	var out []string
	if len(s.fixed) > 0 {
		for _, p := range s.fixed {
			out = append(out, fmt.Sprint(p))
		}
		return strings.Join(out, " ")
	}
	for p, ips := range s.listeners {
		for _, ip := range ips {
			out = append(out, net.JoinHostPort(ip.String(), strconv.Itoa(int(p))))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
