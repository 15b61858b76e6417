//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/internal/fakeproxy"
)

// launchResult is how long after the wrapper is started its command begins
// to run: the start-up cost on the critical path, without the exit half that
// hyperfine's totals include.
type launchResult struct {
	Rows []namedStats `json:"rows"`
}

type namedStats struct {
	Name  string `json:"name"`
	Stats stats  `json:"stats"`
}

const launchRounds, launchPerRound = 10, 30

func launch() (any, error) {
	ws := append(inits(), goFloor(), wrapper{Name: "direct (no wrapper)"})
	ds := make([][]time.Duration, len(ws))
	for range launchRounds {
		for i, w := range ws {
			for range launchPerRound {
				d, err := launchOnce(w)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", w.Name, err)
				}
				ds[i] = append(ds[i], d)
			}
		}
	}
	var res launchResult
	for i, w := range ws {
		res.Rows = append(res.Rows, namedStats{w.Name, summarise(ds[i])})
	}
	return res, nil
}

// launchOnce starts w with the stamp as its command and returns the time
// from just before the fork to the stamp's first act.
func launchOnce(w wrapper) (time.Duration, error) {
	cmd := w.command(p.stamp)
	began := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stamp printed %q", out)
	}
	return time.Duration(ns - began.UnixNano()), nil
}

// fake is a running fakeproxy.
type fake struct {
	cmd  *exec.Cmd
	addr string
	port string
	log  string
}

// startFake runs a fakeproxy on a free loopback port that turns ready after
// readyAfter ("never": on SIGUSR1), logging to a new file in dir.
func startFake(dir, readyAfter string) (*fake, error) {
	log, err := os.CreateTemp(dir, "fakeproxy-*.log")
	if err != nil {
		return nil, err
	}
	log.Close()
	cmd := exec.Command(p.fakeproxy, "-addr", "127.0.0.1:0", "-ready-after", readyAfter, "-log", log.Name())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addrs, err := fakeproxy.Listening(stdout)
	if err != nil || addrs["admin"] == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("fakeproxy did not say where it listens: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	addr := addrs["admin"]
	i := strings.LastIndexByte(addr, ':')
	return &fake{cmd: cmd, addr: addr, port: addr[i+1:], log: log.Name()}, nil
}

func (f *fake) stop() {
	_ = f.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = f.cmd.Process.Kill()
		<-done
	}
	os.Remove(f.log)
}
