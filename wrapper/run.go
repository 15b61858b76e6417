package wrapper

import (
	"errors"
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/signals"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/drain"
)

// Run starts the child and supervises it until it exits, then returns the
// code proxy-await should exit with. sigs must come from Notify, subscribed
// before the child starts; Run is the only reader of sigs and the only caller
// of wait4 while it runs. A *StartError says the child never started.
func Run(cfg Config, sigs <-chan os.Signal) (int, error) {
	// The parent-death signal fires when the forking thread ends, not the
	// process: keep this goroutine on its thread until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	becomeReaper(cfg.Logger)

	cmd := command(cfg)
	tty := cfg.ProcessGroup && foregroundTTY()
	cmd.SysProcAttr = sysProcAttr(cfg.ProcessGroup, tty)
	proc, err := spawn(cmd)
	if err != nil {
		return 0, err
	}
	// The process is reaped by wait4 below, never by cmd.Wait; Release only
	// frees the handle os/exec keeps.
	defer proc.Release()

	s := &supervisor{Config: cfg, pid: proc.Pid, target: proc.Pid, tty: tty}
	if cfg.ProcessGroup {
		s.target = -s.pid
	}
	cfg.Logger.Debug("child started", "event", "child_started", "child_pid", s.pid)
	return s.loop(sigs)
}

// supervisor is the state of one child's supervision. Only Run's goroutine
// touches it.
type supervisor struct {
	Config
	pid    int  // the main child
	target int  // where signals go: pid, or -pid for its process group
	tty    bool // the child's group was handed the terminal on stdin (-g)

	stop        syscall.Signal // the stop signal (see onStopSignal); 0 until it arrives
	sentSIGSTOP bool           // a SIGSTOP was sent whose stop the child has not reported yet
	hold        *time.Timer    // ends the hold of the stop signal (--term-delay); nil when none is held
	kill        *time.Timer    // --kill-after; nil until the stop signal is delivered
	drain       *drain.Watch   // --drain-quiet; nil when not draining
}

func (s *supervisor) loop(sigs <-chan os.Signal) (int, error) {
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
			return s.childExited(ws, sigs), nil
		}
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				s.handle(sig.(syscall.Signal))
			}
		case <-timerC(s.hold):
			s.deliverStop("term delay elapsed")
		case <-s.drain.Quiet():
			s.deliverStop(drainedQuiet)
		case <-timerC(s.kill):
			s.Logger.Warn("child still running after the termination signal: sending SIGKILL",
				"event", "kill_after", "child_pid", s.pid, "kill_after", s.KillAfter)
			s.send(syscall.SIGKILL)
		}
	}
}

// handle deals with one received signal.
func (s *supervisor) handle(sig syscall.Signal) {
	switch {
	case s.OwnSignal != nil && s.OwnSignal(sig):
		s.Logger.Debug("signal raised by proxy-await's own write: not forwarded", "event", "signal_dropped",
			"signal", signals.Name(sig))
	case signals.IsTermination(sig):
		s.onStopSignal(sig)
	case sig == syscall.SIGTSTP:
		s.forwardUnlessFromTerminal(sig)
	case sig == syscall.SIGCONT && s.tty:
		// Resumed after a stop: "fg" made our group the terminal's
		// foreground again; pass the terminal on to the child's group before
		// it runs, or its first read would stop it again. After "bg" the
		// terminal stays where it is.
		if fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && fg == unix.Getpgrp() {
			s.giveTerminal(s.pid)
		}
		s.forward(sig)
	default:
		s.forward(sig)
	}
}

// forwardUnlessFromTerminal forwards a SIGINT, SIGQUIT or SIGTSTP, unless
// the terminal may have sent it to the whole foreground process group, the
// child included (a Ctrl-C without -g): a second copy would read as a second
// keypress. Without si_code, a signal sent to proxy-await alone with kill is
// then not forwarded either.
func (s *supervisor) forwardUnlessFromTerminal(sig syscall.Signal) {
	if !s.fromTerminal(sig) {
		s.forward(sig)
	}
}

