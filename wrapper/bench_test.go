package wrapper

import (
	"syscall"
	"testing"

	"github.com/proxy-await/proxy-await/internal/logging"
)

// The rewrite lookup runs for every forwarded signal: once for a rewritten
// signal, once for one that passes unchanged.
func BenchmarkRewriteLookup(b *testing.B) {
	s := &Supervisor{cfg: Config{Rewrite: map[syscall.Signal]syscall.Signal{
		syscall.SIGTERM: syscall.SIGUSR1,
		syscall.SIGHUP:  0,
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if s.rewrite(syscall.SIGTERM) != syscall.SIGUSR1 || s.rewrite(syscall.SIGINT) != syscall.SIGINT {
			b.Fatal("wrong rewrite")
		}
	}
}

// Subscribing to every forwarded signal is part of proxy-await's start-up,
// before the child runs; unsubscribing is part of its exit.
func BenchmarkNotify(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c := Notify()
		b.StopTimer()
		Stop(c)
		b.StartTimer()
	}
}

func BenchmarkStop(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		c := Notify()
		b.StartTimer()
		Stop(c)
	}
}

// A whole start and reap of a trivial child in-process: fork and exec,
// SIGCHLD through the Notify channel, wait4, exit code.
func BenchmarkRunTrue(b *testing.B) {
	sigs := Notify()
	defer Stop(sigs)
	cfg := Config{Args: []string{"/bin/true"}}
	b.ReportAllocs()
	for b.Loop() {
		code, err := (&Supervisor{sigs: sigs, log: logging.Discard()}).Supervise(cfg)
		if err != nil || code != 0 {
			b.Fatalf("Supervise = %d, %v", code, err)
		}
	}
}
