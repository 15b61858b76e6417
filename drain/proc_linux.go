package drain

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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

// ownsAny reports which of the socket inodes are open in pid's process tree:
// a "socket:[INODE]" link among the file descriptors of its processes. It
// stops reading descriptors once every inode is found.
func ownsAny(pid int, inodes map[uint32]bool) (map[uint32]bool, error) {
	found := map[uint32]bool{}
	for _, p := range processTree(pid) {
		dir := fmt.Sprintf("/proc/%d/fd", p)
		fds, err := os.ReadDir(dir)
		if err != nil {
			if p == pid && !os.IsNotExist(err) {
				return nil, err
			}
			continue // a process that has just exited
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]"), 10, 32)
			if err == nil && inodes[uint32(n)] {
				found[uint32(n)] = true
				if len(found) == len(inodes) {
					return found, nil
				}
			}
		}
	}
	return found, nil
}
