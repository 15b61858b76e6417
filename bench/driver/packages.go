//go:build linux

package main

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// packagesResult is what proxy-await's binary holds, by package, and how
// much of each is resident while it supervises an idle child after a
// readiness wait: read from a build with its symbol table (run.sh's
// -proxy-await-syms, otherwise the same build), whose loaded sections are
// the stripped binary's.
type packagesResult struct {
	Sections []sectionRow `json:"sections"`
	Rows     []packageRow `json:"rows"`       // the largest packages by code and data, and proxy-await's own
	Own      packageRow   `json:"own"`        // proxy-await's own packages together
	Rest     packageRow   `json:"rest"`       // the other packages together
	PeakKB   int64        `json:"peak_kb"`    // VmHWM of the run measured
	Windows  int          `json:"windows"`    // 64 KiB windows of the binary with a page resident
	OfWindow int          `json:"of_windows"` // 64 KiB windows of the binary's loaded sections
}

// sectionRow is one loaded section of the binary: its size and its pages
// resident.
type sectionRow struct {
	Name       string  `json:"name"`
	Bytes      uint64  `json:"bytes"`
	ResidentKB float64 `json:"resident_kb"`
}

// packageRow is one package's symbols: code (.text) and data (the other
// sections that take room in the file), and the resident pages they lie
// in, a page shared by several packages split by the bytes each has in it.
// The function table (.gopclntab) and the functions' stack maps
// (go:func.*) are the runtime's, not the packages'; they grow with the
// code.
type packageRow struct {
	Package    string  `json:"package"`
	Code       uint64  `json:"code"`
	Data       uint64  `json:"data"`
	ResidentKB float64 `json:"resident_kb"`
}

// packageRows is how many of the largest packages have a row of their own,
// besides proxy-await's, which all have one.
const packageRows = 40

// module is the path of proxy-await's own packages.
const module = "github.com/proxy-await/proxy-await"

// The pages of memory, and the windows that the kernel maps around a page
// fault on a file (fault-around), which the memory rows' file pages count.
const (
	page   = 4096
	pageKB = page / 1024 // in the kB of /proc
	window = 64 << 10
)

func packages() (any, error) {
	if p.proxyAwaitSyms == "" {
		return nil, fmt.Errorf("no -proxy-await-syms")
	}
	f, err := elf.Open(p.proxyAwaitSyms)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	inFile := func(s *elf.Section) bool { return s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS }
	byPkg := map[string]*packageRow{}
	type span struct {
		start, end uint64
		pkg        string
	}
	var spans []span
	for _, s := range syms {
		if s.Size == 0 || int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		sec := f.Sections[s.Section]
		if !inFile(sec) {
			continue
		}
		pkg := packageOf(s.Name)
		row := byPkg[pkg]
		if row == nil {
			row = &packageRow{Package: pkg}
			byPkg[pkg] = row
		}
		if sec.Name == ".text" {
			row.Code += s.Size
		} else {
			row.Data += s.Size
		}
		spans = append(spans, span{s.Value, s.Value + s.Size, pkg})
	}

	pages, peak, err := residentPages(p.proxyAwaitSyms)
	if err != nil {
		return nil, err
	}
	res := packagesResult{PeakKB: peak}
	windows := map[uint64]bool{}
	for _, s := range f.Sections {
		if !inFile(s) || s.Addr == 0 {
			continue
		}
		row := sectionRow{Name: s.Name, Bytes: s.Size}
		for w := s.Addr / window; w <= (s.Addr+s.Size-1)/window; w++ {
			windows[w] = false
		}
		for va := s.Addr &^ (page - 1); va < s.Addr+s.Size; va += page {
			if pages[va] {
				row.ResidentKB += pageKB
				windows[va/window] = true
			}
		}
		res.Sections = append(res.Sections, row)
	}
	for _, touched := range windows {
		res.OfWindow++
		if touched {
			res.Windows++
		}
	}
	// Each resident page, split among the packages whose symbols lie in
	// it: first how many bytes of symbols each page holds, then each
	// symbol's share of the pages it lies in.
	overlaps := func(sp span, each func(page, bytes uint64)) {
		for va := sp.start &^ (page - 1); va < sp.end; va += page {
			each(va, min(sp.end, va+page)-max(sp.start, va))
		}
	}
	held := map[uint64]uint64{}
	for _, sp := range spans {
		overlaps(sp, func(va, n uint64) { held[va] += n })
	}
	for _, sp := range spans {
		overlaps(sp, func(va, n uint64) {
			if pages[va] {
				byPkg[sp.pkg].ResidentKB += pageKB * float64(n) / float64(held[va])
			}
		})
	}
	var rows []packageRow
	for _, row := range byPkg {
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b packageRow) int { return cmp.Compare(b.Code+b.Data, a.Code+a.Data) })
	res.Own.Package = "proxy-await's own packages"
	add := func(to *packageRow, row packageRow) {
		to.Code += row.Code
		to.Data += row.Data
		to.ResidentKB += row.ResidentKB
	}
	rest := 0
	for i, row := range rows {
		own := row.Package == module || strings.HasPrefix(row.Package, module+"/")
		if own {
			add(&res.Own, row)
		}
		if i < packageRows || own {
			res.Rows = append(res.Rows, row)
			continue
		}
		add(&res.Rest, row)
		rest++
	}
	res.Rest.Package = fmt.Sprintf("the other %d packages", rest)
	return res, nil
}

