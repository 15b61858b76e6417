package testchild

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openFiles raises the open-file limit to n, the hard limit too if it must
// (which needs CAP_SYS_RESOURCE), or exits saying why it cannot.
func openFiles(n int) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur >= uint64(n) {
		return
	}
	lim.Cur, lim.Max = uint64(n), max(lim.Max, uint64(n))
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "testchild: cannot raise the open-file limit to %d: %v (the hard limit needs CAP_SYS_RESOURCE)\n", n, err)
		os.Exit(1)
	}
}
