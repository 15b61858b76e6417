package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stat is what /proc/PID/stat says of a process.
type Stat struct {
	PID, PPID int
	Comm      string
	State     byte // R, S, D, T, Z...
}

// ReadStat reads /proc/PID/stat; ok is false once the process is gone
// (reaped, not merely exited: a zombie reads state Z).
func ReadStat(pid int) (st Stat, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, false
	}
	// "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return st, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return st, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return st, false
	}
	return Stat{PID: pid, PPID: ppid, Comm: s[open+1 : end], State: f[0][0]}, true
}

// Processes lists every process in /proc now.
func Processes() []Stat {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []Stat
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, ok := ReadStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// Children lists the children of pid now, zombies included.
func Children(pid int) []Stat {
	var out []Stat
	for _, st := range Processes() {
		if st.PPID == pid {
			out = append(out, st)
		}
	}
	return out
}
