package wrapper

import (
	"os"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/drain"
	"github.com/proxy-await/proxy-await/internal/signals"
)

// onStopSignal receives a SIGTERM, SIGINT or SIGQUIT. The first one is the
// stop signal, whichever of the three the kubelet sends (the image's
// STOPSIGNAL): it is held for --term-delay, then delivered once, as its
// rewrite, and --kill-after counts from then. A second one while it is held
// ends the hold and is not delivered itself: one stop, one signal. After
// that they are forwarded as any other signal. A signal rewritten to 0 is
// dropped, and is no stop signal.
func (s *Supervisor) onStopSignal(sig syscall.Signal) {
	switch {
	case s.rewrite(sig) == 0:
		s.log.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(sig))
	case s.phase == holding:
		why := signals.Name(sig) + " received"
		if sig == s.stop {
			why = "second " + why
		}
		s.deliverStop(why)
	case s.phase == stopping, s.phase == lost:
		s.forwardUnlessFromTerminal(sig)
	default:
		s.stopping(sig)
	}
}

// stopping receives the stop signal: it ends the watch of the proxy, which
// may now shut down, tells the probes, then holds or delivers the signal.
func (s *Supervisor) stopping(sig syscall.Signal) {
	s.endWatch("the stop signal arrived")
	if s.cfg.Probes != nil {
		s.cfg.Probes.Stopping()
	}
	switch {
	case s.fromTerminal(sig):
		// The keypress reached the child already: it cannot be held, and
		// sending it again would read as a second keypress.
		s.stop = sig
		s.endHold()
		s.armKill()
	case s.cfg.TermDelay > 0:
		s.stop = sig
		s.holdStop()
	default:
		s.stop = sig
		s.deliverStop("")
	}
}

// holdStop holds the stop signal for --term-delay, and with --drain-quiet
// tells the watch that has followed the listeners since the child started
// (learn) that it may end the hold sooner.
func (s *Supervisor) holdStop() {
	s.phase = holding
	s.hold = time.NewTimer(s.cfg.TermDelay)
	name := signals.Name(s.stop)
	attrs := []any{"event", "term_held", "signal", name, "term_delay", s.cfg.TermDelay}
	if s.cfg.DrainQuiet > 0 {
		attrs = append(attrs, "drain_quiet", s.cfg.DrainQuiet)
	}
	s.log.Info("holding "+name+" while the child keeps serving", attrs...)
	s.drain.Hold()
}

// learn starts, with --drain-quiet, the watch of the child's listeners, so
// that by the stop signal it knows how far apart new connections come: the
// quiet period it then waits for is --drain-quiet, or longer for a service
// whose clients connect more seldom.
func (s *Supervisor) learn() {
	if s.cfg.DrainQuiet == 0 || s.cfg.TermDelay == 0 {
		return
	}
	// Every process below proxy-await: the child's tree, and the orphans
	// reparented to proxy-await (a server that daemonized). proxy-await's
	// own sockets (the probes it serves) and its checks of the app are not
	// traffic.
	s.drain = drain.Learn(drain.Options{Root: os.Getpid(), Self: os.Getpid(), Own: s.cfg.Probes,
		Ports: s.cfg.DrainPorts, Quiet: s.cfg.DrainQuiet, TermDelay: s.cfg.TermDelay, Logger: s.log})
}

// deliverStop ends any hold and delivers the stop signal as its rewrite,
// then arms --kill-after. why says what ended the hold; "" when there was
// none.
func (s *Supervisor) deliverStop(why string) {
	s.deliver(why, s.endHold())
}

// deliverQuiet is deliverStop once the watch found the listeners quiet, in
// the watch's words of why.
func (s *Supervisor) deliverQuiet() {
	drained := s.endHold()
	s.deliver(drained.Reason(), drained)
}

// endHold stops the hold's timer and its watch, and returns what the watch
// saw, with a fresh look at the connections.
func (s *Supervisor) endHold() drain.Status {
	s.phase = stopping
	stopTimer(s.hold)
	s.hold = nil
	drained := s.drain.Stop()
	s.drain = nil
	return drained
}

// deliver sends the stop signal as its rewrite, says why and what the watch
// saw, and arms --kill-after.
func (s *Supervisor) deliver(why string, drained drain.Status) {
	to := s.rewrite(s.stop)
	attrs := s.forwarded(s.stop, to)
	if why != "" {
		attrs = append(attrs, "reason", why)
	}
	if drained.Armed {
		attrs = append(attrs, "connections", drained.Connections,
			"since_traffic", time.Since(drained.LastTraffic).Round(time.Millisecond))
	}
	if drained.Pinned() {
		attrs = append(attrs, "since_pinned", time.Since(drained.LastPinned).Round(time.Millisecond))
	}
	s.log.Info("delivering termination signal", attrs...)
	s.send(to)
	s.armKill()
}

// armKill starts --kill-after, once.
func (s *Supervisor) armKill() {
	if s.cfg.KillAfter > 0 && s.kill == nil {
		s.kill = time.NewTimer(s.cfg.KillAfter)
	}
}
