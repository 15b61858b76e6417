package testchild

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// exercised are the signals that tests send to proxy-await, or to this
// process standing in for it, and that a shell may have left ignored:
// nohup ignores SIGHUP, and a shell without job control starts a background
// command (`make test &` in a script) with SIGINT and SIGQUIT ignored.
var exercised = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT}

// UnignoreSignals gives the signals the tests exercise their default
// disposition in the processes this one starts from now on, and lets this
// one receive them. proxy-await rightly keeps a signal it inherited as
// ignored ignored, for itself and its child, so a test run under nohup
// would otherwise send SIGHUP to a proxy-await that never sees it, and wait
// for the child's line until its time runs out. Tests of that inheritance
// set SIG_IGN up themselves (`trap ” HUP INT` in a shell).
//
// The Go runtime keeps an inherited SIG_IGN only for SIGHUP and SIGINT; it
// has its own handler on the others (SIGQUIT among them) from the start.
// signal.Reset cannot undo the SIG_IGN: for those two it puts the inherited
// SIG_IGN back once no channel wants the signal. signal.Notify installs
// the runtime's handler, and execve resets a caught signal to SIG_DFL in
// the program it runs; so the signal stays subscribed, on a channel that
// nobody reads (signal never blocks on it), for the life of the test
// binary. A signal that was not ignored is left as it is.
//
// It says on stderr, in one line, which signals it restored.
func UnignoreSignals() {
	var restored []string
	for _, s := range exercised {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
			restored = append(restored, unix.SignalName(s))
		}
	}
	if len(restored) > 0 {
		fmt.Fprintf(os.Stderr, "testchild: inherited as ignored (nohup, or a background job of a script), now default for the processes the tests start: %s\n",
			strings.Join(restored, ", "))
	}
}

// IgnoringSignals is this test binary running the tests that match the
// pattern run, started as `nohup go test` or a background job of a script
// starts it: with SIGHUP, SIGINT and SIGQUIT ignored.
func IgnoringSignals(run string) *exec.Cmd {
	return exec.Command("sh", "-c", `trap '' HUP INT QUIT; exec "$@"`, "sh", Self(),
		"-test.count=1", "-test.timeout=5m", "-test.run="+run)
}
