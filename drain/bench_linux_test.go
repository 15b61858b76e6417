package drain

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

// BenchmarkWatch measures what the watch costs during a drain and how late it
// says quiet: a child holds N connections open and sends one request on one
// of them (in turn) every 100 ms for DRAIN_BENCH_TIME less the quiet period
// (10s for `make bench`; 2s by default), then stops. The load runs in the
// child, so this process's CPU time is the watch's. It reports the CPU used
// as a share of one core over the whole drain, and how long after the last
// request's quiet period ended the watch said quiet.
//
//	DRAIN_BENCH_TIME=10s go test -run x -bench Watch ./drain/
func BenchmarkWatch(b *testing.B) {
	total := benchTime(b)
	const quiet = time.Second
	if total <= quiet {
		b.Fatalf("DRAIN_BENCH_TIME=%s: the drain must last longer than the quiet period (%s)", total, quiet)
	}
	for _, n := range []int{10, 1000, 10000} {
		b.Run(strconv.Itoa(n)+"conns", func(b *testing.B) {
			for range b.N {
				cpu, late := drainOnce(b, n, quiet, total-quiet)
				b.ReportMetric(100*cpu.Seconds()/total.Seconds(), "%cpu")
				b.ReportMetric(float64(late.Microseconds())/1000, "ms-late")
			}
		})
	}
}

// benchTime is DRAIN_BENCH_TIME, 2s by default.
func benchTime(b *testing.B) time.Duration {
	v := os.Getenv("DRAIN_BENCH_TIME")
	if v == "" {
		return 2 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("DRAIN_BENCH_TIME=%q: %v", v, err)
	}
	return d
}

// BenchmarkWatchChurn measures what the watch costs during a hold while
// another port of the network namespace takes as many short connections a
// second as the machine can make (with hostNetwork, the node's other
// servers), beside the same hold without them, for DRAIN_BENCH_TIME: a
// child serves 10 idle connections on the watched port, and other processes
// connect to another port and close at once (with a reset, so that no port
// waits in TIME_WAIT), each connection two sockets freed and two destroy
// reports. The load runs in other processes, so this process's CPU time is
// the watch's. "churn-unfiltered" is the baseline the kernel filter is
// measured against: the watch follows --drain-ports of the watched port and
// tooManyPorts others, more than a classic BPF program can hold, so the
// kernel passes it every report, as before the filter, and it sorts them
// itself. It reports the CPU used as a share of one core, the connections a
// second, and the reports that reached the watch, counted in another
// process by a feed watching the same ports.
//
//	DRAIN_BENCH_TIME=10s go test -run x -bench WatchChurn ./drain/
func BenchmarkWatchChurn(b *testing.B) {
	total := benchTime(b)
	for _, tc := range []struct {
		name              string
		churn, unfiltered bool
	}{{"idle", false, false}, {"churn", true, false}, {"churn-unfiltered", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				cpu, wall, conns, reports := holdOnce(b, tc.churn, tc.unfiltered, total)
				b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
				b.ReportMetric(float64(conns)/wall.Seconds(), "conn/s")
				b.ReportMetric(float64(reports), "reports")
			}
		})
	}
}

// BenchmarkLearn measures what the watch costs before the stop signal,
// while it learns how far apart new connections come, for
// DRAIN_BENCH_TIME: with its listener idle (a look at the listening sockets
// a second), and while the watched port itself takes as many short
// connections a second as the machine can make (one report from the
// kernel each, read and parsed). The load runs in other processes, so this
// process's CPU time is the watch's. It reports the CPU used as a share of
// one core, the connections a second, and the CPU per connection.
//
//	DRAIN_BENCH_TIME=10s go test -run x -bench Learn ./drain/
func BenchmarkLearn(b *testing.B) {
	total := benchTime(b)
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "busy"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				server, _, serverOut := startLoad(b, "close-each")
				addr, ok := strings.CutPrefix(serverOut(), "listening ")
				if !ok {
					b.Fatal("the server did not say where it listens")
				}
				w := Learn(Options{Root: server.Process.Pid, Quiet: time.Second, TermDelay: time.Minute, Logger: slog.New(slog.DiscardHandler)})
				before, began := cpuTime(), time.Now()
				conns := 0
				if busy {
					_, _, churnOut := startLoad(b, "churn", addr, total.String())
					if _, err := fmt.Sscanf(churnOut(), "connections %d", &conns); err != nil {
						b.Fatal(err)
					}
				} else {
					time.Sleep(total)
				}
				cpu, wall := cpuTime()-before, time.Since(began)
				w.Stop()
				b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
				if busy {
					b.ReportMetric(float64(conns)/wall.Seconds(), "conn/s")
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(conns), "ns/conn")
				}
			}
		})
	}
}

