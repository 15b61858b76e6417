//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readinessResult is the time from the proxy turning ready (its own log
// line) to the command's first act, for the default --backoff and for 5ms.
type readinessResult struct {
	Rows []readinessRow `json:"rows"`
}

type readinessRow struct {
	Name         string  `json:"name"`
	Stats        stats   `json:"stats"`
	ProbesPerSec float64 `json:"probes_per_sec"` // while not ready, in steady state
}

const readinessRuns = 50

func readiness() (any, error) {
	dir, err := os.MkdirTemp(p.out, "readiness")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	type variant struct {
		name, bin string
		flags     []string
	}
	var variants []variant
	for _, b := range proxyAwaits() {
		variants = append(variants,
			variant{b.Name + ", default (--backoff 20ms)", b.Path, nil},
			variant{b.Name + ", --backoff 5ms", b.Path, []string{"--backoff", "5ms"}})
	}
	lat := make([][]time.Duration, len(variants))
	rates := make([][]float64, len(variants))
	for range readinessRuns {
		for i, v := range variants {
			d, rate, err := readinessOnce(dir, v.bin, v.flags)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			lat[i] = append(lat[i], d)
			rates[i] = append(rates[i], rate)
		}
	}
	var res readinessResult
	for i, v := range variants {
		r := summariseUS(rates[i])
		res.Rows = append(res.Rows, readinessRow{Name: v.name, Stats: summarise(lat[i]), ProbesPerSec: r.Median})
	}
	return res, nil
}

// readinessOnce starts proxy-await (bin) against a proxy that is not ready, turns
// the proxy ready after a random 100-200 ms (so that the polling has reached
// its ceiling and the moment falls anywhere in an interval), and returns the
// delay until the command ran, and the probe rate before ready.
func readinessOnce(dir, bin string, flags []string) (time.Duration, float64, error) {
	f, err := startFake(dir, "never")
	if err != nil {
		return 0, 0, err
	}
	defer f.stop()
	args := append([]string{"-p", f.port}, flags...)
	cmd := wrapper{Prefix: []string{bin}}.command(append(append(args, "--"), p.stamp)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer cmd.Wait()
	time.Sleep(100*time.Millisecond + rand.N(100*time.Millisecond))
	if err := f.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return 0, 0, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return 0, 0, fmt.Errorf("no stamp from the command: %v", err)
	}
	ran, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	ready, rate, err := readyTime(f.log)
	if err != nil {
		return 0, 0, err
	}
	return time.Duration(ran - ready.UnixNano()), rate, nil
}

// readyTime finds the "turned ready" line in a fakeproxy log, and the rate
// of readiness probes before it, from 60 ms after the first probe (once the
// interval has grown to its ceiling).
func readyTime(path string) (time.Time, float64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return time.Time{}, 0, err
	}
	defer fh.Close()
	var probes []time.Time
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var e struct {
			Time time.Time `json:"time"`
			Path string    `json:"path"`
			Note string    `json:"note"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return time.Time{}, 0, err
		}
		if e.Note == "turned ready" {
			return e.Time, probeRate(probes, e.Time), nil
		}
		if e.Path == "/ready" {
			probes = append(probes, e.Time)
		}
	}
	return time.Time{}, 0, fmt.Errorf("no \"turned ready\" line in %s", path)
}

// probeRate is probes per second between 60 ms after the first one and end.
func probeRate(probes []time.Time, end time.Time) float64 {
	if len(probes) == 0 {
		return 0
	}
	from := probes[0].Add(60 * time.Millisecond)
	if !end.After(from) {
		return 0
	}
	n := 0
	for _, t := range probes {
		if !t.Before(from) && t.Before(end) {
			n++
		}
	}
	return float64(n) / end.Sub(from).Seconds()
}
