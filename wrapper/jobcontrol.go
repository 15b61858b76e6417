package wrapper

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/signals"
)

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
func (s *Supervisor) childStopped(sig syscall.Signal) {
	frozen := sig == syscall.SIGSTOP && !s.sentSIGSTOP
	s.sentSIGSTOP = false
	switch {
	case os.Getpid() == 1:
		return
	case frozen:
		s.log.Debug("child stopped from outside: not stopping too", "event", "child_stopped",
			"signal", signals.Name(sig))
		return
	case !s.jobControl():
		s.log.Debug("child stopped: not stopping too, as no job control would resume proxy-await",
			"event", "child_stopped", "signal", signals.Name(sig))
		return
	}
	s.log.Debug("child stopped: stopping too", "event", "child_stopped", "signal", signals.Name(sig))
	_ = unix.Kill(os.Getpid(), syscall.SIGSTOP)
}

// jobControl says whether a shell can resume proxy-await once it stops: its
// controlling terminal's foreground group is its own, or the child's group
// that it handed the terminal to.
func (s *Supervisor) jobControl() bool {
	fg, ok := terminalForeground()
	return ok && (fg == unix.Getpgrp() || s.cfg.ProcessGroup && fg == s.pid)
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
func (s *Supervisor) giveTerminal(pgrp int) {
	if err := setForeground(0, pgrp); err != nil {
		s.log.Warn("cannot hand the terminal on", "event", "terminal_failed", "pgrp", pgrp, "error", err.Error())
	}
}

// foregroundTTY reports whether stdin is a terminal whose foreground process
// group is ours: a child in its own group must then be handed the terminal,
// as tini does, or it would be stopped by SIGTTIN/SIGTTOU when it used it.
func foregroundTTY() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
