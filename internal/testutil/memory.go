package testutil

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// PeakHeap runs f and gives the most heap its objects took meanwhile,
// above what they took before, garbage not yet collected included, as
// sampled from the runtime's metrics every 200 µs: what a process's
// memory follows. It measures, for the benchmarks that report it; it
// synchronises nothing.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// Allocated is what f allocates, garbage included: the bytes a test holds
// to grow no faster than its input.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
