// Command benchchild plays the commands that the benchmarks run behind a
// wrapper:
//
//	benchchild sigrecv      print "ready", then a nanosecond timestamp line for
//	                        every SIGUSR1 received; exit 0 on SIGTERM
//	benchchild orphans N    leave N processes orphaned to the wrapper, make
//	                        them all exit at once, and print how long it took
//	                        until every one of them was reaped (JSON)
//	benchchild spawner      (used by orphans) start N processes blocked on
//	                        stdin, print their PIDs, exit without waiting
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: benchchild sigrecv | orphans N | spawner N"))
	}
	var err error
	switch os.Args[1] {
	case "sigrecv":
		err = sigrecv()
	case "orphans":
		err = orphans(os.Args[2:])
	case "spawner":
		err = spawner(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchchild:", err)
	os.Exit(1)
}

// sigrecv stamps every SIGUSR1 the moment its goroutine sees it.
func sigrecv() error {
	c := make(chan os.Signal, 1024)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGTERM)
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
		return err
	}
	buf := make([]byte, 0, 24)
	for s := range c {
		now := time.Now().UnixNano()
		if s == syscall.SIGTERM {
			return nil
		}
		buf = strconv.AppendInt(buf[:0], now, 10)
		buf = append(buf, '\n')
		if _, err := os.Stdout.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// orphanResult is what orphans prints.
type orphanResult struct {
	N       int     `json:"n"`
	SpawnMS float64 `json:"spawn_ms"`
	ReapMS  float64 `json:"reap_ms"`
	PerSec  float64 `json:"per_sec"`
}

// orphans has a spawner start N processes that block reading a pipe; the
// spawner exits, so they are reparented to the wrapper (PID 1 or subreaper).
// Closing the pipe's write end makes all of them exit at once; a process
// stays visible to kill(pid, 0) until it has been reaped.
func orphans(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: orphans N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 20000 {
		return fmt.Errorf("bad N %q", args[0])
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	began := time.Now()
	sp := exec.Command(self, "spawner", args[0])
	sp.Stdin = r
	sp.Stderr = os.Stderr
	out, err := sp.Output()
	r.Close()
	if err != nil {
		return fmt.Errorf("spawner: %w", err)
	}
	spawned := time.Since(began)
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("spawner printed %q", f)
		}
		pids = append(pids, pid)
	}
	if len(pids) != n {
		return fmt.Errorf("spawner started %d processes, want %d", len(pids), n)
	}

	start := time.Now()
	w.Close()
	deadline := start.Add(60 * time.Second)
	for len(pids) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d orphans still not reaped after 60s", len(pids))
		}
		left := pids[:0]
		for _, pid := range pids {
			if syscall.Kill(pid, 0) != syscall.ESRCH {
				left = append(left, pid)
			}
		}
		pids = left
		if len(pids) > 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	reap := time.Since(start)
	return json.NewEncoder(os.Stdout).Encode(orphanResult{
		N:       n,
		SpawnMS: ms(spawned),
		ReapMS:  ms(reap),
		PerSec:  float64(n) / reap.Seconds(),
	})
}

// spawner starts N copies of cat reading its own stdin (the pipe), prints
// their PIDs and exits without waiting for them.
func spawner(args []string) error {
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	attr := &os.ProcAttr{Files: []*os.File{os.Stdin, devnull, os.Stderr}}
	for range n {
		p, err := os.StartProcess("/bin/cat", []string{"cat"}, attr)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, p.Pid)
		p.Release()
	}
	return out.Flush()
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
