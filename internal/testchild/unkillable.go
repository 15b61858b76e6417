package testchild

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Scenarios for a process left behind that proxy-await may not signal.
func init() {
	// leave-root-worker: start a "root-worker" that outlives us, wait
	// until it runs as root, print "worker PID" and exit 0.
	scenarios["leave-root-worker"] = func([]string) { leaveWorker("root-worker") }

	// root-worker: become root in every uid (it needs CAP_SETUID), so that
	// a supervisor running as another user may not signal it; ignore
	// SIGTERM, say "ready" on fd 3, and run until killed.
	scenarios["root-worker"] = func([]string) {
		if err := syscall.Setresuid(0, 0, 0); err != nil {
			panic(err)
		}
		signal.Ignore(syscall.SIGTERM)
		ready := os.NewFile(3, "ready")
		fmt.Fprintln(ready, "ready")
		ready.Close()
		select {}
	}
}
