//go:build !linux

package drain

import (
	"log/slog"
	"time"
)

// Supported says whether the watch works on this system: it reads the
// sockets from Linux's /proc and sock_diag.
const Supported = false

// Watch is never started on this system.
type Watch struct{}

// Start returns nil: there is nothing to watch with.
func Start(int, time.Duration, *slog.Logger) *Watch { return nil }

// Quiet is never closed.
func (*Watch) Quiet() <-chan struct{} { return nil }

// Status is never armed.
func (*Watch) Status() Status { return Status{} }

// Stop does nothing.
func (*Watch) Stop() {}
