package wrapper

import (
	"log/slog"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// becomeReaper makes the orphans of the child's tree ours to reap. PID 1 gets
// them from the kernel; anyone else asks to be a child subreaper.
func becomeReaper(log *slog.Logger) {
	if os.Getpid() == 1 {
		return
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		log.Warn("cannot become a child subreaper: orphans of the child will not be reaped here",
			"event", "subreaper_failed", "error", err.Error())
	}
}

// sysProcAttr sets the child's process group and asks the kernel to SIGKILL
// the child if proxy-await dies without supervising it to the end (kill -9,
// the OOM killer). The parent-death signal is tied to the thread that forks,
// so Supervise keeps that thread locked until the child has been reaped.
func sysProcAttr(group, foreground bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setpgid:    group,
		Foreground: foreground,
		Ctty:       0,
		Pdeathsig:  syscall.SIGKILL,
	}
}

// setForeground makes pgrp the foreground process group of the terminal on
// fd. A process outside the foreground group may do so only if it does not
// take SIGTTOU, so the signal is blocked on this thread meanwhile; the
// caller keeps its goroutine on the thread (Supervise does).
func setForeground(fd, pgrp int) error {
	var set, old unix.Sigset_t
	n, w := int(syscall.SIGTTOU)-1, int(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] |= 1 << (n % w)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return err
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgrp)
}
