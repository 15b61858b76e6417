//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// reapResult is how fast each wrapper, as PID 1 of a new PID namespace,
// reaps a burst of orphans that all exit at once.
type reapResult struct {
	Orphans int       `json:"orphans"`
	Reps    int       `json:"reps"`
	Rows    []reapRow `json:"rows"`
}

type reapRow struct {
	Name   string  `json:"name"`
	ReapMS float64 `json:"reap_ms"` // median over reps
	PerSec float64 `json:"per_sec"` // orphans reaped per second, at that median
}

const reapOrphans, reapReps = 2000, 3

func reap() (any, error) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, err
	}
	type variant struct {
		name   string
		prefix []string
	}
	var vs []variant
	for _, w := range inits() {
		vs = append(vs, variant{w.Name + " (PID 1)", append([]string{unshare, "--pid", "--fork", "--mount-proc"}, w.Prefix...)})
	}
	vs = append(vs, variant{"proxy-await (child subreaper, not PID 1)", inits()[0].Prefix})
	res := reapResult{Orphans: reapOrphans, Reps: reapReps}
	times := make([][]float64, len(vs))
	for range reapReps {
		for i, v := range vs {
			cmd := wrapper{Name: v.name, Prefix: v.prefix}.command(p.child, "orphans", fmt.Sprint(reapOrphans))
			cmd.WaitDelay = time.Second
			timer := time.AfterFunc(2*time.Minute, func() {
				if cmd.Process != nil {
					_ = cmd.Process.Kill()
				}
			})
			out, err := cmd.Output()
			timer.Stop()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			var r struct {
				ReapMS float64 `json:"reap_ms"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				return nil, fmt.Errorf("%s printed %q", v.name, out)
			}
			times[i] = append(times[i], r.ReapMS)
		}
	}
	for i, v := range vs {
		slices.Sort(times[i])
		m := median(times[i])
		res.Rows = append(res.Rows, reapRow{Name: v.name, ReapMS: m, PerSec: reapOrphans / (m / 1e3)})
	}
	return res, nil
}
