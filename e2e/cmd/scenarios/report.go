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
)

// report reads every trace that benchRollout saved in dir, writes a
// Markdown table to w, one row a variant and kube-proxy mode, and, when
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
		key := t.Mode + "/" + t.Variant
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
		return modeRank(a.Mode) < modeRank(b.Mode)
	})

	fmt.Fprintln(w, "| variant | kube-proxy | replicas | requests a second from each node (new + pool) | runs | failed requests: runs with each count | failed / sent, all runs | rollout, median | rollout, worst | hold of each old pod, median and worst | each old pod's last new connection: from which node, and when after its deletion (median, worst) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	var rows []pictureRow
	for _, key := range order {
		ts := groups[key]
		t := ts[0]
		var durations, holds []float64
		lasts := map[string][]float64{}
		perRun := map[int]int{}
		sent, failed := 0, 0
		errs := map[string]int{}
		for _, t := range ts {
			durations = append(durations, t.End-t.Restart)
			holds = append(holds, t.holds()...)
			for name, l := range t.lastConnections() {
				if p := t.pod(name); p.Deleting != 0 {
					lasts[l.Node] = append(lasts[l.Node], l.At-p.Deleting)
				}
			}
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
		fmt.Fprintf(w, "| %s | %s | %d | %d + %d | %d | %s | %s | %.1f s | %.1f s | %s | %s |\n",
			t.Name, t.Mode, t.Replicas, t.Rate, t.Rate, len(ts), distribution(perRun),
			withKinds(failed, sent, errs), median, durations[len(durations)-1], holdFigures(holds), lastFigures(t, lasts))
		var pick *trace
		for _, t := range ts {
			if t.End-t.Restart == median {
				pick = t
			}
		}
		rows = append(rows, pictureRow{
			label:   fmt.Sprintf("%s, kube-proxy\u00a0%s", t.Name, t.Mode), // kept on one line
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
	if err := picture(f, "A rolling update behind a ClusterIP Service on two nodes: each variant's run of median rollout time", rows); err != nil {
		return err
	}
	return f.Close()
}

// modeRank orders kube-proxy's modes: iptables, nftables, ipvs.
func modeRank(mode string) int {
	if i := slices.Index([]string{"iptables", "nftables", "ipvs"}, mode); i >= 0 {
		return i
	}
	return 3
}

// lastFigures tells, for each node, how many old pods had their last new
// connection from it, and how long after their deletion, median and worst:
// "e2e-1 (minSyncPeriod 1s): 12 pods, +0.4 s, +0.9 s; e2e-2 (5s): 48 pods, +3.9 s, +5.6 s".
func lastFigures(t *trace, lasts map[string][]float64) string {
	var s []string
	for _, n := range t.Nodes {
		at := lasts[n.Name]
		if len(at) == 0 {
			s = append(s, fmt.Sprintf("%s (%s): none", n.Name, n.MinSyncPeriod))
			continue
		}
		slices.Sort(at)
		s = append(s, fmt.Sprintf("%s (%s): %d pods, %+.1f s, %+.1f s", n.Name, n.MinSyncPeriod, len(at), at[len(at)/2], at[len(at)-1]))
	}
	return strings.Join(s, "; ")
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
