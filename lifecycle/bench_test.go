package lifecycle_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// proxyLostBenchTime is how long BenchmarkProxyLostWatch measures each
// run: $PROXY_LOST_BENCH_TIME, 10s by default.
func proxyLostBenchTime(b *testing.B) time.Duration {
	d := 10 * time.Second
	if v := os.Getenv("PROXY_LOST_BENCH_TIME"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// What --proxy-lost costs while the proxy is healthy: proxy-await, a
// process of its own, supervises `sleep` after a wait for a stand-in proxy
// that is ready at once, without the flag and with it. From a second after
// the command started, for PROXY_LOST_BENCH_TIME, it reads proxy-await's
// CPU time from /proc (its threads' schedstat, in nanoseconds): cpu-µs/s is
// that time per second of supervision, probes/s the readiness probes the
// proxy answered meanwhile, anon-KB and file-KB proxy-await's resident
// memory at the end of it (its own, and its binary's pages, shared). cpu-ms/op
// is the whole run's CPU time, start and wait included (from wait4). The
// binary is the test binary, larger than a release build.
func BenchmarkProxyLostWatch(b *testing.B) {
	d := proxyLostBenchTime(b)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"without", nil},
		{"with --proxy-lost 10s", []string{"--proxy-lost", "10s"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fp := testutil.StartFakeProxy(b, "-stay-up")
			var steady, whole, window time.Duration
			var mem proctree.Memory
			probes := 0
			for b.Loop() {
				args := append(append([]string{"--ready-url", fp.URL("/ready")}, tc.flags...),
					"--", "sleep", strconv.FormatFloat((d+2*time.Second).Seconds(), 'f', -1, 64))
				cmd := exec.Command(proxyAwaitBin, args...)
				cmd.Env = cleanEnv()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				testutil.Eventually(b, func() bool { return len(testutil.Children(cmd.Process.Pid)) > 0 },
					"proxy-await never started its command")
				time.Sleep(time.Second)
				before, began, answered := cpuOf(b, cmd.Process.Pid), time.Now(), fp.Count("GET", "/ready")
				time.Sleep(d)
				steady += cpuOf(b, cmd.Process.Pid) - before
				window += time.Since(began)
				if st, ok := proctree.ReadStatus(cmd.Process.Pid); ok {
					mem.AnonKB, mem.FileKB = max(mem.AnonKB, st.Memory.AnonKB), max(mem.FileKB, st.Memory.FileKB)
				}
				probes += fp.Count("GET", "/ready") - answered
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				whole += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(steady.Nanoseconds())/1e3/window.Seconds(), "cpu-µs/s")
			b.ReportMetric(float64(probes)/window.Seconds(), "probes/s")
			b.ReportMetric(float64(whole.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(mem.AnonKB), "anon-KB")
			b.ReportMetric(float64(mem.FileKB), "file-KB")
		})
	}
}

func cpuOf(b *testing.B, pid int) time.Duration {
	cpu, err := proctree.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	return cpu
}
