// Package proctree reads a process's descendants from /proc.
package proctree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Descendants lists the processes below pid, children first, read from
// /proc/PID/task/*/children. A process that forks or exits during the walk
// may be missed or listed after it is gone: callers scan again after every
// change they wait for. Empty when /proc cannot tell.
func Descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			data, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(data)) {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, n)
					queue = append(queue, n)
				}
			}
		}
	}
	return out
}
