package drain

import (
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

// A process whose descriptors cannot be read (blind) is followed through
// every listening socket created as a user it could have created it as
// (owners): docs/graceful-termination.md ("It never guesses quiet") says who
// those are, and why this errs only towards a longer hold.

// procs is what the watch knows of the processes below the root.
type procs struct {
	root    int
	uids    []uint32        // the root's
	blind   []blindProc     // the processes whose descriptors cannot be read, at the last walk
	readers map[int]bool    // the readable processes, at the last walk
	owners  map[uint32]bool // the users whose sockets could be a blind process's; empty without one
}

// blindProc is a process whose descriptors cannot be read.
type blindProc struct {
	pid  int
	uids []uint32 // real, effective, saved and filesystem uid
	err  error    // why its descriptors cannot be read
}

func newProcs(root int) *procs {
	p := &procs{root: root, readers: map[int]bool{}, owners: map[uint32]bool{}}
	if b, ok := readStatus(root); ok {
		p.uids = b.uids
	}
	return p
}

// walk lists the root and every process below it again, and sorts them
// into readable and blind ones. Processes that exit during the walk are left
// out.
func (p *procs) walk() {
	p.blind = p.blind[:0]
	clear(p.readers)
	clear(p.owners)
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
	if len(p.blind) > 0 {
		p.owners[0] = true
		for _, u := range p.uids {
			p.owners[u] = true
		}
		for _, b := range p.blind {
			for _, u := range b.uids {
				p.owners[u] = true
			}
		}
	}
}

// couldHold returns a blind process that could hold a socket created by
// uid: one that runs as uid if there is one, or nil if none could.
func (p *procs) couldHold(uid uint32) *blindProc {
	if !p.owners[uid] {
		return nil
	}
	for i, b := range p.blind {
		if slices.Contains(b.uids, uid) {
			return &p.blind[i]
		}
	}
	return &p.blind[0]
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

// readStatus reads a process's uids from /proc/PID/status, which
// any user may read; false for a process gone or a zombie.
func readStatus(pid int) (blindProc, bool) {
	st, ok := proctree.ReadStatus(pid)
	if !ok || st.State == 'Z' {
		return blindProc{}, false
	}
	b := blindProc{pid: pid}
	for _, u := range st.UIDs {
		if !slices.Contains(b.uids, u) {
			b.uids = append(b.uids, u)
		}
	}
	return b, true
}

// owning reports which of the socket inodes the readable processes hold,
// and the process that holds each: a "socket:[INODE]" link among their
// descriptors. It stops reading descriptors once every inode is found (a
// server's listener is among its first descriptors, before its
// connections).
func (p *procs) owning(inodes map[uint32]bool) map[uint32]int {
	found := map[uint32]int{}
	for pid := range p.readers {
		done := scanSockets(pid, func(inode uint32) bool {
			if inodes[inode] {
				found[inode] = pid
			}
			return len(found) == len(inodes)
		})
		if done {
			break
		}
	}
	return found
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
