package testchild

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Scenarios for the init-grade tests: proxy-await as PID 1 of a PID
// namespace, and job control.
func init() {
	// term-exit N: print "ready"; on SIGTERM print "signal SIGTERM UNIXNANO"
	// and exit N, so the exit code shows the child's own status came through.
	scenarios["term-exit"] = func(args []string) {
		code := atoi(args[0])
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		<-c
		fmt.Printf("signal SIGTERM %d\n", time.Now().UnixNano())
		os.Exit(code)
	}

	// idle: print "ready", then exit 0 at EOF on stdin. Every signal keeps
	// its default action, so SIGTERM kills it.
	scenarios["idle"] = func([]string) {
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
	}

	// stop-cont N: leave SIGTSTP its default action (stop), print "ready";
	// once continued by SIGCONT, print "continued" and exit N.
	scenarios["stop-cont"] = func(args []string) {
		code := atoi(args[0])
		untilContinued()
		os.Exit(code)
	}
}

// untilContinued prints "ready", waits for SIGCONT and prints "continued".
// SIGTSTP keeps its default action meanwhile: it stops the process.
func untilContinued() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGCONT)
	fmt.Println("ready")
	<-c
	fmt.Println("continued")
}
