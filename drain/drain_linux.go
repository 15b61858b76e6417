package drain

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported says whether the watch works on this system.
const Supported = true

// How --drain-quiet sees new connections
//
// After SIGTERM, the question is "has anyone connected to the child's
// listening sockets in the last Q?". Sampling the sockets that exist now
// (/proc/net/tcp, or a sock_diag dump) misses every connection that opens and
// closes between two samples, and a burst of short requests is exactly that.
// So the watch uses two sources from the kernel's sock_diag netlink family,
// each socket identified by its cookie, a number the kernel gives a socket
// for its whole life (kept by its TIME_WAIT remains too):
//
//   - a dump of the TCP sockets on the listening ports, taken at SIGTERM (the
//     baseline: those connections are old) and then periodically, which finds
//     connections that are still open;
//   - the SKNLGRP_INET{,6}_TCP_DESTROY multicast groups, on which the kernel
//     reports every TCP socket as it is freed, which finds connections that
//     closed before any dump could see them.
//
// Every connection is either still open at the next dump or has been freed
// and reported, so none is missed; a cookie not seen before is a new
// connection. If the kernel drops destroy events (ENOBUFS, a storm), the
// watch counts that as a new connection too, erring towards serving longer.
// The dump period only bounds how late a long-lived new connection is seen.
// Both need no privilege: sock_diag dumps and its destroy groups are open to
// any process.

// Watch tells when the listeners of a process tree have gone quiet.
type Watch struct {
	quietC chan struct{}
	stopC  chan struct{}
	done   chan struct{}
}

// listener is one listening socket of the child's process tree.
type listener struct {
	ip   net.IP // unspecified for a wildcard bind
	port uint16
}

// Start watches the listening TCP sockets of pid's process tree and closes
// Quiet() once no new connection has come for quiet, counting from now.
func Start(pid int, quiet time.Duration, log *slog.Logger) *Watch {
	w := &Watch{quietC: make(chan struct{}), stopC: make(chan struct{}), done: make(chan struct{})}
	go w.run(pid, quiet, log)
	return w
}

// Quiet is closed once the listeners have been quiet; nil on a nil Watch.
func (w *Watch) Quiet() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.quietC
}

// Stop ends the watch and waits for its goroutines. A nil Watch is stopped.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	select {
	case <-w.stopC:
	default:
		close(w.stopC)
	}
	<-w.done
}

func (w *Watch) run(pid int, quiet time.Duration, log *slog.Logger) {
	defer close(w.done)
	// Without its sockets the watch cannot tell quiet from busy: it never
	// fires, and --term-delay decides.
	giveUp := func(what string, err error) {
		log.Warn("cannot "+what+": waiting the whole --term-delay", "event", "drain_failed", "error", err.Error())
		<-w.stopC
	}
	listeners, err := childListeners(pid)
	if err != nil {
		giveUp("find the child's listening sockets", err)
		return
	}
	if len(listeners) == 0 {
		log.Info("the child has no listening TCP socket: nothing to drain", "event", "drain_no_listener")
	}
	log.Debug("watching for new connections", "event", "drain_started", "listeners", fmt.Sprint(listeners))

	events, closeEvents, err := destroyEvents(listeners)
	if err != nil {
		log.Warn("cannot follow closed connections: connections shorter than a sample may be missed",
			"event", "drain_degraded", "error", err.Error())
	} else {
		defer closeEvents()
	}
	seen, err := dumpCookies(listeners)
	if err != nil {
		giveUp("list the child's connections", err)
		return
	}

	timer := time.NewTimer(quiet)
	defer timer.Stop()
	tick := time.NewTicker(min(max(quiet/4, 10*time.Millisecond), 100*time.Millisecond))
	defer tick.Stop()
	fresh := func(c uint64) bool {
		if _, ok := seen[c]; ok {
			return false
		}
		seen[c] = struct{}{}
		return true
	}
	for {
		newConn := false
		select {
		case <-w.stopC:
			return
		case <-timer.C:
			close(w.quietC)
			<-w.stopC
			return
		case c, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			newConn = c == lostEvents || fresh(c)
		case <-tick.C:
			now, err := dumpCookies(listeners)
			if err != nil {
				continue
			}
			for c := range now {
				newConn = fresh(c) || newConn
			}
		}
		if newConn {
			log.Debug("new connection: the quiet period starts again", "event", "drain_connection")
			timer.Reset(quiet)
		}
	}
}

