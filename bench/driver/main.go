//go:build linux

// Command driver runs the benchmarks of bench/run.sh that need a precise
// clock or process control, and writes bench/results.md from all the results.
//
//	driver [flags] launch|readiness|cpuwait|signals|storm|memory|packages|reap|report
//
// Every measure writes OUT/NAME.json; report reads them together with the
// hyperfine and go test outputs that run.sh leaves in OUT and fills in the
// template results.md.tmpl. The benchmarks report figures; they never fail
// on machine speed, only when something does not work at all (a wrapper
// dies, a stamp is missing).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/proctree"
)

// paths of the programs under test and of the helpers.
type paths struct {
	proxyAwait string
	// proxyAwaitSyms is the same build as proxyAwait with its symbol
	// table, for the packages measure.
	proxyAwaitSyms string
	fakeproxy      string
	stamp          string
	goFloor        string
	depFloor       string // bench/depfloor whole; its other builds beside it (depFloorBuilds)
	child          string
	tini           string
	dumbInit       string
	out            string
	cold           string // copies of the binaries on a device without read-ahead, or ""
}

var p paths

func main() {
	flag.StringVar(&p.proxyAwait, "proxy-await", "bin/proxy-await", "proxy-await binary under test")
	flag.StringVar(&p.proxyAwaitSyms, "proxy-await-syms", "", "the same build of proxy-await with its symbol table (packages only)")
	flag.StringVar(&p.fakeproxy, "fakeproxy", "bin/fakeproxy", "stand-in proxy admin server")
	flag.StringVar(&p.stamp, "stamp", "", "bench/stamp binary")
	flag.StringVar(&p.goFloor, "gofloor", "", "bench/gofloor binary")
	flag.StringVar(&p.depFloor, "depfloor", "", "bench/depfloor binary, built whole; run.sh builds the others beside it")
	flag.StringVar(&p.child, "child", "", "bench/child binary")
	flag.StringVar(&p.out, "out", "", "directory for results")
	flag.StringVar(&p.cold, "cold", "", "directory on a device without read-ahead holding copies of the wrappers, for the cold memory figures")
	report := flag.String("report", "bench/results.md", "report to write (report only)")
	flag.Parse()
	if flag.NArg() != 1 || p.out == "" {
		fail(fmt.Errorf("usage: driver -out DIR [flags] MEASURE"))
	}
	var err error
	if p.tini, err = exec.LookPath("tini"); err != nil {
		fail(err)
	}
	if p.dumbInit, err = exec.LookPath("dumb-init"); err != nil {
		fail(err)
	}
	measures := map[string]func() (any, error){
		"launch":    launch,
		"readiness": readiness,
		"cpuwait":   cpuWait,
		"signals":   signals,
		"storm":     storm,
		"memory":    memory,
		"packages":  packages,
		"reap":      reap,
	}
	name := flag.Arg(0)
	if name == "report" {
		if err := writeReport(*report); err != nil {
			fail(err)
		}
		return
	}
	measure, ok := measures[name]
	if !ok {
		fail(fmt.Errorf("unknown measure %q", name))
	}
	res, err := measure()
	if err != nil {
		fail(fmt.Errorf("%s: %w", name, err))
	}
	if err := saveJSON(name, res); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "driver:", err)
	os.Exit(1)
}

func saveJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.out, name+".json"), b, 0o644)
}

