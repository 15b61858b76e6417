// Command pause is the pod sandbox's process: it holds the pod's namespaces
// open, reaps whatever is reparented to it, and exits 0 on SIGTERM or SIGINT.
// It is built static (CGO_ENABLED=0) into the k8s.local/pause:e2e image, so
// no registry is needed.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