// fromTerminal says whether sig may be a keypress that the terminal sent to
// the child as well, and logs it if so.
func (s *supervisor) fromTerminal(sig syscall.Signal) bool {
	if sig == syscall.SIGTERM || !s.sharesForeground() {
		return false
	}
	s.Logger.Debug("signal from the terminal reached the child too: not forwarded",
		"event", "signal_from_terminal", "signal", signals.Name(sig))
	return true
}

// sharesForeground says whether the child is in our process group and that
// group is the foreground group of our controlling terminal.
func (s *supervisor) sharesForeground() bool {
	if s.ProcessGroup {
		return false
	}
	fg, ok := terminalForeground()
	if !ok || fg != unix.Getpgrp() {
		return false
	}
	child, err := unix.Getpgid(s.pid)
	return err == nil && child == fg
}

// childStopped follows the child into a job-control stop (Ctrl-Z, or a
// stop signal forwarded to it): proxy-await stops too, so that the shell
// that started it sees the job stopped and takes the terminal back. SIGCONT
// resumes proxy-await, which forwards it. It does so only under job control,
// where a shell resumes it: without a controlling terminal whose foreground
// group is proxy-await's (or, with -g, the child's that it handed the
// terminal to) nothing would (under setsid, tini -s, docker --init,
// shareProcessNamespace), and a stopped proxy-await would ignore the
// kubelet's SIGTERM until its SIGKILL. As PID 1 the kernel would not stop us
// anyway. A SIGSTOP that did not come through proxy-await froze the child
// from outside (kill -STOP, a debugger), which thaws it the same way:
// stopped too, proxy-await would never be resumed, nor see the child exit.
func (s *supervisor) childStopped(sig syscall.Signal) {
	frozen := sig == syscall.SIGSTOP && !s.sentSIGSTOP
	s.sentSIGSTOP = false
	switch {
	case os.Getpid() == 1:
		return
	case frozen:
		s.Logger.Debug("child stopped from outside: not stopping too", "event", "child_stopped",
			"signal", signals.Name(sig))
		return
	case !s.jobControl():
		s.Logger.Debug("child stopped: not stopping too, as no job control would resume proxy-await",
			"event", "child_stopped", "signal", signals.Name(sig))
		return
	}
	s.Logger.Debug("child stopped: stopping too", "event", "child_stopped", "signal", signals.Name(sig))
	_ = unix.Kill(os.Getpid(), syscall.SIGSTOP)
}

// jobControl says whether a shell can resume proxy-await once it stops: its
// controlling terminal's foreground group is its own, or the child's group
// that it handed the terminal to.
func (s *supervisor) jobControl() bool {
	fg, ok := terminalForeground()
	return ok && (fg == unix.Getpgrp() || s.ProcessGroup && fg == s.pid)
}

// terminalForeground is the foreground process group of our controlling
// terminal; false without one.
func terminalForeground() (int, bool) {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return fg, err == nil
}

// giveTerminal makes pgrp the foreground group of the terminal on stdin.
func (s *supervisor) giveTerminal(pgrp int) {
	if err := setForeground(0, pgrp); err != nil {
		s.Logger.Warn("cannot hand the terminal on", "event", "terminal_failed", "pgrp", pgrp, "error", err.Error())
	}
}

// onStopSignal receives a SIGTERM, SIGINT or SIGQUIT. The first one is the
// stop signal, whichever of the three the kubelet sends (the image's
// STOPSIGNAL): it is held for --term-delay, then delivered once, as its
// rewrite, and --kill-after counts from then. A second one while it is held
// ends the hold and is not delivered itself: one stop, one signal. After
// that they are forwarded as any other signal. A signal rewritten to 0 is
// dropped, and is no stop signal.
func (s *supervisor) onStopSignal(sig syscall.Signal) {
	switch {
	case s.rewrite(sig) == 0:
		s.Logger.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(sig))
	case s.hold != nil:
		why := signals.Name(sig) + " received"
		if sig == s.stop {
			why = "second " + why
		}
		s.deliverStop(why)
	case s.stop != 0:
		s.forwardUnlessFromTerminal(sig)
	default:
		s.stopping(sig)
	}
}

