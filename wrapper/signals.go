package wrapper

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/drain"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/proxyloss"
	"github.com/proxy-await/proxy-await/internal/signals"
)

// This file is the path of every signal through the supervisor, the stop
// signal's above all, from its arrival to the child: loop receives it,
// handle rewrites it (once), stopSignal moves the stop on by the phase, and
// deliver sends it. The hold's end, the drain's quiet and the loss of the
// proxy arrive in loop too, and end in deliver.

// Notify subscribes to every forwarded signal and SIGCHLD on one buffered
// channel. Call it before starting anything, so that no signal is lost.
//
// A signal that proxy-await inherited as ignored (under nohup, or after
// `trap "" HUP INT`) is left out: subscribing would undo the SIG_IGN, which
// the child inherits only if proxy-await keeps it. The Go runtime keeps an
// inherited SIG_IGN only for SIGHUP and SIGINT; for every other signal it has
// installed its own handler before proxy-await runs, and the inherited
// disposition cannot be seen.
func Notify() chan os.Signal {
	c := make(chan os.Signal, 128)
	subscribe := []os.Signal{syscall.SIGCHLD}
	for _, s := range signals.Forwarded() {
		if !signal.Ignored(s) {
			subscribe = append(subscribe, s)
		}
	}
	signal.Notify(c, subscribe...)
	return c
}

// phase is where the stop signal stands.
type phase int

const (
	serving   phase = iota // no stop signal yet
	holding                // the stop signal is held for --term-delay, or until the drain watch says quiet
	delivered              // the stop signal has reached the child; --kill-after counts
	lost                   // the proxy was lost and the child got its stop; --kill-after counts, and the run exits 69
)

// stop is the stop signal: the one that arrived, and the one the child gets
// (its rewrite, computed on arrival), or 0 when the child gets none from
// proxy-await.
type stop struct {
	sig, as syscall.Signal
}

// loop supervises the child until it has exited and been reaped, and
// returns the code to exit with: it is where every signal, every end of a
// hold and the loss of the proxy arrive.
func (s *Supervisor) loop() (int, error) {
	defer s.stopTimers()
	for {
		// Reap at every turn, as tini does, not only after a SIGCHLD:
		// signal.Notify drops a signal that finds the channel full, so
		// under a storm of signals the SIGCHLD of the child's exit may
		// never arrive. It is lost only to a full channel, whose signals
		// then come after the exit, each followed by a reap. The first
		// turn reaps what exited before the loop began.
		switch ws, exited, _, err := s.reap(); {
		case err != nil:
			return 0, err
		case exited:
			return s.exitCode(s.childExited(ws)), nil
		}
		select {
		case sig := <-s.sigs:
			if sig != syscall.SIGCHLD {
				s.handle(sig.(syscall.Signal))
			}
		case <-timerC(s.hold):
			s.deliver("term delay elapsed")
		case <-s.drain.Quiet():
			s.deliver(s.drain.Stop().Reason())
		case loss := <-s.proxyLoss():
			s.proxyLost(loss)
		case <-timerC(s.kill):
			s.log.Warn("child still running after the termination signal: sending SIGKILL",
				"event", "kill_after", "child_pid", s.pid, "kill_after", s.cfg.KillAfter)
			s.send(syscall.SIGKILL)
		}
	}
}

// handle deals with one received signal, rewritten once, here, to as.
func (s *Supervisor) handle(sig syscall.Signal) {
	as := s.rewrite(sig)
	switch {
	case s.own(sig):
		s.log.Debug("signal raised by proxy-await's own write: not forwarded", "event", "signal_dropped",
			"signal", signals.Name(sig))
	case signals.IsTermination(sig):
		s.stopSignal(sig, as)
	case sig == syscall.SIGTSTP:
		if !s.fromTerminal(sig) {
			s.forward(sig, as)
		}
	case sig == syscall.SIGCONT && s.tty:
		// Resumed after a stop: "fg" made our group the terminal's
		// foreground again; pass the terminal on to the child's group before
		// it runs, or its first read would stop it again. After "bg" the
		// terminal stays where it is.
		if fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && fg == unix.Getpgrp() {
			s.giveTerminal(s.pid)
		}
		s.forward(sig, as)
	default:
		s.forward(sig, as)
	}
}

