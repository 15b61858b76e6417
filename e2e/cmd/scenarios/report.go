package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// report reads every trace that benchRollout saved in dir, writes a
// Markdown table to w, one row a variant and kube-proxy setting, and, when
// picturePath is not empty, the picture of each row's run of median
// rollout time there (make bench-rollout).
func report(w io.Writer, dir, picturePath string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	groups := map[string][]*trace{}
	var order []string
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		t := &trace{}
		if err := json.Unmarshal(b, t); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		key := t.MinSyncPeriod + "/" + t.Variant
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], t)
	}
	if len(order) == 0 {
		return fmt.Errorf("no trace in %s", dir)
	}
	rank := map[string]int{}
	for i, v := range rolloutVariants() {
		rank[v.key] = i
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := groups[order[i]][0], groups[order[j]][0]
		if rank[a.Variant] != rank[b.Variant] {
			return rank[a.Variant] < rank[b.Variant]
		}
		return syncOf(a) < syncOf(b)
	})

	fmt.Fprintln(w, "| variant | kube-proxy `minSyncPeriod` | replicas | requests a second (new + pool) | runs | failed requests: runs with each count | failed / sent, all runs | rollout, median | rollout, worst | hold of each old pod, median and worst |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var rows []pictureRow
	for _, key := range order {
		ts := groups[key]
		t := ts[0]
		var durations, holds []float64
		perRun := map[int]int{}
		sent, failed := 0, 0
		errs := map[string]int{}
		for _, t := range ts {
			durations = append(durations, t.End-t.Restart)
			holds = append(holds, t.holds()...)
			s, f, e := tally(t.Requests)
			sent, failed = sent+s, failed+f
			perRun[f]++
			for k, n := range e {
				errs[k] += n
			}
		}
		slices.Sort(durations)
		slices.Sort(holds)
		median := durations[len(durations)/2]
		fmt.Fprintf(w, "| %s | %s | %d | %d + %d | %d | %s | %s | %.1f s | %.1f s | %s |\n",
			t.Name, t.MinSyncPeriod, t.Replicas, t.Rate, t.Rate, len(ts), distribution(perRun),
			withKinds(failed, sent, errs), median, durations[len(durations)-1], holdFigures(holds))
		var pick *trace
		for _, t := range ts {
			if t.End-t.Restart == median {
				pick = t
			}
		}
		rows = append(rows, pictureRow{
			label:   fmt.Sprintf("%s, minSyncPeriod\u00a0%s", t.Name, t.MinSyncPeriod), // kept on one line
			figures: fmt.Sprintf("this run %.1f s, the median; %d of %d failed in %d runs", median, failed, sent, len(ts)),
			trace:   pick,
		})
	}
	if picturePath == "" {
		return nil
	}
	f, err := os.Create(picturePath)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := picture(f, "A rolling update behind a ClusterIP Service: each variant's run of median rollout time", rows); err != nil {
		return err
	}
	return f.Close()
}

func syncOf(t *trace) time.Duration {
	d, _ := time.ParseDuration(t.MinSyncPeriod)
	return d
}

// distribution says how many runs failed how many requests: "0 ×20", or
// "0 ×18, 1 ×2".
func distribution(perRun map[int]int) string {
	var counts []int
	for n := range perRun {
		counts = append(counts, n)
	}
	slices.Sort(counts)
	var s []string
	for _, n := range counts {
		s = append(s, fmt.Sprintf("%d ×%d", n, perRun[n]))
	}
	return strings.Join(s, ", ")
}

func withKinds(failed, sent int, errs map[string]int) string {
	s := fmt.Sprintf("%d / %d", failed, sent)
	var kinds []string
	for e, n := range errs {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, e))
	}
	sort.Strings(kinds)
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	return s
}

func holdFigures(holds []float64) string {
	if len(holds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s, %.1f s", holds[len(holds)/2], holds[len(holds)-1])
}
