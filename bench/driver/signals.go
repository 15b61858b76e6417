//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// supervised is a wrapper running the child scenario sigrecv, its stdout read line
// by line.
type supervised struct {
	wrapper
	cmd   *exec.Cmd
	lines chan string
	count atomic.Int64 // timestamp lines read
}

func startSupervised(w wrapper) (*supervised, error) {
	s := &supervised{wrapper: w, lines: make(chan string, 1<<16)}
	s.cmd = w.command(p.child, "sigrecv")
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go s.read(stdout)
	if line, err := s.next(5 * time.Second); err != nil || line != "ready" {
		s.kill()
		return nil, fmt.Errorf("%s: child did not say ready (%q, %v)", w.Name, line, err)
	}
	return s, nil
}

func (s *supervised) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if sc.Text() != "ready" {
			s.count.Add(1)
		}
		select {
		case s.lines <- sc.Text():
		default: // a storm: only the count matters
		}
	}
	close(s.lines)
}

func (s *supervised) next(limit time.Duration) (string, error) {
	select {
	case line, ok := <-s.lines:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-time.After(limit):
		return "", fmt.Errorf("nothing after %s", limit)
	}
}

// stop sends SIGTERM and waits; it returns the wrapper's exit code.
func (s *supervised) stop() (int, error) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
		return s.cmd.ProcessState.ExitCode(), nil
	case <-time.After(5 * time.Second):
		s.kill()
		<-done
		return -1, fmt.Errorf("%s did not exit within 5s of SIGTERM", s.Name)
	}
}

func (s *supervised) kill() {
	_ = s.cmd.Process.Kill()
}

// signalsResult is the delay from kill(wrapper, SIGUSR1) to the child's
// handler seeing it.
type signalsResult struct {
	Rows []namedStats `json:"rows"`
}

const signalRounds, signalsPerRound = 5, 200

func signals() (any, error) {
	var ss []*supervised
	defer func() {
		for _, s := range ss {
			_, _ = s.stop()
		}
	}()
	for _, w := range inits() {
		s, err := startSupervised(w)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	ds := make([][]time.Duration, len(ss))
	for range signalRounds {
		for i, s := range ss {
			for range signalsPerRound {
				sent := time.Now()
				if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGUSR1); err != nil {
					return nil, err
				}
				line, err := s.next(2 * time.Second)
				if err != nil {
					return nil, fmt.Errorf("%s: SIGUSR1 not forwarded: %v", s.Name, err)
				}
				ns, err := strconv.ParseInt(line, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: child printed %q", s.Name, line)
				}
				ds[i] = append(ds[i], time.Duration(ns-sent.UnixNano()))
			}
		}
	}
	var res signalsResult
	for i, s := range ss {
		res.Rows = append(res.Rows, namedStats{s.Name, summarise(ds[i])})
	}
	return res, nil
}

// stormResult is what a flood of SIGUSR1 costs each wrapper.
type stormResult struct {
	Signals int        `json:"signals"`
	Rows    []stormRow `json:"rows"`
}

type stormRow struct {
	Name        string  `json:"name"`
	SendMS      float64 `json:"send_ms"` // time to send them all
	CPUms       float64 `json:"cpu_ms"`  // the wrapper's CPU time for the storm
	CPUusPerSig float64 `json:"cpu_us_per_signal"`
	Delivered   int64   `json:"delivered"` // SIGUSR1 the child saw (the kernel merges pending ones)
	Survived    bool    `json:"survived"`  // alive after the storm
	ExitCode    int     `json:"exit_code"` // after SIGTERM; 0 expected (the child exits 0)
}

const stormSignals = 10000

func storm() (any, error) {
	res := stormResult{Signals: stormSignals}
	for _, w := range inits() {
		row, err := stormOnce(w)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func stormOnce(w wrapper) (stormRow, error) {
	row := stormRow{Name: w.Name}
	s, err := startSupervised(w)
	if err != nil {
		return row, err
	}
	pid := s.cmd.Process.Pid
	before, err := cpuNS(pid)
	if err != nil {
		s.kill()
		return row, err
	}
	began := time.Now()
	for range stormSignals {
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			break // the wrapper died: reported below
		}
	}
	row.SendMS = float64(time.Since(began).Microseconds()) / 1e3
	// Wait until the child has seen the last of the storm.
	last, stable := s.count.Load(), time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if n := s.count.Load(); n != last {
			last, stable = n, time.Now()
		} else if time.Since(stable) > 300*time.Millisecond {
			break
		}
	}
	row.Survived = alive(pid)
	if after, err := cpuNS(pid); err == nil {
		row.CPUms = float64(after-before) / 1e6
		row.CPUusPerSig = float64(after-before) / 1e3 / stormSignals
	}
	row.Delivered = s.count.Load()
	row.ExitCode, err = s.stop()
	return row, err
}
