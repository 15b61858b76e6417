//go:build !linux

package drain

// Supported says whether the watch works on this system: it reads the
// sockets from Linux's /proc and sock_diag.
const Supported = false

// Watch is never started on this system.
type Watch struct{}

// Learn returns nil: there is nothing to watch with.
func Learn(Options) *Watch { return nil }

// Hold does nothing.
func (*Watch) Hold() {}

// Quiet is never closed.
func (*Watch) Quiet() <-chan struct{} { return nil }

// Stop does nothing; the watch was never armed.
func (*Watch) Stop() Status { return Status{} }