// stopSignal receives a SIGTERM, SIGINT or SIGQUIT, whose rewrite is as. The
// first one is the stop signal, whichever of the three the kubelet sends
// (the image's STOPSIGNAL): it ends the watch of the proxy, which may now
// shut down, and tells the probes; then it is held for --term-delay, and
// delivered once. A second one while it is held ends the hold and is not
// delivered itself: one stop, one signal. After that they are forwarded as
// any other signal. A signal rewritten to 0 is dropped, and is no stop
// signal.
func (s *Supervisor) stopSignal(sig, as syscall.Signal) {
	if as == 0 {
		s.dropped(sig)
		return
	}
	switch s.phase {
	case serving:
		s.stop = stop{sig, as}
		s.endWatch("the stop signal arrived")
		if s.cfg.Probes != nil {
			s.cfg.Probes.Stopping()
		}
		switch {
		case s.fromTerminal(sig):
			// The keypress reached the child already: it cannot be held,
			// and sending it again would read as a second keypress.
			s.stop.as = 0
			s.deliver("")
		case s.cfg.TermDelay > 0:
			s.phase = holding
			s.hold = time.NewTimer(s.cfg.TermDelay)
			attrs := []any{"event", "term_held", "signal", signals.Name(sig), "term_delay", s.cfg.TermDelay}
			if s.cfg.DrainQuiet > 0 {
				attrs = append(attrs, "drain_quiet", s.cfg.DrainQuiet)
			}
			s.log.Info("holding "+signals.Name(sig)+" while the child keeps serving", attrs...)
			// The watch has followed the listeners since the child
			// started (Supervise): it may end the hold sooner.
			s.drain.Hold()
		default:
			s.deliver("")
		}
	case holding:
		why := signals.Name(sig) + " received"
		if sig == s.stop.sig {
			why = "second " + why
		}
		s.deliver(why)
	case delivered, lost:
		if !s.fromTerminal(sig) {
			s.forward(sig, as)
		}
	}
}

// proxyLost receives the watch's word that the proxy is gone, while the
// child serves (the watch ends at the stop signal). The child gets its stop
// at once, SIGTERM as its rewrite, never held by --term-delay or the drain:
// the pod is not leaving a Service's endpoints, its proxy is gone, and
// serving longer would only fail requests. --kill-after counts from here,
// and the run exits 69 once the child has exited (exitCode).
func (s *Supervisor) proxyLost(loss proxyloss.Loss) {
	s.endWatch("")
	s.log.Error("proxy lost: stopping the command, then exiting 69", "event", "proxy_lost",
		"url", loss.URL, "failing", loss.Failing, "error", loss.Err.Error())
	if s.cfg.Probes != nil {
		s.cfg.Probes.Stopping()
	}
	s.drain.Stop() // it learnt the listeners for a hold that will not come
	s.drain = nil
	s.stop = stop{syscall.SIGTERM, s.rewrite(syscall.SIGTERM)}
	if s.stop.as == 0 {
		s.dropped(syscall.SIGTERM)
	}
	s.deliver("proxy lost")
	s.phase = lost
}

// deliver ends the hold, if one was held, and sends the stop signal as its
// rewrite, once: the line says why (the hold's end; "" when none was held)
// and what the drain watch saw. --kill-after counts from here, whether the
// signal was sent, dropped (rewritten to 0) or already delivered by the
// terminal.
func (s *Supervisor) deliver(why string) {
	s.phase = delivered
	stopTimer(s.hold)
	s.hold = nil
	drained := s.drain.Stop()
	s.drain = nil
	if s.stop.as != 0 {
		attrs := s.forwarded(s.stop.sig, s.stop.as)
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
		s.send(s.stop.as)
	}
	if s.cfg.KillAfter > 0 {
		s.kill = time.NewTimer(s.cfg.KillAfter)
	}
}

