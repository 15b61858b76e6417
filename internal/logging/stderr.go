package logging

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stderr is proxy-await's standard error as the logger writes it. A write to
// a pipe whose reader is gone (`proxy-await ... 2>&1 | head -1`) makes the
// kernel raise SIGPIPE, which proxy-await subscribes to and would forward to
// the child: Stderr counts the SIGPIPEs its own writes raised, so that the
// signal handling can tell them from one another process sent, and stops
// writing once the pipe is broken, so that one closed stderr raises one
// SIGPIPE, not one a log line.
var Stderr = &Output{fd: 2}

// Output writes to a file descriptor through a duplicate of it. On
// descriptors 1 and 2 themselves, os.File raises a second SIGPIPE of its own
// after a failed write; on the duplicate only the kernel's remains.
type Output struct {
	fd     int
	once   sync.Once
	f      *os.File // nil when descriptor 2 cannot be duplicated
	mu     sync.Mutex
	broken bool // a write failed with EPIPE: the pipe has no reader left
	raised int  // SIGPIPEs our writes raised that no one has claimed yet
}

func (o *Output) Write(p []byte) (int, error) {
	o.once.Do(func() {
		if fd, err := unix.FcntlInt(uintptr(o.fd), unix.F_DUPFD_CLOEXEC, 3); err == nil {
			o.f = os.NewFile(uintptr(fd), "stderr")
		}
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.broken || o.f == nil {
		return len(p), nil
	}
	n, err := o.f.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		// The kernel has raised SIGPIPE on this thread before write
		// returned, so a signal handler that takes mu sees it counted.
		o.broken, o.raised = true, o.raised+1
		return len(p), nil
	}
	return n, err
}

// RaisedSigpipe says whether a SIGPIPE that has just arrived was raised by
// one of our own writes, and claims it: each such SIGPIPE is claimed once.
func (o *Output) RaisedSigpipe() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.raised == 0 {
		return false
	}
	o.raised--
	return true
}
