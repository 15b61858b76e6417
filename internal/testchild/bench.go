package testchild

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Scenarios for the benchmarks (bench/child runs them).
func init() {
	// sigrecv: print "ready", then a nanosecond timestamp line for every
	// SIGUSR1 the moment its goroutine sees it; exit 0 on SIGTERM.
	scenarios["sigrecv"] = func([]string) {
		c := make(chan os.Signal, 1024)
		signal.Notify(c, syscall.SIGUSR1, syscall.SIGTERM)
		fmt.Println("ready")
		buf := make([]byte, 0, 24)
		for s := range c {
			now := time.Now().UnixNano()
			if s == syscall.SIGTERM {
				return
			}
			buf = append(strconv.AppendInt(buf[:0], now, 10), '\n')
			if _, err := os.Stdout.Write(buf); err != nil {
				os.Exit(1)
			}
		}
	}

	// orphans N: have "spawner N" leave N processes orphaned to the wrapper
	// (PID 1 or subreaper), blocked reading a pipe; close the pipe so that
	// all exit at once, and print as JSON how long it took until every one
	// was reaped (a process answers kill(pid, 0) until it is reaped).
	scenarios["orphans"] = func(args []string) {
		n := atoi(args[0])
		r, w, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		began := time.Now()
		sp := Command("spawner", args[0])
		sp.Stdin, sp.Stderr = r, os.Stderr
		out, err := sp.Output()
		r.Close()
		if err != nil {
			panic(err)
		}
		spawned := time.Since(began)
		var pids []int
		for _, f := range strings.Fields(string(out)) {
			pids = append(pids, atoi(f))
		}
		if len(pids) != n {
			panic(fmt.Sprintf("spawner started %d processes, want %d", len(pids), n))
		}
		start := time.Now()
		w.Close()
		for deadline := start.Add(time.Minute); len(pids) > 0; {
			if time.Now().After(deadline) {
				panic(fmt.Sprintf("%d orphans still not reaped after a minute", len(pids)))
			}
			left := pids[:0]
			for _, pid := range pids {
				if syscall.Kill(pid, 0) != syscall.ESRCH {
					left = append(left, pid)
				}
			}
			if pids = left; len(pids) > 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
		reap := time.Since(start)
		_ = json.NewEncoder(os.Stdout).Encode(map[string]float64{
			"n": float64(n), "spawn_ms": milliseconds(spawned), "reap_ms": milliseconds(reap),
			"per_sec": float64(n) / reap.Seconds(),
		})
	}

	// spawner N: start N copies of cat reading our stdin, print their PIDs
	// and exit without waiting for them.
	scenarios["spawner"] = func(args []string) {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			panic(err)
		}
		out := bufio.NewWriter(os.Stdout)
		attr := &os.ProcAttr{Files: []*os.File{os.Stdin, devnull, os.Stderr}}
		for range atoi(args[0]) {
			p, err := os.StartProcess("/bin/cat", []string{"cat"}, attr)
			if err != nil {
				panic(err)
			}
			fmt.Fprintln(out, p.Pid)
			_ = p.Release()
		}
		_ = out.Flush()
	}
}

func milliseconds(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
