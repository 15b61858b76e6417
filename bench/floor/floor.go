// Package floor is what the benchmarks' reference wrappers share, the Go
// floor's whole job and the dependency floor's after its dependencies: one
// signal.Notify call for every signal proxy-await forwards, the command run
// as a child, signals passed on, and its exit status as their own.
package floor

import (
	"os"
	"os/exec"
	"os/signal"

	"github.com/proxy-await/proxy-await/internal/signals"
)

// Run runs command as a child, passes the forwarded signals on to it and
// exits with its status: 127 when it cannot be started.
func Run(command []string) {
	c := make(chan os.Signal, 128)
	for _, s := range signals.Forwarded() {
		signal.Notify(c, s)
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		os.Exit(127)
	}
	go func() {
		for s := range c {
			_ = cmd.Process.Signal(s)
		}
	}()
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(127)
	}
	os.Exit(0)
}
