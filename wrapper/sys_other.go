//go:build !linux

package wrapper

import (
	"log/slog"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeReaper does nothing: child subreapers are a Linux feature, so orphans
// of the child are reaped here only when proxy-await is PID 1.
func becomeReaper(*slog.Logger) {}

func sysProcAttr(group, foreground bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group, Foreground: foreground, Ctty: 0}
}

// setForeground makes pgrp the foreground process group of the terminal on
// fd.
func setForeground(fd, pgrp int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgrp) }
