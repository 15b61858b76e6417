package wrapper

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/signals"
)

// killGrace is how long the processes left behind have to be reaped after
// their SIGKILL: the kernel ends a process at once unless it is in
// uninterruptible sleep, or may not be signalled at all.
const killGrace = 5 * time.Second

// waitAll ends what the main child left behind (--wait-all): SIGTERM to every
// process still below proxy-await, up to WaitAll for them to exit, then
// SIGKILL to the rest. As PID 1 or a child subreaper, every orphan of the
// child's tree becomes our child, so once wait4 says we have no child left,
// nothing is left below us. It returns when that is so.
//
// Each SIGTERM is followed by a SIGCONT, as systemd sends them: a stopped
// process (kill -STOP, a job stopped for the terminal) would otherwise hold
// its SIGTERM unhandled until the SIGKILL.
func (s *Supervisor) waitAll() {
	left := proctree.Descendants(os.Getpid())
	if len(left) == 0 {
		if _, _, none, _ := s.reap(); none {
			return
		}
	}
	began := time.Now()
	termed := map[int]bool{}
	if s.cfg.ProcessGroup {
		// childExited has sent the child's group its SIGTERM already: a second
		// one reads as "stop now, skip the clean-up" to many programs.
		for _, pid := range left {
			if pgid, err := unix.Getpgid(pid); err == nil && pgid == s.pid {
				termed[pid] = true
			}
		}
		_ = unix.Kill(-s.pid, syscall.SIGCONT)
	}
	// term signals whatever is below us now and was not signalled yet: the
	// children of a process that just exited were its to end, and are ours
	// now if they outlived it.
	term := func() {
		for _, pid := range proctree.Descendants(os.Getpid()) {
			if !termed[pid] {
				termed[pid] = true
				_ = unix.Kill(pid, syscall.SIGTERM)
				_ = unix.Kill(pid, syscall.SIGCONT)
			}
		}
	}
	term()
	s.log.Info("the child left processes behind: sending them SIGTERM",
		"event", "wait_all_started", "processes", len(termed), "wait_all", s.cfg.WaitAll)
	deadline := time.NewTimer(s.cfg.WaitAll)
	defer deadline.Stop()
	for {
		if _, _, none, err := s.reap(); none || err != nil {
			s.log.Info("every process left behind has exited", "event", "wait_all_done",
				"elapsed", time.Since(began).Round(time.Millisecond))
			return
		}
		select {
		case sig := <-s.sigs:
			if sig == syscall.SIGCHLD {
				term()
				continue
			}
			s.log.Debug("signal dropped while waiting for the processes left behind",
				"event", "signal_dropped", "signal", signals.Name(sig.(syscall.Signal)))
		case <-deadline.C:
			s.killAll()
			return
		}
	}
}

// killAll SIGKILLs everything below us and reaps it, signalling again
// after each exit: a process may have forked before its SIGKILL landed, and
// its child is ours once it is gone. What is still there killGrace after
// the first SIGKILL (a process we may not signal, one in uninterruptible
// sleep) is left behind, so that the proxy is still shut down.
func (s *Supervisor) killAll() {
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	for first := true; ; first = false {
		left := proctree.Descendants(os.Getpid())
		for _, pid := range left {
			_ = unix.Kill(pid, syscall.SIGKILL)
		}
		if first {
			s.log.Warn("processes left behind still running after --wait-all: sending SIGKILL",
				"event", "wait_all_killed", "processes", len(left), "wait_all", s.cfg.WaitAll)
		}
		if _, _, none, err := s.reap(); none || err != nil {
			return
		}
		select {
		case sig := <-s.sigs:
			if sig != syscall.SIGCHLD {
				s.log.Debug("signal dropped while waiting for the processes left behind",
					"event", "signal_dropped", "signal", signals.Name(sig.(syscall.Signal)))
			}
		case <-grace.C:
			s.log.Warn("processes left behind survive SIGKILL: going on without them",
				"event", "wait_all_abandoned", "processes", len(proctree.Descendants(os.Getpid())),
				"hint", "look for a process in uninterruptible sleep (state D in ps), or one that runs as another user")
			return
		}
	}
}
