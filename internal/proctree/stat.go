package proctree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stat is what /proc/PID/stat says of a process.
type Stat struct {
	PID, PPID int
	Comm      string // the command's name, as the kernel keeps it (15 bytes at most)
	State     byte   // R, S, D, T, Z...
}

// ReadStat reads /proc/PID/stat; false once the process is gone (reaped,
// not merely exited: a zombie reads state Z).
func ReadStat(pid int) (Stat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, false
	}
	st, err := ParseStat(data)
	return st, err == nil
}

// ParseStat parses the text of /proc/PID/stat: "PID (COMM) STATE PPID ...".
// COMM is whatever the process named itself and may hold spaces and
// parentheses, ") (" among them; the kernel writes nothing after it but
// numbers and the state, so the fields after COMM start after the last ")".
func ParseStat(data []byte) (Stat, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("no (COMM) in /proc/PID/stat")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/PID/stat: pid: %w", err)
	}
	f := strings.Fields(string(data[end+1:])) // state, ppid, ...
	if len(f) < 2 || len(f[0]) != 1 {
		return Stat{}, errors.New("no state and ppid after (COMM) in /proc/PID/stat")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/PID/stat: ppid: %w", err)
	}
	return Stat{PID: pid, PPID: ppid, Comm: string(data[open+1 : end]), State: f[0][0]}, nil
}

// Status is what /proc/PID/status says of a process that /proc/PID/stat
// does not: its users, its PIDs in nested PID namespaces, the signals it
// handles and its resident memory. Any user may read it, also of a process
// whose descriptors and memory are closed to them.
type Status struct {
	State byte      // R, S, D, T, Z...
	PPID  int       // 0 for a process started by another PID namespace's
	UIDs  [4]uint32 // real, effective, saved and filesystem uid
	// NSpid is its PID in each PID namespace from that of this /proc down
	// to its own: the last is the PID it knows itself by. nil where the
	// kernel writes no NSpid line.
	NSpid  []int
	Caught uint64 // the signals it has a handler for: bit N-1 for signal N (SigCgt)
	Memory Memory
}

// Memory is a process's resident memory in kB, from the VmHWM, VmRSS,
// RssAnon and RssFile lines: zero for a zombie or a kernel thread, which
// have none. Anonymous pages are the process's own; file pages (its
// binary's text and data) are shared with every process that maps the
// same file.
type Memory struct {
	PeakKB int64 // VmHWM: the most it was resident
	RSSKB  int64 // VmRSS
	AnonKB int64 // RssAnon
	FileKB int64 // RssFile
}

// ReadStatus reads /proc/PID/status; false once the process is gone.
func ReadStatus(pid int) (Status, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Status{}, false
	}
	st, err := ParseStatus(data)
	return st, err == nil
}

// ParseStatus parses the text of /proc/PID/status, one "Key:\tvalue" a
// line: the State, PPid and Uid lines, which every process has, and the
// NSpid, SigCgt and memory lines where the kernel writes them. The name on
// the Name line is escaped by the kernel ("\n" for a newline), so no line
// is taken for another.
func ParseStatus(data []byte) (Status, error) {
	var st Status
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		known, err := st.set(key, strings.Fields(value))
		if err != nil {
			return Status{}, fmt.Errorf("/proc/PID/status: %s:%s: %w", key, value, err)
		}
		seen[key] = known
	}
	if !seen["State"] || !seen["PPid"] || !seen["Uid"] {
		return Status{}, errors.New("/proc/PID/status lacks a State, PPid or Uid line")
	}
	return st, nil
}

// set reads the fields f of the line key into st; known is false for a
// line that Status does not hold.
func (st *Status) set(key string, f []string) (known bool, err error) {
	switch key {
	case "State": // "R (running)"
		if len(f) == 0 || len(f[0]) != 1 {
			return true, errors.New("not a state")
		}
		st.State = f[0][0]
	case "PPid":
		if len(f) != 1 {
			return true, errors.New("not one number")
		}
		st.PPID, err = strconv.Atoi(f[0])
	case "Uid": // real, effective, saved, filesystem
		if len(f) != len(st.UIDs) {
			return true, errors.New("not four uids")
		}
		for i, u := range f {
			n, err := strconv.ParseUint(u, 10, 32)
			if err != nil {
				return true, err
			}
			st.UIDs[i] = uint32(n)
		}
	case "NSpid": // "812\t1": the outer namespace first
		st.NSpid, err = ints(f)
	case "SigCgt": // 16 hex digits
		if len(f) != 1 {
			return true, errors.New("not one mask")
		}
		st.Caught, err = strconv.ParseUint(f[0], 16, 64)
	case "VmHWM":
		st.Memory.PeakKB, err = kB(f)
	case "VmRSS":
		st.Memory.RSSKB, err = kB(f)
	case "RssAnon":
		st.Memory.AnonKB, err = kB(f)
	case "RssFile":
		st.Memory.FileKB, err = kB(f)
	default:
		return false, nil
	}
	return true, err
}

// ints is f as decimal integers, at least one.
func ints(f []string) ([]int, error) {
	if len(f) == 0 {
		return nil, errors.New("no number")
	}
	out := make([]int, len(f))
	for i, s := range f {
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// kB is a memory line's "9352 kB" in kB.
func kB(f []string) (int64, error) {
	if len(f) != 2 || f[1] != "kB" {
		return 0, errors.New("not a size in kB")
	}
	return strconv.ParseInt(f[0], 10, 64)
}

// CPUTime is the CPU time that the live threads of pid have run so far,
// from /proc/PID/task/*/schedstat: nanoseconds, where stat counts clock
// ticks. A thread that ends meanwhile is left out.
func CPUTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no tasks for pid %d", pid)
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return time.Duration(total), nil
}