func loadJSON(name string, v any) error {
	b, err := os.ReadFile(filepath.Join(p.out, name+".json"))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// wrapper is an init under comparison, as the argument prefix that runs a
// command under it.
type wrapper struct {
	Name   string
	Prefix []string
}

// inits are the three wrappers, proxy-await without a readiness wait.
func inits() []wrapper {
	return []wrapper{
		{"proxy-await", []string{p.proxyAwait, "--proxy", "none", "--"}},
		{"tini", []string{p.tini, "--"}},
		{"dumb-init", []string{p.dumbInit}},
	}
}

// goFloor is the reference Go program (bench/gofloor): what any Go init with
// proxy-await's signal subscriptions costs before doing anything else.
func goFloor() wrapper { return wrapper{"Go floor", []string{p.goFloor}} }

// depFloorBuilds are the builds of bench/depfloor that run.sh makes, by
// the suffix it adds to -depfloor: the whole, each without one dependency
// (its no_NAME build tag), net/http's client alone, and none of them.
var depFloorBuilds = []struct{ suffix, name string }{
	{"", "dependency floor: pflag, log/slog, net/http's client and server, go-retryablehttp"},
	{"-no-pflag", "dependency floor without pflag"},
	{"-no-slog", "dependency floor without log/slog"},
	{"-no-retryablehttp", "dependency floor without go-retryablehttp"},
	{"-no-server", "dependency floor without net/http's server"},
	{"-no-client", "dependency floor without net/http's client (its probe by hand)"},
	{"-client-alone", "dependency floor: net/http's client alone"},
	{"-none", "dependency floor: none of them (its probe by hand)"},
}

// depFloors are the dependency floor's builds (bench/depfloor), each as a
// wrapper that waits for the proxy at PORT, as proxy-await's -p does.
func depFloors() []wrapper {
	var ws []wrapper
	for _, b := range depFloorBuilds {
		ws = append(ws, wrapper{b.name, []string{p.depFloor + b.suffix, "-q", "-p", "PORT", "--"}})
	}
	return ws
}

func (w wrapper) command(args ...string) *exec.Cmd {
	all := append(slices.Clone(w.Prefix), args...)
	// The wrappers' own log lines (proxy-await's "child exited") would only
	// clutter the run's output; stdout is what the measures read.
	return exec.Command(all[0], all[1:]...)
}

// stats summarises durations, in microseconds.
type stats struct {
	N      int     `json:"n"`
	Median float64 `json:"median_us"`
	P90    float64 `json:"p90_us"`
	P99    float64 `json:"p99_us"`
	Min    float64 `json:"min_us"`
	Max    float64 `json:"max_us"`
}

func summarise(ds []time.Duration) stats {
	us := make([]float64, len(ds))
	for i, d := range ds {
		us[i] = float64(d.Nanoseconds()) / 1e3
	}
	return summariseUS(us)
}

func summariseUS(us []float64) stats {
	if len(us) == 0 {
		return stats{}
	}
	s := slices.Clone(us)
	slices.Sort(s)
	return stats{N: len(s), Median: median(s), P90: rank(s, 0.90), P99: rank(s, 0.99), Min: s[0], Max: s[len(s)-1]}
}

// median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rank is the nearest-rank percentile q of sorted values.
func rank(s []float64, q float64) float64 {
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// cpuNS is the CPU time consumed so far by every live thread of pid, in
// nanoseconds (proctree.CPUTime).
func cpuNS(pid int) (int64, error) {
	d, err := proctree.CPUTime(pid)
	return int64(d), err
}

// mem is what /proc/PID/status says of a process's resident memory, in kB.
// Anonymous pages are its own; file pages (the binary's text and data) are
// shared with every process that maps the same file, such as every pod that
// uses the same image layer on a node.
type mem struct {
	PeakKB int64 `json:"peak_kb"` // VmHWM
	RSSKB  int64 `json:"rss_kb"`  // VmRSS
	AnonKB int64 `json:"anon_kb"` // RssAnon
	FileKB int64 `json:"file_kb"` // RssFile
}

func memOf(pid int) (mem, error) {
	st, ok := proctree.ReadStatus(pid)
	if !ok {
		return mem{}, fmt.Errorf("no /proc/%d/status", pid)
	}
	return mem(st.Memory), nil
}

// alive says whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && st.State != 'Z'
}

// rusageCPU is the user+system time of an exited process.
func rusageCPU(ps *os.ProcessState) time.Duration {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
