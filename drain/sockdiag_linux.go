package drain

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sock_diag netlink interface (linux/inet_diag.h, linux/sock_diag.h).
const (
	diagMsgLen = 72 // struct inet_diag_msg
	diagReqLen = 56 // struct inet_diag_req_v2

	tcpTimeWait   = 6  // TCP_TIME_WAIT
	tcpClose      = 7  // TCP_CLOSE
	tcpListen     = 10 // TCP_LISTEN
	tcpNewSynRecv = 12 // TCP_NEW_SYN_RECV

	// Every state of a full socket but LISTEN: TIME_WAIT remains and
	// half-open requests carry no tcp_info, and the full socket before them
	// is either dumped or reported destroyed.
	connStates   = 0xfff &^ (1<<tcpListen | 1<<tcpTimeWait)
	listenStates = 1 << tcpListen
	// A UDP socket is dumped once it has a local port; it is in state
	// ESTABLISHED once connected to one peer (a resolver's query), CLOSE
	// otherwise: a server's.
	unconnected = 1 << tcpClose

	attrInfo     = 2 // INET_DIAG_INFO: struct tcp_info
	attrBytecode = 1 // INET_DIAG_REQ_BYTECODE
	bcJump       = 1 // INET_DIAG_BC_JMP
	bcSourceEq   = 11

	netlinkBuffer = 1 << 16
)

// tcp_info fields the watch reads, by offset (unix.TCPInfo's layout).
var (
	offLastDataRecv  = int(unsafe.Offsetof(unix.TCPInfo{}.Last_data_recv))
	offBytesReceived = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_received))
)

// sock is one TCP or UDP socket as sock_diag reports it.
type sock struct {
	cookie uint64
	state  uint8
	ip     netip.Addr     // local address, IPv4 addresses unmapped
	port   uint16         // local port
	peer   netip.AddrPort // remote address and port of a connection, IPv4 addresses unmapped
	uid    uint32         // the user that created it
	inode  uint32

	// From tcp_info, when hasInfo.
	hasInfo     bool
	bytesIn     uint64        // payload bytes received (a FIN counts one)
	sinceDataIn time.Duration // since the last data received, or since the connection was accepted
}

// parseSock decodes an inet_diag_msg and its INET_DIAG_INFO attribute.
func parseSock(msg []byte) (sock, bool) {
	if len(msg) < diagMsgLen {
		return sock{}, false
	}
	s := sock{
		state:  msg[1],
		port:   binary.BigEndian.Uint16(msg[4:]),
		cookie: uint64(binary.NativeEndian.Uint32(msg[44:])) | uint64(binary.NativeEndian.Uint32(msg[48:]))<<32,
		uid:    binary.NativeEndian.Uint32(msg[64:]),
		inode:  binary.NativeEndian.Uint32(msg[68:]),
	}
	var peer netip.Addr
	if msg[0] == unix.AF_INET {
		s.ip = netip.AddrFrom4([4]byte(msg[8:12]))
		peer = netip.AddrFrom4([4]byte(msg[24:28]))
	} else {
		s.ip = netip.AddrFrom16([16]byte(msg[8:24])).Unmap()
		peer = netip.AddrFrom16([16]byte(msg[24:40])).Unmap()
	}
	s.peer = netip.AddrPortFrom(peer, binary.BigEndian.Uint16(msg[6:]))
	attrs := msg[diagMsgLen:]
	for len(attrs) >= 4 {
		n := int(binary.NativeEndian.Uint16(attrs))
		if n < 4 || n > len(attrs) {
			break
		}
		if binary.NativeEndian.Uint16(attrs[2:]) == attrInfo {
			info := attrs[4:n]
			if len(info) >= offBytesReceived+8 {
				s.hasInfo = true
				s.bytesIn = binary.NativeEndian.Uint64(info[offBytesReceived:])
				s.sinceDataIn = time.Duration(binary.NativeEndian.Uint32(info[offLastDataRecv:])) * time.Millisecond
			}
		}
		attrs = attrs[min((n+3)&^3, len(attrs)):]
	}
	return s, true
}

