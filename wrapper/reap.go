package wrapper

import (
	"errors"
	"log/slog"
	"os"
	"syscall"

	"github.com/proxy-await/proxy-await/internal/exitcode"
)

// reap collects every child that has exited: the main child, whose status it
// returns, and orphans reparented to us, which it only logs; none says that
// no child is left at all.
func (s *Supervisor) reap() (ws syscall.WaitStatus, exited, none bool, err error) {
	return reap(s.log, s.pid, s.childStopped)
}

// reapOrphans reaps the orphans reparented to proxy-await as PID 1 while no
// child of its own runs (while the proxy is awaited). Call it on SIGCHLD.
func reapOrphans(log *slog.Logger) error {
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
