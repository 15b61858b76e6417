// Package proctree reads processes from /proc: what /proc/PID/stat and
// /proc/PID/status say of one, the CPU time its threads have run, and the
// processes below one.
package proctree

import (
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
	for _, st := range Processes() {
		kids[st.PPID] = append(kids[st.PPID], st.PID)
	}
	return func(pid int) []int { return kids[pid] }
}

// Processes reads /proc/PID/stat of every process in /proc now, zombies
// included; a process that exits during the walk may be missed.
func Processes() []Stat {
	var out []Stat
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, ok := ReadStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}
