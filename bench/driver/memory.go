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
	Name string `json:"name"`
	mem
}

func memory() (any, error) {
	f, err := startFake(p.out, "50ms")
	if err != nil {
		return nil, err
	}
	defer f.stop()
	ws := append(inits(), goFloor(), wrapper{
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
	// Settled: the readiness wait is over and every wrapper idles.
	time.Sleep(time.Second)
	var res memoryResult
	for _, s := range ss {
		m, err := memOf(s.cmd.Process.Pid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		res.Rows = append(res.Rows, memoryRow{Name: s.Name, mem: m})
	}
	return res, nil
}