// stopping receives the stop signal: it tells OnStop, then holds or
// delivers it.
func (s *supervisor) stopping(sig syscall.Signal) {
	if s.OnStop != nil {
		s.OnStop()
	}
	switch {
	case s.fromTerminal(sig):
		// The keypress reached the child already: it cannot be held, and
		// sending it again would read as a second keypress.
		s.stop = sig
		s.armKill()
	case s.TermDelay > 0:
		s.stop = sig
		s.holdStop()
	default:
		s.stop = sig
		s.deliverStop("")
	}
}

// holdStop holds the stop signal for --term-delay, and with --drain-quiet
// starts the watch that may end the hold sooner.
func (s *supervisor) holdStop() {
	s.hold = time.NewTimer(s.TermDelay)
	name := signals.Name(s.stop)
	attrs := []any{"event", "term_held", "signal", name, "term_delay", s.TermDelay}
	if s.DrainQuiet > 0 {
		attrs = append(attrs, "drain_quiet", s.DrainQuiet)
	}
	s.Logger.Info("holding "+name+" while the child keeps serving", attrs...)
	if s.DrainQuiet > 0 {
		// Every process below proxy-await: the child's tree, and the
		// orphans reparented to proxy-await (a server that daemonized).
		// proxy-await's own sockets (the probes it serves) and its
		// checks of the app are not traffic.
		s.drain = drain.Start(drain.Options{Root: os.Getpid(), Self: os.Getpid(), Own: s.Own,
			Ports: s.DrainPorts, Quiet: s.DrainQuiet, Logger: s.Logger})
	}
}

// drainedQuiet asks deliverStop to say why the watch found the listeners
// quiet.
const drainedQuiet = "drained"

// deliverStop ends any hold and delivers the stop signal as its rewrite,
// then arms --kill-after.
func (s *supervisor) deliverStop(why string) {
	stopTimer(s.hold)
	s.hold = nil
	drained := s.drain.Stop() // a fresh look at the connections
	s.drain = nil
	pinned := drained.Armed && drained.LastPinned.After(drained.LastTraffic)
	if why == drainedQuiet {
		why = "no traffic for " + s.DrainQuiet.String()
		if pinned {
			why = "no new connection for " + s.DrainQuiet.String() +
				": only connections from outside the pod still send, and the endpoint removal does not move them"
		}
	}
	to := s.rewrite(s.stop)
	attrs := s.forwarded(s.stop, to)
	if why != "" {
		attrs = append(attrs, "reason", why)
	}
	if drained.Armed {
		attrs = append(attrs, "connections", drained.Connections,
			"since_traffic", time.Since(drained.LastTraffic).Round(time.Millisecond))
	}
	if pinned {
		attrs = append(attrs, "since_pinned", time.Since(drained.LastPinned).Round(time.Millisecond))
	}
	s.Logger.Info("delivering termination signal", attrs...)
	s.send(to)
	s.armKill()
}

// armKill starts --kill-after, once.
func (s *supervisor) armKill() {
	if s.KillAfter > 0 && s.kill == nil {
		s.kill = time.NewTimer(s.KillAfter)
	}
}

// forward passes sig on as its rewrite.
func (s *supervisor) forward(sig syscall.Signal) {
	to := s.rewrite(sig)
	if to == 0 {
		s.Logger.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(sig))
		return
	}
	if signals.IsTermination(sig) {
		s.Logger.Info("forwarding signal", s.forwarded(sig, to)...)
	} else {
		s.Logger.Debug("forwarding signal", s.forwarded(sig, to)...)
	}
	s.send(to)
}

// forwarded is the attributes of the line that says sig goes to the child
// as to.
func (s *supervisor) forwarded(sig, to syscall.Signal) []any {
	attrs := []any{"event", "signal_forwarded", "signal", signals.Name(sig), "child_pid", s.pid}
	if to != sig {
		attrs = append(attrs, "as", signals.Name(to))
	}
	return attrs
}

