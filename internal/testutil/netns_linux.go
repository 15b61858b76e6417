package testutil

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// NetnsDialer returns a DialContext that opens its connections in the
// network namespace of process pid, for a client of a server run under
// `unshare --net`. A connection is a socket of that namespace, made by one
// thread that entered it and that no other goroutine ever runs on; once
// made, it is used from any thread.
func NetnsDialer(t testing.TB, pid int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	t.Helper()
	type dial struct {
		ctx           context.Context
		network, addr string
		done          chan dialed
	}
	requests := make(chan dial)
	entered := make(chan error)
	go func() {
		// Never unlocked: the thread ends with the goroutine, and no other
		// goroutine runs in the namespace.
		runtime.LockOSThread()
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		entered <- err
		if err != nil {
			return
		}
		var d net.Dialer
		for r := range requests {
			c, err := d.DialContext(r.ctx, r.network, r.addr)
			r.done <- dialed{c, err}
		}
	}()
	if err := <-entered; err != nil {
		t.Fatalf("entering the network namespace of process %d: %v", pid, err)
	}
	t.Cleanup(func() { close(requests) })
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		done := make(chan dialed, 1)
		requests <- dial{ctx, network, addr, done}
		r := <-done
		return r.conn, r.err
	}
}

type dialed struct {
	conn net.Conn
	err  error
}