// holdOnce holds for total, with churn on another port if asked, and
// returns the watch's CPU time, the time it was measured over, the other
// port's connections and the reports that reached the watch.
func holdOnce(b *testing.B, churn, unfiltered bool, total time.Duration) (cpu, wall time.Duration, conns int, reports uint64) {
	server, _, serverOut := startLoad(b, "drain-serve", "10")
	addr, ok := strings.CutPrefix(serverOut(), "listening ")
	if !ok {
		b.Fatal("the server did not say where it listens")
	}
	if _, _, clientsOut := startLoad(b, "drain-clients", addr, "10", "100ms", "0s"); clientsOut() != "ready" {
		b.Fatal("the clients are not ready")
	}
	var other string
	if churn {
		_, _, otherOut := startLoad(b, "close-each")
		if other, ok = strings.CutPrefix(otherOut(), "listening "); !ok {
			b.Fatal("the other server did not say where it listens")
		}
	}

	counterArgs := []string{strconv.Itoa(int(port(b, addr)))}
	if unfiltered {
		counterArgs = append(counterArgs, "unfiltered")
	}
	_, counter, counterOut := startLoad(b, "count-reports", counterArgs...)
	if counterOut() != "ready" {
		b.Fatal("the report counter is not ready")
	}

	armed := make(chan struct{})
	o := Options{Root: server.Process.Pid, Quiet: time.Hour, Logger: slog.New(onEvent{"drain_started", armed})}
	if unfiltered {
		o.Ports = withTooManyPorts(port(b, addr))
	}
	w := Start(o)
	defer w.Stop()
	<-armed
	before, began := cpuTime(), time.Now()
	if churn {
		_, _, churnOut := startLoad(b, "churn", other, total.String())
		if _, err := fmt.Sscanf(churnOut(), "connections %d", &conns); err != nil {
			b.Fatal(err)
		}
	} else {
		time.Sleep(total)
	}
	cpu, wall = cpuTime()-before, time.Since(began)
	fmt.Fprintln(counter, "count")
	if _, err := fmt.Sscanf(counterOut(), "reports %d", &reports); err != nil {
		b.Fatal(err)
	}
	return cpu, wall, conns, reports
}

func init() {
	// count-reports PORT [unfiltered]: subscribe to the destroy reports
	// with the program the watch attaches when it follows a listener on
	// PORT (with "unfiltered", PORT and tooManyPorts others, so that every
	// report passes), print "ready", and once a
	// line comes on stdin print "reports N": the reports that reached it,
	// as many as reach the watch. A note that the kernel dropped some is
	// no report.
	testchild.Add("count-reports", func(args []string) {
		p, err := strconv.ParseUint(args[0], 10, 16)
		if err != nil {
			panic(err)
		}
		ports := []uint16{uint16(p)}
		if len(args) > 1 && args[1] == "unfiltered" {
			ports = withTooManyPorts(uint16(p))
		}
		feed, err := newDestroyFeed()
		if err != nil {
			panic(err)
		}
		if err := feed.watch(ports); err != nil {
			panic(err)
		}
		var n atomic.Uint64
		go func() {
			for e := range feed.c {
				if !e.lost {
					n.Add(1)
				}
			}
		}()
		fmt.Println("ready")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Println("reports", n.Load())
	})
}

func drainOnce(b *testing.B, n int, quiet, traffic time.Duration) (cpu, late time.Duration) {
	server, _, serverOut := startLoad(b, "drain-serve", strconv.Itoa(n))
	addr, ok := strings.CutPrefix(serverOut(), "listening ")
	if !ok {
		b.Fatal("the server did not say where it listens")
	}
	_, clients, clientsOut := startLoad(b, "drain-clients", addr, strconv.Itoa(n), "100ms", traffic.String())
	if got := clientsOut(); got != "ready" {
		b.Fatalf("the clients said %q", got)
	}

	armed := make(chan struct{})
	before := cpuTime()
	w := Start(Options{Root: server.Process.Pid, Quiet: quiet, Logger: slog.New(onEvent{"drain_started", armed})})
	defer w.Stop()
	<-armed
	fmt.Fprintln(clients, "go")
	var ns int64
	if _, err := fmt.Sscanf(clientsOut(), "last %d", &ns); err != nil {
		b.Fatal(err)
	}
	select {
	case <-w.Quiet():
	case <-time.After(traffic + time.Minute):
		b.Fatal("the watch never said quiet")
	}
	quietAt := time.Now()
	cpu = cpuTime() - before
	return cpu, quietAt.Sub(time.Unix(0, ns).Add(quiet))
}

// startLoad runs a testchild scenario until the test or benchmark ends, and
// returns it with a function reading its next line.
func startLoad(b testing.TB, scenario string, args ...string) (*exec.Cmd, io.Writer, func() string) {
	cmd := testchild.Command(scenario, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	out := bufio.NewScanner(outR)
	return cmd, in, func() string {
		if !out.Scan() {
			b.Fatalf("%s ended: %v", scenario, out.Err())
		}
		return out.Text()
	}
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// onEvent is a log handler that closes c at the first record of event.
type onEvent struct {
	event string
	c     chan struct{}
}

func (h onEvent) Enabled(context.Context, slog.Level) bool { return true }
func (h onEvent) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h onEvent) WithGroup(string) slog.Handler            { return h }
func (h onEvent) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "event" && a.Value.String() == h.event {
			select {
			case <-h.c:
			default:
				close(h.c)
			}
			return false
		}
		return true
	})
	return nil
}

// tooManyPorts is how many ports a classic BPF program cannot test one by
// one: portProgram keeps every report for as many.
const tooManyPorts = unix.BPF_MAXINSNS / 2

// withTooManyPorts is p and the ports from 1 to tooManyPorts, which the
// benchmark neither listens on nor connects to (p is an ephemeral port,
// above them).
func withTooManyPorts(p uint16) []uint16 {
	ports := []uint16{p}
	for i := range uint16(tooManyPorts) {
		ports = append(ports, 1+i)
	}
	return ports
}