func (s *supervisor) rewrite(sig syscall.Signal) syscall.Signal {
	if to, ok := s.Rewrite[sig]; ok {
		return to
	}
	return sig
}

// send signals the child, or its process group with -g.
func (s *supervisor) send(sig syscall.Signal) {
	if sig == 0 {
		return
	}
	s.sentSIGSTOP = s.sentSIGSTOP || sig == syscall.SIGSTOP
	err := unix.Kill(s.target, sig)
	switch {
	case errors.Is(err, syscall.ESRCH):
		s.Logger.Debug("child already gone", "event", "signal_esrch", "signal", signals.Name(sig))
	case err != nil:
		s.Logger.Error("cannot signal the child", "event", "signal_failed",
			"signal", signals.Name(sig), "child_pid", s.pid, "error", err.Error())
	}
}

// reap collects every child that has exited: the main child, whose status it
// returns, and orphans reparented to us, which it only logs; none says that
// no child is left at all.
func (s *supervisor) reap() (ws syscall.WaitStatus, exited, none bool, err error) {
	return reap(s.Logger, s.pid, s.childStopped)
}

// ReapOrphans reaps the orphans reparented to proxy-await as PID 1 while no
// child of its own runs (while it waits for the proxy). Call it on SIGCHLD.
func ReapOrphans(log *slog.Logger) error {
	_, _, _, err := reap(log, 0, nil)
	return err
}

// reap collects every child that has exited; main's status is returned, the
// others are only logged; none says no child is left at all. With stopped,
// main's stops are reported to it.
func reap(log *slog.Logger, main int, stopped func(syscall.Signal)) (ws syscall.WaitStatus, exited, none bool, err error) {
	flags := syscall.WNOHANG
	if stopped != nil {
		flags |= syscall.WUNTRACED
	}
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, flags, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return ws, exited, true, nil
		case err == nil && pid <= 0:
			return ws, exited, false, nil
		case err != nil:
			return ws, exited, false, &os.SyscallError{Syscall: "wait4", Err: err}
		case status.Stopped() && pid == main:
			stopped(status.StopSignal())
		case status.Stopped(): // an orphan stopped: nothing to reap
		case pid == main:
			ws, exited = status, true
		default:
			log.Debug("reaped orphan", "event", "orphan_reaped", "pid", pid, "exit_code", exitcode.Of(status))
		}
	}
}

// childExited logs how the child ended and, with -g, tells what is left of its
// process group to stop, as dumb-init does; with --wait-all it waits for
// whatever the child left behind.
func (s *supervisor) childExited(ws syscall.WaitStatus, sigs <-chan os.Signal) int {
	code := exitcode.Of(ws)
	if ws.Signaled() {
		s.Logger.Info("child killed by signal", "event", "child_exited", "child_pid", s.pid,
			"signal", signals.Name(ws.Signal()), "exit_code", code)
	} else {
		s.Logger.Info("child exited", "event", "child_exited", "child_pid", s.pid, "exit_code", code)
	}
	if s.ProcessGroup {
		if err := unix.Kill(-s.pid, syscall.SIGTERM); err == nil {
			s.Logger.Debug("sent SIGTERM to the rest of the child's process group", "event", "group_terminated")
		}
	}
	// The terminal was handed to the child's group: take it back, or the
	// shell's next read would find a terminal whose foreground is gone.
	if s.tty {
		if fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && fg == s.pid {
			s.giveTerminal(unix.Getpgrp())
		}
	}
	_, _, _, _ = s.reap()
	if s.WaitAll > 0 {
		s.waitAll(sigs)
	}
	return code
}

func (s *supervisor) stopTimers() {
	stopTimer(s.hold)
	stopTimer(s.kill)
	s.drain.Stop()
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

// foregroundTTY reports whether stdin is a terminal whose foreground process
// group is ours: a child in its own group must then be handed the terminal,
// as tini does, or it would be stopped by SIGTTIN/SIGTTOU when it used it.
func foregroundTTY() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
