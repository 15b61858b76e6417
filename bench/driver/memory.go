//go:build linux

package main

import (
	"fmt"
	"time"
)

// memoryResult is each wrapper's resident memory while it supervises a
// sleeping child.
type memoryResult struct {
	Rows []memoryRow `json:"rows"`
}

type memoryRow struct {
	Name      string `json:"name"`
	PeakKB    int64  `json:"peak_kb"`   // VmHWM
	SteadyKB  int64  `json:"steady_kb"` // VmRSS
	AfterWait bool   `json:"after_wait"`
}

func memory() (any, error) {
	dir := p.out
	f, err := startFake(dir, "50ms")
	if err != nil {
		return nil, err
	}
	defer f.stop()
	ws := append(inits(), wrapper{
		Name:   "proxy-await, after a readiness wait",
		Prefix: []string{p.proxyAwait, "-q", "-p", f.port, "--"},
	})
	var ss []*supervised
	defer func() {
		for _, s := range ss {
			_, _ = s.stop()
		}
	}()
	for _, w := range ws {
		s, err := startSupervised(w)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	time.Sleep(time.Second)
	var res memoryResult
	for i, s := range ss {
		hwm, rss, err := memKB(s.cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		res.Rows = append(res.Rows, memoryRow{Name: s.Name, PeakKB: hwm, SteadyKB: rss, AfterWait: i == len(ss)-1})
	}
	return res, nil
}
