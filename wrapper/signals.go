package wrapper

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/signals"
)

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

// Stop undoes Notify.
func Stop(c chan os.Signal) { signal.Stop(c) }

// forward passes sig on as its rewrite.
func (s *Supervisor) forward(sig syscall.Signal) {
	to := s.rewrite(sig)
	if to == 0 {
		s.log.Debug("dropped signal (rewritten to 0)", "event", "signal_dropped", "signal", signals.Name(sig))
		return
	}
	if signals.IsTermination(sig) {
		s.log.Info("forwarding signal", s.forwarded(sig, to)...)
	} else {
		s.log.Debug("forwarding signal", s.forwarded(sig, to)...)
	}
	s.send(to)
}

// forwarded is the attributes of the line that says sig goes to the child
// as to.
func (s *Supervisor) forwarded(sig, to syscall.Signal) []any {
	attrs := []any{"event", "signal_forwarded", "signal", signals.Name(sig), "child_pid", s.pid}
	if to != sig {
		attrs = append(attrs, "as", signals.Name(to))
	}
	return attrs
}

func (s *Supervisor) rewrite(sig syscall.Signal) syscall.Signal {
	if to, ok := s.cfg.Rewrite[sig]; ok {
		return to
	}
	return sig
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
