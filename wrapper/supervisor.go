package wrapper

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/drain"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/signals"
)

// Supervisor owns proxy-await's signals and the reaping of its children for
// the whole run: while the proxy is awaited (Await) and while the child runs
// (Supervise). It is the only reader of the signal channel and the only
// caller of wait4. The zero Supervisor receives no signal.
type Supervisor struct {
	sigs <-chan os.Signal
	log  *slog.Logger
	out  LogOutput // nil: no signal is proxy-await's own

	// The supervision of the child, which Supervise sets up; only its
	// goroutine touches it.
	cfg    Config
	pid    int  // the main child
	target int  // where signals go: pid, or -pid for its process group
	tty    bool // the child's group was handed the terminal on stdin (-g)

	phase       phase        // where the stop signal stands (signals.go)
	stop        stop         // the stop signal, once it arrived
	sentSIGSTOP bool         // a SIGSTOP was sent whose stop the child has not reported yet
	hold        *time.Timer  // ends the hold of the stop signal (--term-delay); nil when none is held
	kill        *time.Timer  // --kill-after; nil until the stop signal is delivered
	drain       *drain.Watch // --drain-quiet, from the child's start until the hold ends; nil when not draining
	proxy       ProxyWatch   // --proxy-lost, from the child's start until the stop signal or the loss; nil when not watching
}

// LogOutput is where proxy-await's log lines go (logging.Stderr). A write
// to a pipe whose reader is gone raises SIGPIPE, which is proxy-await's own
// and never the child's to receive: RaisedSigpipe says whether a SIGPIPE
// that arrived was that, and claims it.
type LogOutput interface {
	RaisedSigpipe() bool
}

// NewSupervisor subscribes to the signals (see Notify): call it before
// anything else, so that no signal goes unhandled. The subscription is never
// undone: the process exits right after the run, and undoing it costs half a
// millisecond on every exit. Its lines go to log, which writes to out.
func NewSupervisor(log *slog.Logger, out LogOutput) *Supervisor {
	return &Supervisor{sigs: Notify(), log: log, out: out}
}

// Await runs wait, which returns once its context ends if not before, and
// handles the signals that arrive meanwhile: it reaps the orphans reparented
// to proxy-await, drops the other signals, and on a termination signal
// cancels wait's context, waits for wait to return and returns that signal.
// It returns 0 when wait returned on its own.
func (s *Supervisor) Await(ctx context.Context, wait func(context.Context)) syscall.Signal {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(ctx)
	}()
	for {
		select {
		case <-done:
			return 0
		case sig := <-s.sigs:
			if stop := s.awaiting(sig.(syscall.Signal)); stop != 0 {
				cancel()
				<-done
				return stop
			}
		}
	}
}

// awaiting deals with a signal received before the child runs, and returns
// it if it ends the wait.
func (s *Supervisor) awaiting(sig syscall.Signal) syscall.Signal {
	switch {
	case sig == syscall.SIGCHLD: // an orphan reparented to PID 1 (from kubectl exec) exited
		if err := reapOrphans(s.log); err != nil {
			s.log.Error("cannot reap an orphan", "event", "internal_error", "error", err.Error())
		}
	case s.own(sig):
	case !signals.IsTermination(sig):
		s.log.Debug("signal ignored while waiting for the proxy", "event", "signal_dropped",
			"signal", signals.Name(sig))
	default:
		return sig
	}
	return 0
}

// Supervise starts the child and supervises it until it exits, then returns
// the code proxy-await should exit with. A *StartError says the child never
// started. A Supervisor supervises one child.
func (s *Supervisor) Supervise(cfg Config) (int, error) {
	// The parent-death signal fires when the forking thread ends, not the
	// process: keep this goroutine on its thread until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	becomeReaper(s.log)

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

	s.cfg, s.pid, s.target, s.tty, s.proxy = cfg, proc.Pid, proc.Pid, tty, cfg.Proxy
	if cfg.ProcessGroup {
		s.target = -s.pid
	}
	s.log.Debug("child started", "event", "child_started", "child_pid", s.pid)
	s.learn()
	return s.loop()
}

// childExited logs how the child ended and, with -g, tells what is left of its
// process group to stop, as dumb-init does; with --wait-all it waits for
// whatever the child left behind.
func (s *Supervisor) childExited(ws syscall.WaitStatus) int {
	code := exitcode.Of(ws)
	if ws.Signaled() {
		s.log.Info("child killed by signal", "event", "child_exited", "child_pid", s.pid,
			"signal", signals.Name(ws.Signal()), "exit_code", code)
	} else {
		s.log.Info("child exited", "event", "child_exited", "child_pid", s.pid, "exit_code", code)
	}
	if s.cfg.ProcessGroup {
		if err := unix.Kill(-s.pid, syscall.SIGTERM); err == nil {
			s.log.Debug("sent SIGTERM to the rest of the child's process group", "event", "group_terminated")
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
	if s.cfg.WaitAll > 0 {
		s.waitAll()
	}
	return code
}