// dumper asks sock_diag for dumps on one netlink socket, reusing its buffers.
type dumper struct {
	fd   int
	buf  []byte
	out  []sock // the TCP sockets of the last dump
	udp  []sock // the UDP sockets of the last dumpUDP
	into *[]sock
	req  []byte
	seen func([]byte)
}

func newDumper() (*dumper, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	d := &dumper{fd: fd, buf: make([]byte, netlinkBuffer)}
	d.seen = func(msg []byte) {
		if s, ok := parseSock(msg); ok {
			*d.into = append(*d.into, s)
		}
	}
	return d, nil
}

func (d *dumper) close() { unix.Close(d.fd) }

// dump lists the TCP sockets in states (a bit mask of TCP states), IPv4 and
// IPv6, with their tcp_info. With ports, the kernel itself leaves out the
// sockets on other local ports. The result is valid until the next dump.
func (d *dumper) dump(states uint32, ports []uint16) ([]sock, error) {
	d.out = d.out[:0]
	err := d.dumpInto(&d.out, unix.IPPROTO_TCP, states, ports)
	return d.out, err
}

// dumpUDP lists the UDP sockets that have a local port and no peer, IPv4
// and IPv6. The result is valid until the next dumpUDP.
func (d *dumper) dumpUDP() ([]sock, error) {
	d.udp = d.udp[:0]
	err := d.dumpInto(&d.udp, unix.IPPROTO_UDP, unconnected, nil)
	return d.udp, err
}

func (d *dumper) dumpInto(out *[]sock, protocol uint8, states uint32, ports []uint16) error {
	filter := portFilter(ports)
	d.into = out
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := append(d.req[:0], make([]byte, unix.NLMSG_HDRLEN+diagReqLen)...)
		binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
		binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		r := req[unix.NLMSG_HDRLEN:]
		r[0] = family
		r[1] = protocol
		if protocol == unix.IPPROTO_TCP {
			r[2] = 1 << (attrInfo - 1) // idiag_ext: ask for tcp_info
		}
		binary.NativeEndian.PutUint32(r[4:], states)
		if len(filter) > 0 {
			req = binary.NativeEndian.AppendUint16(req, uint16(4+len(filter)))
			req = binary.NativeEndian.AppendUint16(req, attrBytecode)
			req = append(req, filter...)
		}
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		d.req = req
		if err := unix.Sendto(d.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return os.NewSyscallError("sendto", err)
		}
		if err := readDump(d.fd, d.buf, d.seen); err != nil {
			return err
		}
	}
	return nil
}

// portFilter is inet_diag bytecode accepting a socket whose local port is one
// of ports, or nil (no filter) when there are too many for the format's
// 8-bit forward jumps. Each port is a test that falls through to an
// unconditional jump to the end (accept) when true, and skips to the next
// test when false; the last test's false branch jumps past the end (reject).
func portFilter(ports []uint16) []byte {
	if len(ports) == 0 || len(ports) > 20 {
		return nil
	}
	const test, jump = 8, 4
	total := len(ports)*(test+jump) - jump
	var bc []byte
	op := func(code, yes uint8, no uint16) {
		bc = append(bc, code, yes, 0, 0)
		binary.NativeEndian.PutUint16(bc[len(bc)-2:], no)
	}
	for i, p := range ports {
		if i < len(ports)-1 {
			op(bcSourceEq, test, test+jump)
			op(0, 0, p)
			op(bcJump, jump, uint16(total-len(bc)))
		} else {
			op(bcSourceEq, test, test+4)
			op(0, 0, p)
		}
	}
	return bc
}