// packageOf is the package a Go symbol belongs to; for the linker's own
// symbols (go:func.*, type:*), their kind in parentheses; for the local
// symbols of assembly, which name no package, "(assembly)".
func packageOf(sym string) string {
	if strings.HasPrefix(sym, "go:") || strings.HasPrefix(sym, "type:") {
		if i := strings.IndexAny(sym, ". {(*"); i >= 0 {
			sym = sym[:i]
		}
		return "(" + sym + ")"
	}
	// The path ends at the last slash before any receiver or type
	// argument; the package name at the first dot after it.
	slash := strings.LastIndex(sym, "/")
	if i := strings.IndexAny(sym, "(["); i >= 0 && i < slash {
		slash = strings.LastIndex(sym[:i], "/")
	}
	if dot := strings.Index(sym[slash+1:], "."); dot > 0 && !strings.HasPrefix(sym, "$") {
		return sym[:slash+1+dot]
	}
	return "(assembly)"
}

// residentPages runs bin as proxy-await supervising an idle child after a
// readiness wait (the memory rows' "after a readiness wait"), from the page
// cache, and returns the addresses of its executable's pages resident once
// it has settled, and its VmHWM.
func residentPages(bin string) (map[uint64]bool, int64, error) {
	if err := readWhole(bin); err != nil {
		return nil, 0, err
	}
	fake, err := startFake(p.out, "50ms")
	if err != nil {
		return nil, 0, err
	}
	defer fake.stop()
	s, err := startSupervised(wrapper{"proxy-await", []string{bin, "-q", "-p", fake.port, "--"}})
	if err != nil {
		return nil, 0, err
	}
	defer func() { _, _ = s.stop() }()
	time.Sleep(settle)
	pid := s.cmd.Process.Pid
	m, err := memOf(pid)
	if err != nil {
		return nil, 0, err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, 0, err
	}
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, 0, err
	}
	defer maps.Close()
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, 0, err
	}
	defer pagemap.Close()
	resident := map[uint64]bool{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, 0, fmt.Errorf("%s: %q", maps.Name(), sc.Text())
		}
		// One 64-bit entry a page; bit 63 says it is present.
		entries := make([]byte, (end-start)/page*8)
		if _, err := pagemap.ReadAt(entries, int64(start/page*8)); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", pagemap.Name(), err)
		}
		for i := range (end - start) / page {
			if binary.LittleEndian.Uint64(entries[i*8:])&(1<<63) != 0 {
				resident[start+i*page] = true
			}
		}
	}
	return resident, m.PeakKB, sc.Err()
}
