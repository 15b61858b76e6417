package wrapper

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"

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
	cmd.SysProcAttr = sysProcAttr(cfg.ProcessGroup, cfg.ProcessGroup && foregroundTTY())
	if err := cmd.Start(); err != nil {
		return 0, startError(err)
	}
	// The process is reaped by wait4 below, never by cmd.Wait; Release only
	// frees the handle os/exec keeps.
	defer cmd.Process.Release()

	s := &supervisor{Config: cfg, pid: cmd.Process.Pid, target: cmd.Process.Pid}
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
	pid    int // the main child
	target int // where signals go: pid, or -pid for its process group

	termSent bool         // the termination signal has been delivered
	hold     *time.Timer  // ends the hold of a SIGTERM (--term-delay); nil when none is held
	kill     *time.Timer  // --kill-after; nil until the termination signal
	drain    *drain.Watch // --drain-quiet; nil when not draining
}

func (s *supervisor) loop(sigs <-chan os.Signal) (int, error) {
	defer s.stopTimers()
	// Reap first what exited before the loop began: orphans reparented to
	// PID 1 while we waited for the proxy (their SIGCHLD went unread), or a
	// child that exited at once.
	switch ws, exited, err := s.reap(); {
	case err != nil:
		return 0, err
	case exited:
		return s.finish(ws), nil
	}
	for {
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				s.handle(sig.(syscall.Signal))
				continue
			}
			ws, exited, err := s.reap()
			if err != nil {
				return 0, err
			}
			if exited {
				return s.finish(ws), nil
			}
		case <-timerC(s.hold):
			s.deliverTerm("term delay elapsed")
		case <-s.drain.Quiet():
			s.deliverTerm("no traffic for " + s.DrainQuiet.String())
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
	case sig == syscall.SIGTERM:
		s.onTerm()
	case sig == syscall.SIGINT && s.hold != nil:
		s.deliverTerm("SIGINT received")
		s.forward(sig)
	case sig == syscall.SIGTSTP || sig == syscall.SIGTTIN || sig == syscall.SIGTTOU:
		// Job control, as dumb-init does it: pass the stop on, then stop
		// ourselves, so that neither the wrapper nor the child runs while the
		// other is stopped. SIGCONT (forwarded like any signal) resumes both.
		s.forward(sig)
		if os.Getpid() != 1 {
			_ = unix.Kill(os.Getpid(), syscall.SIGSTOP)
		}
	default:
		s.forward(sig)
	}
}

// onTerm receives SIGTERM: hold it for --term-delay, or deliver it.
func (s *supervisor) onTerm() {
	switch {
	case s.rewrite(syscall.SIGTERM) == 0:
		s.Logger.Debug("dropped SIGTERM (rewritten to 0)", "event", "signal_dropped", "signal", "SIGTERM")
	case s.hold != nil:
		s.deliverTerm("second SIGTERM received")
	case s.TermDelay > 0 && !s.termSent:
		s.hold = time.NewTimer(s.TermDelay)
		attrs := []any{"event", "term_held", "signal", "SIGTERM", "term_delay", s.TermDelay}
		if s.DrainQuiet > 0 {
			s.drain = drain.Start(s.pid, s.DrainQuiet, s.Logger)
			attrs = append(attrs, "drain_quiet", s.DrainQuiet)
		}
		s.Logger.Info("holding SIGTERM while the child keeps serving", attrs...)
	default:
		s.deliverTerm("")
	}
}

// deliverTerm ends any hold and delivers SIGTERM as its rewrite, then arms
// --kill-after.
func (s *supervisor) deliverTerm(why string) {
	stopTimer(s.hold)
	s.hold = nil
	drained := s.drain.Status()
	s.drain.Stop()
	s.drain = nil
	to := s.rewrite(syscall.SIGTERM)
	attrs := []any{"event", "signal_forwarded", "signal", "SIGTERM", "child_pid", s.pid}
	if to != syscall.SIGTERM {
		attrs = append(attrs, "as", SignalName(to))
	}
	if why != "" {
		attrs = append(attrs, "reason", why)
	}
	if drained.Armed {
		attrs = append(attrs, "connections", drained.Connections,
			"since_traffic", time.Since(drained.LastTraffic).Round(time.Millisecond))
	}
	s.Logger.Info("delivering termination signal", attrs...)
	s.send(to)
	s.termSent = true
	if s.KillAfter > 0 && s.kill == nil {
		s.kill = time.NewTimer(s.KillAfter)
	}
}

// forward passes sig on as its rewrite.
func (s *supervisor) forward(sig syscall.Signal) {
	to := s.rewrite(sig)
	if to == 0 {
		s.Logger.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", SignalName(sig))
		return
	}
	attrs := []any{"event", "signal_forwarded", "signal", SignalName(sig), "child_pid", s.pid}
	if to != sig {
		attrs = append(attrs, "as", SignalName(to))
	}
	if IsTermination(sig) {
		s.Logger.Info("forwarding signal", attrs...)
	} else {
		s.Logger.Debug("forwarding signal", attrs...)
	}
	s.send(to)
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
	err := unix.Kill(s.target, sig)
	switch {
	case errors.Is(err, syscall.ESRCH):
		s.Logger.Debug("child already gone", "event", "signal_esrch", "signal", SignalName(sig))
	case err != nil:
		s.Logger.Error("cannot signal the child", "event", "signal_failed",
			"signal", SignalName(sig), "child_pid", s.pid, "error", err.Error())
	}
}

// reap collects every child that has exited: the main child, whose status it
// returns, and orphans reparented to us, which it only logs.
func (s *supervisor) reap() (ws syscall.WaitStatus, exited bool, err error) {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD), err == nil && pid <= 0:
			return ws, exited, nil
		case err != nil:
			return ws, exited, &os.SyscallError{Syscall: "wait4", Err: err}
		case pid == s.pid:
			ws, exited = status, true
		default:
			s.Logger.Debug("reaped orphan", "event", "orphan_reaped", "pid", pid, "exit_code", ExitCode(status))
		}
	}
}

// finish logs how the child ended and, with -g, tells what is left of its
// process group to stop, as dumb-init does.
func (s *supervisor) finish(ws syscall.WaitStatus) int {
	code := ExitCode(ws)
	if ws.Signaled() {
		s.Logger.Info("child killed by signal", "event", "child_exited", "child_pid", s.pid,
			"signal", SignalName(ws.Signal()), "exit_code", code)
	} else {
		s.Logger.Info("child exited", "event", "child_exited", "child_pid", s.pid, "exit_code", code)
	}
	if s.ProcessGroup {
		if err := unix.Kill(-s.pid, syscall.SIGTERM); err == nil {
			s.Logger.Debug("sent SIGTERM to the rest of the child's process group", "event", "group_terminated")
		}
	}
	_, _, _ = s.reap()
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
