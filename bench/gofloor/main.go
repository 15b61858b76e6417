// Command gofloor is the benchmarks' reference for what any Go init costs:
// a static Go program that makes one signal.Notify call for every signal
// proxy-await forwards, then runs its arguments as a child, passes signals on
// and exits with its status. proxy-await's start-up and memory figures are read against it.
//
//	gofloor COMMAND [ARG...]
package main

import (
	"os"
	"os/exec"
	"os/signal"

	"github.com/proxy-await/proxy-await/internal/signals"
)

func main() {
	c := make(chan os.Signal, 128)
	for _, s := range signals.Forwarded() {
		signal.Notify(c, s)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
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
}
