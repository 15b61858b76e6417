package drain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/proctree"
)

// How the watch finds the listeners of the processes below proxy-await
//
// sock_diag lists every listening socket of the network namespace, with its
// inode and the uid that created it, but not the process that holds it. A
// process's "socket:[INODE]" links in /proc/PID/fd say which are its own:
// readable for a process of the same user that is dumpable, or with
// CAP_SYS_PTRACE. Kubernetes gives a container's root no CAP_SYS_PTRACE, so
// a server started through gosu, su-exec or setpriv, one that changed its
// own uid (as nginx's workers do), and one that is not dumpable (a binary
// with file capabilities) hide their descriptors; their /proc/PID/status,
// with their uids, stays readable. Such a blind process is accounted for
// when the watch can still tell its listeners:
//
//   - a listening socket that no readable process below proxy-await holds,
//     created by one of its uids, is taken to be its own (a socket opened
//     after the switch to another user is created by that user); or
//   - its parent, readable and below proxy-await, holds a listening socket:
//     it is a worker serving on its master's listeners, inherited at fork
//     (nginx, Apache httpd's prefork).
//
// A blind process accounted for neither way may serve on sockets created
// before it changed its uid (a server that binds port 80 as root, then drops
// to another user): the watch cannot see them, and never guesses quiet.

// procs is what the watch knows of the processes below the root.
type procs struct {
	root    int
	blind   []blindProc  // the processes whose descriptors cannot be read, at the last walk
	readers map[int]bool // the readable processes, at the last walk
	holds   map[int]bool // readable processes found holding one of the listeners
}

// blindProc is a process whose descriptors cannot be read.
type blindProc struct {
	pid, ppid int
	uids      []uint32 // real, effective, saved and filesystem uid
	err       error    // why its descriptors cannot be read
}

func newProcs(root int) *procs {
	return &procs{root: root, readers: map[int]bool{}, holds: map[int]bool{}}
}

// walk lists the root and every process below it again, and sorts them
// into readable and blind ones. Processes that exit during the walk are left
// out.
func (p *procs) walk() {
	p.blind = p.blind[:0]
	clear(p.readers)
	for _, pid := range append([]int{p.root}, proctree.Descendants(p.root)...) {
		switch err := probeFDs(pid); {
		case err == nil:
			p.readers[pid] = true
		case errors.Is(err, fs.ErrNotExist):
			// gone
		default:
			b, ok := readStatus(pid)
			if !ok {
				continue // gone, or a zombie: no descriptors left
			}
			b.err = err
			p.blind = append(p.blind, b)
		}
	}
}

// probeFDs says whether pid's descriptors can be read: the directory may be
// listed (root's CAP_DAC_OVERRIDE allows it) while each link is refused.
// nil for a process without any descriptor.
func probeFDs(pid int) error {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(8)
	f.Close()
	if err != nil && len(names) == 0 {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	for _, n := range names {
		_, err := os.Readlink(filepath.Join(dir, n))
		if !errors.Is(err, fs.ErrNotExist) { // a descriptor closed meanwhile: try the next
			return err
		}
	}
	return nil
}

// readStatus reads a process's parent and uids from /proc/PID/status, which
// any user may read; false for a process gone or a zombie.
func readStatus(pid int) (blindProc, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return blindProc{}, false
	}
	b := blindProc{pid: pid}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(value)
		switch {
		case key == "State" && len(f) > 0 && f[0] == "Z":
			return blindProc{}, false
		case key == "PPid" && len(f) > 0:
			b.ppid, _ = strconv.Atoi(f[0])
		case key == "Uid":
			for _, u := range f {
				if n, err := strconv.ParseUint(u, 10, 32); err == nil && !slices.Contains(b.uids, uint32(n)) {
					b.uids = append(b.uids, uint32(n))
				}
			}
		}
	}
	return b, len(b.uids) > 0
}

// owning reports which of the socket inodes the readable processes hold: a
// "socket:[INODE]" link among their descriptors. It notes each process that
// holds one, and stops reading descriptors once every inode is found (a
// server's listener is among its first descriptors, before its
// connections).
func (p *procs) owning(inodes map[uint32]bool) map[uint32]bool {
	found := map[uint32]bool{}
	for pid := range p.readers {
		done := scanSockets(pid, func(inode uint32) bool {
			if inodes[inode] {
				found[inode] = true
				p.holds[pid] = true
			}
			return len(found) == len(inodes)
		})
		if done {
			break
		}
	}
	return found
}

// holdsAny says whether the readable process pid holds one of the inodes.
func (p *procs) holdsAny(pid int, inodes func(uint32) bool) bool {
	if !p.readers[pid] {
		return false
	}
	if !p.holds[pid] {
		p.holds[pid] = scanSockets(pid, inodes)
	}
	return p.holds[pid]
}

// scanSockets calls each with the inode of every socket among pid's
// descriptors, in order, until it returns true; it says whether one did.
func scanSockets(pid int, each func(inode uint32) bool) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	f, err := os.Open(dir)
	if err != nil {
		return false // a process that has just exited
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, fd := range names {
			target, err := os.Readlink(filepath.Join(dir, fd))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]"), 10, 32)
			if err == nil && each(uint32(n)) {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}
