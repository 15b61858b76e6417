package testchild

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Scenarios for --wait-all: a main command that leaves a worker behind.
func init() {
	// leave-worker LOG MODE: start a "worker LOG MODE" that outlives us,
	// wait until it is set up, print "worker PID" and exit 0.
	scenarios["leave-worker"] = func(args []string) { leaveWorker("worker", args...) }

	// worker LOG MODE: append "signal SIGTERM UNIXNANO" to LOG on SIGTERM,
	// then, with MODE "slow-term", finish a 300 ms handler, append "done
	// UNIXNANO" and exit 0; with MODE "ignore-term", go on running. It says
	// "ready" on fd 3 once its handler is in place, and runs until killed.
	scenarios["worker"] = func(args []string) {
		log, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			panic(err)
		}
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		ready := os.NewFile(3, "ready")
		fmt.Fprintln(ready, "ready")
		ready.Close()
		for range c {
			fmt.Fprintf(log, "signal SIGTERM %d\n", time.Now().UnixNano())
			if args[1] == "slow-term" {
				time.Sleep(300 * time.Millisecond) // the worker's own clean-up
				fmt.Fprintf(log, "done %d\n", time.Now().UnixNano())
				os.Exit(0)
			}
		}
	}
}

// leaveWorker starts scenario as a worker that outlives us, waits until it
// says "ready" on its fd 3, and prints "worker PID".
func leaveWorker(scenario string, args ...string) {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	worker := Command(scenario, args...)
	worker.ExtraFiles = []*os.File{w} // its fd 3
	if err := worker.Start(); err != nil {
		panic(err)
	}
	w.Close()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		panic(err)
	}
	fmt.Printf("worker %d\n", worker.Process.Pid)
}
