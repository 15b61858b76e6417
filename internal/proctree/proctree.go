// Package proctree reads a process's descendants from /proc.
package proctree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Descendants lists the processes below pid, children first, read from
// /proc/PID/task/*/children; where the kernel has no such files (built
// without CONFIG_PROC_CHILDREN, as small VM kernels often are), from every
// process's parent in /proc/*/stat. A process that forks or exits during the
// walk may be missed or listed after it is gone: callers scan again after
// every change they wait for. Empty when /proc cannot tell.
func Descendants(pid int) []int {
	children := listedChildren
	_, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if errors.Is(err, fs.ErrNotExist) {
		children = byParent()
	}
	return descendants(pid, children)
}

func descendants(pid int, children func(int) []int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// listedChildren reads pid's children from /proc/PID/task/*/children: a
// child is listed under the thread that forked it.
func listedChildren(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// byParent reads the parent of every process in /proc once, and returns
// the children of a process from what it read.
func byParent() func(int) []int {
	kids := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parent(pid); ok {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	return func(pid int) []int { return kids[pid] }
}

// parent reads the fourth field of /proc/PID/stat. The second, the
// command's name in parentheses, may itself hold spaces and parentheses:
// the fields after it start after the last ")".
func parent(pid int) (int, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:])) // state, ppid, ...
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
