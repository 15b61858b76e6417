package wrapper

import (
	"os"
	"os/signal"
	"syscall"

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
