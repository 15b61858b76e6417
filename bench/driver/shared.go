//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// sharedResult is what each of several proxy-awaits started from one file
// pays in memory, as on a node whose pods use the same image layer: each
// supervises an idle child after a readiness wait, and
// /proc/PID/smaps_rollup is read once all have settled. Rss counts every
// page a process maps; Pss divides each page by the number of processes
// that map it, so that the binary's file pages, which all of them map from
// the one page cache, count once among them, and each one's anonymous
// pages in full.
type sharedResult struct {
	Rows []sharedRow `json:"rows"`
}

// sharedRow is the mean over the processes of a run of n, in kB.
type sharedRow struct {
	Processes int   `json:"processes"`
	PeakKB    int64 `json:"peak_kb"` // VmHWM
	RssKB     int64 `json:"rss_kb"`
	PssKB     int64 `json:"pss_kb"`
	PssAnonKB int64 `json:"pss_anon_kb"`
	PssFileKB int64 `json:"pss_file_kb"`
}

var sharedCounts = []int{1, 2, 4, 8}

func shared() (any, error) {
	var res sharedResult
	if err := readWhole(p.proxyAwait); err != nil {
		return nil, err
	}
	for _, n := range sharedCounts {
		row, err := sharedOnce(n)
		if err != nil {
			return nil, fmt.Errorf("%d processes: %w", n, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func sharedOnce(n int) (sharedRow, error) {
	row := sharedRow{Processes: n}
	f, err := startFake(p.out, "50ms")
	if err != nil {
		return row, err
	}
	defer f.stop()
	var ss []*supervised
	defer func() {
		for _, s := range ss {
			_, _ = s.stop()
		}
	}()
	for range n {
		s, err := startSupervised(wrapper{"proxy-await", []string{p.proxyAwait, "-q", "-p", f.port, "--"}})
		if err != nil {
			return row, err
		}
		ss = append(ss, s)
	}
	time.Sleep(settle)
	for _, s := range ss {
		pid := s.cmd.Process.Pid
		m, err := memOf(pid)
		if err != nil {
			return row, err
		}
		r, err := smapsRollup(pid)
		if err != nil {
			return row, err
		}
		row.PeakKB += m.PeakKB
		row.RssKB += r["Rss"]
		row.PssKB += r["Pss"]
		row.PssAnonKB += r["Pss_Anon"]
		row.PssFileKB += r["Pss_File"]
	}
	for _, v := range []*int64{&row.PeakKB, &row.RssKB, &row.PssKB, &row.PssAnonKB, &row.PssFileKB} {
		*v /= int64(n)
	}
	return row, nil
}

// smapsRollup is /proc/PID/smaps_rollup's figures, in kB, by name.
func smapsRollup(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	figures := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if v, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			figures[name] = v
		}
	}
	if _, ok := figures["Pss_File"]; !ok {
		return nil, fmt.Errorf("%s has no Pss_File (Linux 5.9 or later has)", f.Name())
	}
	return figures, sc.Err()
}
