// Package wrapper runs the application as a child process and supervises it
// the way an init does: it starts the command as execvp would (and says which
// file is missing when it cannot), forwards and rewrites signals, follows the
// child through job control on a terminal, holds the stop signal for a
// grace period, stops the child at once when the proxy it needs is lost,
// kills a child that outlives its stop, reaps every zombie reparented to it,
// and turns the child's end into an exit code.
//
// One goroutine owns both the signal channel and every wait4 call: a second
// reaper (or os/exec's Wait) would race it for the main child's exit status.
package wrapper

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/drain"
	"github.com/proxy-await/proxy-await/internal/proxyloss"
)

// Config says what to run and how to treat it.
type Config struct {
	Args         []string                          // the command and its arguments
	Rewrite      map[syscall.Signal]syscall.Signal // FROM -> TO; TO == 0 drops FROM
	ProcessGroup bool                              // child in its own group; signal the group
	TermDelay    time.Duration                     // hold the stop signal (the first SIGTERM, SIGINT or SIGQUIT) this long
	DrainQuiet   time.Duration                     // deliver the held stop signal after this long without traffic
	DrainPorts   []uint16                          // with DrainQuiet: watch these ports, not the listeners below proxy-await
	KillAfter    time.Duration                     // SIGKILL this long after the stop signal is delivered
	WaitAll      time.Duration                     // after the child exits, end what it left behind within this long

	// Probes are the pod's probes that proxy-await serves; nil: none.
	Probes Probes

	// Proxy is the watch of the proxy the child needs (--proxy-lost),
	// started by the caller; nil: none.
	Proxy ProxyWatch

	// The child's stdin, stdout and stderr; nil means proxy-await's own. They
	// are files so that the child gets the descriptors themselves, with no
	// copying goroutine that only cmd.Wait would end.
	Stdin, Stdout, Stderr *os.File
}

// Probes are the pod's probes that proxy-await serves (probes.Server): they
// stop answering ready when the stop signal arrives, before it is held or
// delivered, and the connections they open to the app are never traffic to
// the drain.
type Probes interface {
	Stopping()
	drain.Owner
}

// ProxyWatch watches the proxy that the child needs while it serves
// (readiness.Watcher). Its first loss stops the child at once, unless the
// stop signal came first: the supervisor ends the watch at the stop signal,
// at the loss, and when the child exits.
type ProxyWatch interface {
	Lost() <-chan proxyloss.Loss
	Stop()
}

// command describes the child, sharing our environment and working
// directory, and our stdin, stdout and stderr unless cfg says otherwise. spawn
// finds the file to run.
func command(cfg Config) *exec.Cmd {
	return &exec.Cmd{
		Args:   cfg.Args,
		Stdin:  orFile(cfg.Stdin, os.Stdin),
		Stdout: orFile(cfg.Stdout, os.Stdout),
		Stderr: orFile(cfg.Stderr, os.Stderr),
	}
}

func orFile(f, def *os.File) *os.File {
	if f != nil {
		return f
	}
	return def
}
