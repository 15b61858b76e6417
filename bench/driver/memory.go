//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memoryResult is each wrapper's resident memory while it supervises an
// idle child, the median of memoryRuns starts, each alone: warm, with the
// whole binary in the page cache, as after a start that read it ahead; and
// cold, from a copy on a device without read-ahead (run.sh's -cold
// directory) evicted before each start, so that only the pages the start
// touched are resident.
type memoryResult struct {
	Runs        int         `json:"runs"`
	Rows        []memoryRow `json:"rows"`
	ColdSkipped string      `json:"cold_skipped,omitempty"` // why there are no cold figures
}

type memoryRow struct {
	Name string `json:"name"`
	Warm mem    `json:"warm"`
	Cold *mem   `json:"cold,omitempty"`
}

const memoryRuns = 5

// settle is how long a wrapper supervises its child before it is measured:
// the readiness wait and the child's start are over.
const settle = 500 * time.Millisecond

// memoryWrapper is a row: how to start it, and whether it waits for a
// proxy that turns ready after 50 ms.
type memoryWrapper struct {
	wrapper
	awaits bool
}

func memory() (any, error) {
	ws := []memoryWrapper{
		{wrapper: wrapper{"proxy-await, no readiness wait (--proxy none)", []string{p.proxyAwait, "-q", "--proxy", "none", "--"}}},
		{wrapper: wrapper{"proxy-await, after a readiness wait (a proxy ready 50 ms after its start)", []string{p.proxyAwait, "-q", "-p", "PORT", "--"}}, awaits: true},
		{wrapper: goFloor()},
		{wrapper: wrapper{"tini", []string{p.tini, "--"}}},
		{wrapper: wrapper{"dumb-init", []string{p.dumbInit}}},
	}
	for _, w := range depFloors() {
		ws = append(ws, memoryWrapper{wrapper: w, awaits: true})
	}
	res := memoryResult{Runs: memoryRuns}
	if p.cold == "" {
		res.ColdSkipped = "run.sh could not set up a loop device without read-ahead (it needs root, losetup and mkfs.ext4)"
	}
	for _, w := range ws {
		row := memoryRow{Name: w.Name}
		var err error
		if row.Warm, err = medianMem(w, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
		if p.cold != "" {
			cold, err := medianMem(w, p.cold)
			if err != nil {
				return nil, fmt.Errorf("%s, cold: %w", w.Name, err)
			}
			row.Cold = &cold
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// medianMem starts w memoryRuns times, from its own binary kept in the page
// cache, or, with coldDir, from the copy there evicted first, and returns
// the median of each figure.
func medianMem(w memoryWrapper, coldDir string) (mem, error) {
	bin := w.Prefix[0]
	if coldDir != "" {
		bin = filepath.Join(coldDir, filepath.Base(bin))
	}
	var ms []mem
	for range memoryRuns {
		if coldDir != "" {
			if err := evict(bin); err != nil {
				return mem{}, err
			}
		} else if err := readWhole(bin); err != nil {
			return mem{}, err
		}
		m, err := measureOnce(w, bin)
		if err != nil {
			return mem{}, err
		}
		ms = append(ms, m)
	}
	med := func(field func(mem) int64) int64 {
		vs := make([]int64, len(ms))
		for i, m := range ms {
			vs[i] = field(m)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return mem{
		PeakKB: med(func(m mem) int64 { return m.PeakKB }),
		RSSKB:  med(func(m mem) int64 { return m.RSSKB }),
		AnonKB: med(func(m mem) int64 { return m.AnonKB }),
		FileKB: med(func(m mem) int64 { return m.FileKB }),
	}, nil
}

// measureOnce runs bin as w's wrapper of an idle child, after a readiness
// wait if w awaits one, and reads its memory once it has settled.
func measureOnce(w memoryWrapper, bin string) (mem, error) {
	prefix := append([]string{bin}, w.Prefix[1:]...)
	if w.awaits {
		f, err := startFake(p.out, "50ms")
		if err != nil {
			return mem{}, err
		}
		defer f.stop()
		prefix[slices.Index(prefix, "PORT")] = f.port
	}
	s, err := startSupervised(wrapper{w.Name, prefix})
	if err != nil {
		return mem{}, err
	}
	time.Sleep(settle)
	m, err := memOf(s.cmd.Process.Pid)
	if _, serr := s.stop(); err == nil {
		err = serr
	}
	return m, err
}

// readWhole reads path into the page cache, as a start on a device with
// read-ahead leaves it.
func readWhole(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// evict drops path's pages from the page cache, and checks that none is
// left: the cold figures count only what a start reads itself.
func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("evicting %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(data)
	vec := make([]byte, (len(data)+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys has no Mincore.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)),
		uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return fmt.Errorf("mincore %s: %w", path, errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	if resident > 0 {
		return fmt.Errorf("%s: %d pages still in the page cache after eviction", path, resident)
	}
	return nil
}