// proxyLoss is the watch's channel of losses; nil, which no select takes,
// once the watch has ended or when there is none.
func (s *Supervisor) proxyLoss() <-chan proxyloss.Loss {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Lost()
}

// endWatch ends the watch of the proxy, if one runs, and says why, unless
// why is "".
func (s *Supervisor) endWatch(why string) {
	if s.proxy == nil {
		return
	}
	s.proxy.Stop()
	s.proxy = nil
	if why != "" {
		s.log.Debug("no longer watching the proxy: "+why, "event", "proxy_watch_ended")
	}
}

// exitCode is the code the run exits with once the child ended with code:
// the child's, or 69 after a loss of the proxy, whatever the child's was.
func (s *Supervisor) exitCode(code int) int {
	if s.phase == lost {
		return exitcode.Unavailable
	}
	return code
}

// stopTimers ends, as the supervision ends, what the stop signal's path
// may have left running: its timers, the drain watch, the proxy's watch.
func (s *Supervisor) stopTimers() {
	stopTimer(s.hold)
	stopTimer(s.kill)
	s.drain.Stop()
	s.endWatch("")
}

func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
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

// fromTerminal says whether sig, a SIGINT, SIGQUIT or SIGTSTP, may be a
// keypress that the terminal sent to the whole foreground process group,
// the child included (a Ctrl-C without -g): a second copy would read as a
// second keypress. It logs it if so. Without si_code, a signal sent to
// proxy-await alone with kill is then taken for one too.
func (s *Supervisor) fromTerminal(sig syscall.Signal) bool {
	if sig == syscall.SIGTERM || s.cfg.ProcessGroup {
		return false
	}
	// The child shares our process group, which must be the foreground
	// group of our controlling terminal.
	fg, ok := terminalForeground()
	if !ok || fg != unix.Getpgrp() {
		return false
	}
	if child, err := unix.Getpgid(s.pid); err != nil || child != fg {
		return false
	}
	s.log.Debug("signal from the terminal reached the child too: not forwarded",
		"event", "signal_from_terminal", "signal", signals.Name(sig))
	return true
}

// forward passes sig on as as, its rewrite.
func (s *Supervisor) forward(sig, as syscall.Signal) {
	if as == 0 {
		s.dropped(sig)
		return
	}
	if signals.IsTermination(sig) {
		s.log.Info("forwarding signal", s.forwarded(sig, as)...)
	} else {
		s.log.Debug("forwarding signal", s.forwarded(sig, as)...)
	}
	s.send(as)
}

// dropped says that sig was rewritten to 0.
func (s *Supervisor) dropped(sig syscall.Signal) {
	s.log.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(sig))
}

// forwarded is the attributes of the line that says sig goes to the child
// as as.
func (s *Supervisor) forwarded(sig, as syscall.Signal) []any {
	attrs := []any{"event", "signal_forwarded", "signal", signals.Name(sig), "child_pid", s.pid}
	if as != sig {
		attrs = append(attrs, "as", signals.Name(as))
	}
	return attrs
}

func (s *Supervisor) rewrite(sig syscall.Signal) syscall.Signal {
	if to, ok := s.cfg.Rewrite[sig]; ok {
		return to
	}
	return sig
}

// own says whether sig is one proxy-await raised itself: a SIGPIPE from
// writing its log to a pipe whose reader is gone. It is never acted on.
func (s *Supervisor) own(sig syscall.Signal) bool {
	return sig == syscall.SIGPIPE && s.out != nil && s.out.RaisedSigpipe()
}

// send signals the child, or its process group with -g.
func (s *Supervisor) send(sig syscall.Signal) {
	if sig == 0 {
		return
	}
	s.sentSIGSTOP = s.sentSIGSTOP || sig == syscall.SIGSTOP
	err := unix.Kill(s.target, sig)
	switch {
	case errors.Is(err, syscall.ESRCH):
		s.log.Debug("child already gone", "event", "signal_esrch", "signal", signals.Name(sig))
	case err != nil:
		s.log.Error("cannot signal the child", "event", "signal_failed",
			"signal", signals.Name(sig), "child_pid", s.pid, "error", err.Error())
	}
}