// childListeners finds the listening TCP sockets held by pid and its
// descendants: the socket inodes among their file descriptors, matched
// against the LISTEN rows of /proc/PID/net/tcp and tcp6 (the child's own
// network namespace).
func childListeners(pid int) ([]listener, error) {
	inodes := map[string]bool{}
	for _, p := range processTree(pid) {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p))
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", p), fd.Name()))
			if err == nil && strings.HasPrefix(target, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
			}
		}
	}
	var out []listener
	for _, table := range []string{"tcp", "tcp6"} {
		rows, err := listenRows(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for inode, l := range rows {
			if inodes[inode] {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// listenRows reads the LISTEN rows of a /proc/net/tcp{,6} table by inode.
func listenRows(path string) (map[string]listener, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := map[string]listener{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" { // 0A is TCP_LISTEN
			continue
		}
		addr, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err1 := strconv.ParseUint(port, 16, 16)
		ip, err2 := procIP(addr)
		if err1 != nil || err2 != nil {
			continue
		}
		rows[f[9]] = listener{ip: ip, port: uint16(p)}
	}
	return rows, sc.Err()
}

// procIP decodes /proc/net/tcp's address: the IP's 32-bit words in hex, each
// in host byte order.
func procIP(s string) (net.IP, error) {
	raw, err := hex.DecodeString(s)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, fmt.Errorf("bad address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	return ip, nil
}

// processTree is pid and all its descendants, from /proc/PID/task/*/children.
func processTree(pid int) []int {
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", tree[i]))
		for _, t := range tasks {
			data, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(data)) {
				if n, err := strconv.Atoi(f); err == nil {
					tree = append(tree, n)
				}
			}
		}
	}
	return tree
}

// sock_diag wire format (linux/inet_diag.h).
const (
	diagMsgLen    = 72 // struct inet_diag_msg
	diagReqLen    = 56 // struct inet_diag_req_v2
	tcpListen     = 10 // TCP_LISTEN
	allButListen  = 0xfff &^ (1 << tcpListen)
	cookieOffset  = 44 // of inet_diag_msg.id.idiag_cookie
	familyOffset  = 0
	sportOffset   = 4
	srcOffset     = 8
	netlinkBuffer = 1 << 16
)

// lostEvents is sent on the event channel when the kernel dropped events.
const lostEvents = ^uint64(0)

// matches reports whether a sock_diag message is a connection on one of the
// listeners, and its cookie.
func matches(msg []byte, listeners []listener) (uint64, bool) {
	if len(msg) < diagMsgLen {
		return 0, false
	}
	port := binary.BigEndian.Uint16(msg[sportOffset:])
	var ip net.IP
	if msg[familyOffset] == unix.AF_INET {
		ip = net.IP(msg[srcOffset : srcOffset+4])
	} else {
		ip = net.IP(msg[srcOffset : srcOffset+16])
	}
	for _, l := range listeners {
		if l.port == port && (l.ip.IsUnspecified() || l.ip.Equal(ip)) {
			cookie := uint64(binary.NativeEndian.Uint32(msg[cookieOffset:])) |
				uint64(binary.NativeEndian.Uint32(msg[cookieOffset+4:]))<<32
			return cookie, true
		}
	}
	return 0, false
}

// dumpCookies lists the cookies of every TCP connection, in any state but
// LISTEN, on the listeners.
func dumpCookies(listeners []listener) (map[uint64]struct{}, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	cookies := map[uint64]struct{}{}
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := make([]byte, unix.NLMSG_HDRLEN+diagReqLen)
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
		binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		req[unix.NLMSG_HDRLEN] = family
		req[unix.NLMSG_HDRLEN+1] = unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(req[unix.NLMSG_HDRLEN+4:], allButListen)
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return nil, os.NewSyscallError("sendto", err)
		}
		if err := readDump(fd, func(msg []byte) {
			if c, ok := matches(msg, listeners); ok {
				cookies[c] = struct{}{}
			}
		}); err != nil {
			return nil, err
		}
	}
	return cookies, nil
}

// readDump reads a netlink dump to its end, passing each message's payload.
func readDump(fd int, each func([]byte)) error {
	buf := make([]byte, netlinkBuffer)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return os.NewSyscallError("recvfrom", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if code := int32(binary.NativeEndian.Uint32(m.Data)); code != 0 {
						return os.NewSyscallError("sock_diag", syscall.Errno(-code))
					}
				}
				return nil
			default:
				each(m.Data)
			}
		}
	}
}

// destroyEvents subscribes to the kernel's reports of freed TCP sockets and
// sends the cookie of each one on the listeners, or lostEvents when the
// kernel dropped some. The channel closes when closeEvents is called.
func destroyEvents(listeners []listener) (<-chan uint64, func(), error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, nil, os.NewSyscallError("socket", err)
	}
	groups := uint32(1<<(unix.SKNLGRP_INET_TCP_DESTROY-1) | 1<<(unix.SKNLGRP_INET6_TCP_DESTROY-1))
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return nil, nil, os.NewSyscallError("bind", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	// A non-blocking descriptor in an os.File goes through Go's poller, so
	// Close wakes the reader below.
	f := os.NewFile(uintptr(fd), "sock_diag")
	c := make(chan uint64, 1024)
	go func() {
		defer close(c)
		buf := make([]byte, netlinkBuffer)
		for {
			n, err := f.Read(buf)
			switch {
			case errors.Is(err, unix.ENOBUFS):
				c <- lostEvents
				continue
			case err != nil:
				return
			}
			msgs, err := syscall.ParseNetlinkMessage(buf[:n])
			if err != nil {
				continue
			}
			for _, m := range msgs {
				if cookie, ok := matches(m.Data, listeners); ok {
					c <- cookie
				}
			}
		}
	}()
	return c, func() {
		f.Close()
		for range c { // let the reader finish
		}
	}, nil
}
