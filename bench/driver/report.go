//go:build linux

package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// results.md.tmpl lays out one run's figures; the analysis of what they
// mean is written by hand in BENCHMARKS.md.
//
//go:embed results.md.tmpl
var reportTemplate string

// run is everything one `make bench` measured, as the template sees it.
type run struct {
	Date, CPU, Kernel, Versions, LoadStart, LoadEnd string
	CPUs                                            int
	Startup                                         []namedStats // hyperfine, whole run of `W /bin/true`
	Launch                                          launchResult
	Readiness                                       readinessResult
	CPUWait                                         cpuWaitResult
	Signals                                         signalsResult
	Storm                                           stormResult
	Memory                                          memoryResult
	Packages                                        packagesResult
	Reap                                            reapResult
	Sizes                                           []namedSize
	GoBench                                         string
}

type namedSize struct {
	Name  string
	Bytes int64
}

func writeReport(path string) error {
	r := run{
		Date:   time.Now().UTC().Format("2006-01-02 15:04 MST"),
		CPUs:   runtime.NumCPU(),
		CPU:    cpuModel(),
		Kernel: kernel(),
	}
	r.Versions = strings.Join(strings.Fields(strings.ReplaceAll(readOut("versions.txt"), "\n", ";")), " ")
	r.LoadStart = strings.TrimSpace(readOut("load-start.txt"))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.LoadEnd = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	var err error
	if r.Startup, err = hyperfineStats(); err != nil {
		return err
	}
	for name, v := range map[string]any{"launch": &r.Launch, "readiness": &r.Readiness, "cpuwait": &r.CPUWait,
		"signals": &r.Signals, "storm": &r.Storm, "memory": &r.Memory, "packages": &r.Packages, "reap": &r.Reap} {
		if err := loadJSON(name, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	sized := []struct{ name, path string }{{"proxy-await (stripped, static)", p.proxyAwait},
		{"Go floor (static)", p.goFloor}, {"tini", p.tini}, {"dumb-init", p.dumbInit}}
	for _, w := range depFloors() {
		sized = append(sized, struct{ name, path string }{w.Name + " (stripped, static)", w.Prefix[0]})
	}
	for _, f := range sized {
		if st, err := os.Stat(f.path); err == nil {
			r.Sizes = append(r.Sizes, namedSize{f.name, st.Size()})
		}
	}
	r.GoBench = goBenchLines(readOut("gotest.txt"))

	tmpl, err := template.New("results").Funcs(template.FuncMap{
		"ms":  func(us float64) string { return fmt.Sprintf("%.2f ms", us/1e3) },
		"us":  func(us float64) string { return fmt.Sprintf("%.0f µs", us) },
		"mb":  func(kb int64) string { return fmt.Sprintf("%.2f MB", float64(kb)/1000) },
		"mib": func(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) },
		"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"f0":  func(v float64) string { return fmt.Sprintf("%.0f", v) },
		"x": func(v, base float64) string {
			if base == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", v/base)
		},
		"median": func(rows []namedStats, name string) float64 {
			for _, row := range rows {
				if row.Name == name {
					return row.Stats.Median
				}
			}
			return 0
		},
	}).Parse(reportTemplate)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return tmpl.Execute(f, r)
}

func readOut(name string) string {
	b, _ := os.ReadFile(filepath.Join(p.out, name))
	return string(b)
}

// hyperfineStats merges every round's run times by command name, in the
// order hyperfine ran them.
func hyperfineStats() ([]namedStats, error) {
	files, _ := filepath.Glob(filepath.Join(p.out, "hyperfine-*.json"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no hyperfine results in %s", p.out)
	}
	times := map[string][]float64{}
	var order []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var h struct {
			Results []struct {
				Command string    `json:"command"`
				Times   []float64 `json:"times"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, res := range h.Results {
			if !slices.Contains(order, res.Command) {
				order = append(order, res.Command)
			}
			for _, t := range res.Times {
				times[res.Command] = append(times[res.Command], t*1e6)
			}
		}
	}
	var out []namedStats
	for _, name := range order {
		out = append(out, namedStats{name, summariseUS(times[name])})
	}
	return out, nil
}

// goBenchLines keeps the benchmark result lines of `go test -bench`, and
// the "# " lines run.sh writes between two runs.
func goBenchLines(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Benchmark") || strings.HasPrefix(line, "pkg:") || strings.HasPrefix(line, "# ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func kernel() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "?"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
