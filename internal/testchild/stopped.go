package testchild

import (
	"io"
	"os"
)

func init() {
	// leave-worker-at-eof LOG MODE: leave-worker, but exit only at EOF on
	// stdin, so that a test can act on the worker first.
	scenarios["leave-worker-at-eof"] = func(args []string) {
		scenarios["leave-worker"](args)
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
}
