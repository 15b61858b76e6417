package readiness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/proxy-await/proxy-await/internal/logging"
)

// readyServer answers every GET as a ready Linkerd proxy does.
func readyServer(b *testing.B, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("ready\n"))
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/ready"
}

// One probe: the CPU cost of every poll while the proxy is not ready (on a
// kept-alive connection), and the round trip that adds to readiness latency
// (on a new connection: a 2xx ends a URL's probes, and its connection).
func BenchmarkProbeReady(b *testing.B) {
	benchmarkProbe(b, http.StatusOK)
}

func BenchmarkProbeNotReady(b *testing.B) {
	benchmarkProbe(b, http.StatusServiceUnavailable)
}

func benchmarkProbe(b *testing.B, status int) {
	p, err := newProber(readyServer(b, status), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer p.close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		err := p.probe(ctx)
		if (err == nil) != (status == http.StatusOK) {
			b.Fatalf("probe: %v", err)
		}
	}
}

// A whole Await against a proxy that is ready at once: client set-up, a new
// connection, one probe, tear-down. This is what a pod whose proxy is
// already up pays at start.
func BenchmarkAwaitAlreadyReady(b *testing.B) {
	url := readyServer(b, http.StatusOK)
	opts := Options{URLs: []string{url}, MaxInterval: 20 * time.Millisecond, ProbeTimeout: time.Second, Logger: logging.Discard()}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Await(ctx, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// One probe of --proxy-lost's watch against a healthy proxy, on the
// connection it keeps: what watching costs every second while the command
// runs. cpu-ns/op is the process's CPU time (user and system) a probe,
// the stand-in server's side included.
func BenchmarkWatchProbeHealthy(b *testing.B) {
	p, err := newProber(readyServer(b, http.StatusOK), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer p.close()
	p.keepReady = true
	ws := &urlWatch{url: "ready", after: time.Minute, log: logging.Discard()}
	ws.start()
	ctx := context.Background()
	b.ReportAllocs()
	before := cpuTime(b)
	for b.Loop() {
		if _, gone := ws.record(time.Now(), p.probe(ctx)); gone || ws.state != healthy {
			b.Fatal("the healthy proxy failed a probe")
		}
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
