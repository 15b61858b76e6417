// Package signals is proxy-await's table of signals: their names, which are
// forwarded to the child, which stop it, and how --rewrite's rules read.
// The wrapper subscribes to them and config parses --rewrite with it.
package signals

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// notForwarded says whether the wrapper never passes s on: SIGKILL and
// SIGSTOP cannot be caught, SIGCHLD is how we learn that children exit,
// SIGURG is the Go runtime's own preemption signal, and SIGPROF is consumed
// by the Go runtime's profiler before any channel sees it. A switch, not a
// map: a map would be built at every start.
func notForwarded(s syscall.Signal) bool {
	switch s {
	case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD, syscall.SIGURG, syscall.SIGPROF:
		return true
	}
	return false
}

// Forwarded lists every signal the wrapper catches and passes to the child.
// As PID 1 the kernel discards any signal we have no handler for, so each one
// is subscribed explicitly.
func Forwarded() []os.Signal {
	var list []os.Signal
	for n := 1; n <= Max; n++ {
		s := syscall.Signal(n)
		if notForwarded(s) || Reserved(s) {
			continue
		}
		list = append(list, s)
	}
	return list
}

// IsTermination says whether sig asks the process to end: SIGTERM, SIGINT or
// SIGQUIT, whichever the kubelet sends as the image's STOPSIGNAL.
func IsTermination(sig os.Signal) bool {
	return sig == syscall.SIGTERM || sig == syscall.SIGINT || sig == syscall.SIGQUIT
}

// Name is "SIGTERM" for syscall.SIGTERM, "signal 40" when it has no name.
func Name(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// Parse reads a signal as a name ("TERM", "SIGTERM", "term",
// "RTMIN+2") or a decimal number. allowZero admits 0, which means "no
// signal" as a rewrite target.
func Parse(s string, allowZero bool) (syscall.Signal, error) {
	if s == "" {
		return 0, fmt.Errorf("missing signal")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n == 0 && allowZero {
			return 0, nil
		}
		if n < 1 || n > Max {
			return 0, fmt.Errorf("signal number %d out of range 1-%d", n, Max)
		}
		return syscall.Signal(n), nil
	}
	if !plainName(s) {
		return 0, fmt.Errorf("unknown signal %q", s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	if sig, ok, err := realtime(name, s); ok {
		return sig, err
	}
	return 0, fmt.Errorf("unknown signal %s", s)
}

// rtMin is SIGRTMIN as glibc gives it to programs and as `kill -l` prints it
// on Debian: 34. The kernel's real-time signals start at 32, but glibc keeps
// 32 and 33 for itself (and musl 34), and the Go runtime cannot catch them
// either, so Reserved() excludes 32-34 from forwarding.
const rtMin = 34

// realtime reads SIGRTMIN, SIGRTMIN+N, SIGRTMAX-N and SIGRTMAX (ok is false
// for any other name), numbered from rtMin and Max as `kill -l` does.
// name is upper case with "SIG"; errors quote it as written.
func realtime(name, written string) (sig syscall.Signal, ok bool, err error) {
	if Max < rtMin {
		return 0, false, nil // no real-time signals here
	}
	base, sign, n := 0, 0, ""
	switch {
	case name == "SIGRTMIN":
		return rtMin, true, nil
	case name == "SIGRTMAX":
		return Max, true, nil
	case strings.HasPrefix(name, "SIGRTMIN+"):
		base, sign, n = rtMin, 1, name[len("SIGRTMIN+"):]
	case strings.HasPrefix(name, "SIGRTMAX-"):
		base, sign, n = Max, -1, name[len("SIGRTMAX-"):]
	default:
		return 0, false, nil
	}
	if n == "" || len(n) > 2 || strings.Trim(n, "0123456789") != "" {
		return 0, true, fmt.Errorf("unknown signal %s", written)
	}
	off, _ := strconv.Atoi(n)
	num := base + sign*off
	if num < rtMin || num > Max {
		return 0, true, fmt.Errorf("%s is signal %d, outside the real-time signals %d (SIGRTMIN) to %d (SIGRTMAX)",
			written, num, rtMin, Max)
	}
	return syscall.Signal(num), true, nil
}

// ParseRewrite reads one FROM:TO rule of --rewrite.
func ParseRewrite(rule string) (from, to syscall.Signal, err error) {
	f, t, ok := strings.Cut(rule, ":")
	if !ok {
		return 0, 0, fmt.Errorf("want FROM:TO, as in TERM:USR1")
	}
	if from, err = Parse(f, false); err != nil {
		return 0, 0, err
	}
	if from == syscall.SIGKILL || from == syscall.SIGSTOP {
		return 0, 0, fmt.Errorf("%s cannot be caught, so it cannot be rewritten", Name(from))
	}
	if Reserved(from) {
		return 0, 0, fmt.Errorf("signal %d is kept by the C library and the Go runtime, so it is not forwarded "+
			"and cannot be rewritten (the first that is: RTMIN+1, %d)", int(from), rtMin+1)
	}
	if notForwarded(from) {
		return 0, 0, fmt.Errorf("%s is not forwarded, so it cannot be rewritten", Name(from))
	}
	if to, err = Parse(t, true); err != nil {
		return 0, 0, err
	}
	return from, to, nil
}

// plainName says whether s can be a signal name: ASCII letters, digits, "+"
// and "-" only (as in RTMIN+1 and RTMAX-1), so that no other text is
// case-folded into a name or echoed unquoted into a message.
func plainName(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-') {
			return false
		}
	}
	return true
}
