//go:build !linux

package wrapper

import (
	"log/slog"
	"time"
)

// DrainSupported says whether --drain-quiet can work on this system: it
// reads the child's sockets from Linux's /proc and sock_diag.
const DrainSupported = false

type drainWatch struct{}

func startDrain(int, time.Duration, *slog.Logger) *drainWatch { return nil }
func (*drainWatch) quiet() <-chan struct{}                    { return nil }
func (*drainWatch) stop()                                     {}