// readDump reads a netlink dump to its end, passing each message's payload.
func readDump(fd int, buf []byte, each func([]byte)) error {
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

// destroyed is a socket the kernel reported freed, and when the report came.
type destroyed struct {
	sock
	at   time.Time
	lost bool // the kernel dropped reports: sock is empty
}

// destroyFeed is the kernel's reports of freed TCP sockets (each with its
// last tcp_info), the SKNLGRP_INET{,6}_TCP_DESTROY multicast. Every TCP
// close of the network namespace is one report; with hostNetwork that is the
// whole node's. A classic BPF filter on the socket keeps in the kernel the
// reports of sockets on the watched local ports only, so that the feed's
// cost does not grow with other ports' connections.
type destroyFeed struct {
	fd int
	f  *os.File
	c  chan destroyed
	// batch, while set, has the reader wait batchEvery between reads, so
	// that a busy port's reports come many to a read (before the stop
	// signal, when only their times matter); now ends a wait.
	batch atomic.Bool
	now   chan struct{}
}

// batchEvery is how long the reader waits between reads while batching.
const batchEvery = 100 * time.Millisecond

// newDestroyFeed subscribes to the reports, with a filter that lets none
// through until watch names the ports. Every report that passes the filter
// goes on C, or one with lost set when the kernel dropped some.
func newDestroyFeed() (*destroyFeed, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	feed := &destroyFeed{fd: fd}
	if err := feed.watch(nil); err != nil {
		unix.Close(fd)
		return nil, err
	}
	groups := uint32(1<<(unix.SKNLGRP_INET_TCP_DESTROY-1) | 1<<(unix.SKNLGRP_INET6_TCP_DESTROY-1))
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	// A non-blocking descriptor in an os.File goes through Go's poller, so
	// Close wakes the reader below.
	feed.f = os.NewFile(uintptr(fd), "sock_diag")
	feed.c = make(chan destroyed, 1024)
	feed.now = make(chan struct{}, 1)
	go feed.read()
	return feed, nil
}

// batching has the reader read at most every batchEvery, or at once again.
func (feed *destroyFeed) batching(on bool) {
	feed.batch.Store(on)
	if !on {
		select {
		case feed.now <- struct{}{}:
		default:
		}
	}
}

func (feed *destroyFeed) read() {
	defer close(feed.c)
	buf := make([]byte, netlinkBuffer)
	for {
		n, err := feed.f.Read(buf)
		switch {
		case errors.Is(err, unix.ENOBUFS):
			feed.c <- destroyed{at: time.Now(), lost: true}
			continue
		case err != nil:
			return
		}
		at := time.Now()
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			s, ok := parseSock(m.Data)
			if !ok {
				continue
			}
			feed.c <- destroyed{sock: s, at: at}
		}
		if feed.batch.Load() {
			t := time.NewTimer(batchEvery)
			select {
			case <-t.C:
			case <-feed.now:
				t.Stop()
			}
		}
	}
}

// watch lets through the reports of sockets on these local ports only,
// from now on. The kernel swaps the filter at once.
func (feed *destroyFeed) watch(ports []uint16) error {
	prog := portProgram(ports)
	err := unix.SetsockoptSockFprog(feed.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]})
	return os.NewSyscallError("setsockopt SO_ATTACH_FILTER", err)
}

// close ends the feed; C is closed once the reader has finished.
func (feed *destroyFeed) close() {
	feed.f.Close()
	for range feed.c { // let the reader finish
	}
}

// offPort is where a report's local port is, for the filter: after the
// netlink header, in struct inet_diag_msg's id, big-endian as classic BPF
// loads it.
const offPort = unix.NLMSG_HDRLEN + 4

// portProgram is a classic BPF program that keeps a report whose local port
// is one of ports, and drops any other: one test and one return a port, so
// that no jump grows with the list. Past what a program may hold, it keeps
// every report (the watch filters them again).
func portProgram(ports []uint16) []unix.SockFilter {
	const (
		ldh  = unix.BPF_LD | unix.BPF_H | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		keep = 0xffffffff // the whole message
	)
	if 2*len(ports)+2 > unix.BPF_MAXINSNS {
		return keepEvery(nil)
	}
	prog := []unix.SockFilter{{Code: ldh, K: offPort}}
	for _, p := range ports {
		prog = append(prog,
			unix.SockFilter{Code: jeq, K: uint32(p), Jt: 0, Jf: 1},
			unix.SockFilter{Code: ret, K: keep})
	}
	return append(prog, unix.SockFilter{Code: ret, K: 0})
}

// keepEvery is a classic BPF program that keeps every report, whatever the
// ports.
func keepEvery([]uint16) []unix.SockFilter {
	return []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff}}
}
