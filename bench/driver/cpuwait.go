//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// cpuWaitResult is proxy-await's CPU time while polling a proxy that never
// turns ready, over --timeout 10s, and what the polling costs the proxy.
type cpuWaitResult struct {
	Rows []cpuWaitRow `json:"rows"`
}

type cpuWaitRow struct {
	Name        string  `json:"name"`
	WaitSeconds float64 `json:"wait_s"`
	CPUms       float64 `json:"cpu_ms"`        // proxy-await, user+system, whole run
	CorePercent float64 `json:"core_percent"`  // CPUms over the wall time, % of one core
	ProxyCPUms  float64 `json:"proxy_cpu_ms"`  // the fake proxy answering the probes
	Probes      int     `json:"probes"`        // readiness requests the proxy received
	ExitCode    int     `json:"exit_code"`     // 69 expected
	PeakRSSkB   int64   `json:"peak_rss_kb"`   // VmHWM near the end of the wait
	SteadyRSSkB int64   `json:"steady_rss_kb"` // VmRSS near the end of the wait
	WallSeconds float64 `json:"wall_s"`
}

const cpuWaitFor = 10 * time.Second

func cpuWait() (any, error) {
	dir, err := os.MkdirTemp(p.out, "cpuwait")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var res cpuWaitResult
	for _, b := range proxyAwaits() {
		for _, v := range []struct {
			name  string
			flags []string
		}{
			{"default (--backoff 20ms)", nil},
			{"--backoff 5ms", []string{"--backoff", "5ms"}},
		} {
			row, err := cpuWaitOnce(dir, b.Path, v.flags)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", b.Name, v.name, err)
			}
			row.Name = b.Name + ", " + v.name
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

func cpuWaitOnce(dir, bin string, flags []string) (cpuWaitRow, error) {
	var row cpuWaitRow
	f, err := startFake(dir, "never")
	if err != nil {
		return row, err
	}
	defer f.stop()
	proxyBefore, err := cpuNS(f.cmd.Process.Pid)
	if err != nil {
		return row, err
	}
	args := append([]string{"-q", "-p", f.port, "--timeout", cpuWaitFor.String()}, flags...)
	cmd := exec.Command(bin, append(append(args, "--"), "/bin/true")...)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return row, err
	}
	time.Sleep(cpuWaitFor - 500*time.Millisecond)
	m, _ := memOf(cmd.Process.Pid)
	row.PeakRSSkB, row.SteadyRSSkB = m.PeakKB, m.RSSKB
	err = cmd.Wait()
	row.WallSeconds = time.Since(began).Seconds()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return row, err
	}
	row.ExitCode = cmd.ProcessState.ExitCode()
	proxyAfter, err := cpuNS(f.cmd.Process.Pid)
	if err != nil {
		return row, err
	}
	row.WaitSeconds = cpuWaitFor.Seconds()
	row.CPUms = float64(rusageCPU(cmd.ProcessState).Microseconds()) / 1e3
	row.CorePercent = row.CPUms / 1e3 / row.WallSeconds * 100
	row.ProxyCPUms = float64(proxyAfter-proxyBefore) / 1e6
	row.Probes, err = countProbes(f.log)
	return row, err
}

func countProbes(path string) (int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	n := 0
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"path":"/ready"`) {
			n++
		}
	}
	return n, sc.Err()
}
