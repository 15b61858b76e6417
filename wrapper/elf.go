package wrapper

import (
	"encoding/binary"
	"io"
	"strconv"
	"strings"
)

// The few facts of the ELF format that the start errors read (the System V
// ABI's "ELF Header" and "Program Header"), under debug/elf's names. debug/elf
// itself is not imported: linking it links in, and initialises at every
// start, what it reads sections with (DWARF, zstd and zlib), which no start
// error needs.
const (
	elfMagic = "\x7fELF"

	eiClass   = 4 // e_ident's indices
	eiData    = 5
	eiVersion = 6
	eiNident  = 16

	elfClass32  = 1
	elfClass64  = 2
	elfData2LSB = 1
	elfData2MSB = 2
	evCurrent   = 1

	ptInterp = 3

	emX86_64  elfMachine = 62
	emAARCH64 elfMachine = 183
	em386     elfMachine = 3
	emARM     elfMachine = 40
	emS390    elfMachine = 22
	emRISCV   elfMachine = 243
	emPPC64   elfMachine = 21
)

// elfMachine is an ELF header's e_machine.
type elfMachine uint16

// elfHeaders is what the start errors read of an ELF file: its machine and
// byte order, and its PT_INTERP program header, which names its dynamic
// loader (nil when it has none).
type elfHeaders struct {
	machine elfMachine
	order   binary.ByteOrder
	interp  *elfProg
}

// elfProg is what is read of a program header: where its segment is in the
// file.
type elfProg struct {
	off, filesz uint64
}

// readELF reads f's file and program headers, and checks them as
// elf.NewFile does; it says false for a file that is not ELF, or one that
// elf.NewFile would refuse for its file or program headers. elf.NewFile
// would read the section headers too, which the kernel never looks at.
func readELF(f io.ReaderAt) (*elfHeaders, bool) {
	var ident [eiNident]byte
	if _, err := f.ReadAt(ident[:], 0); err != nil || string(ident[:len(elfMagic)]) != elfMagic {
		return nil, false
	}
	bin := &elfHeaders{}
	switch ident[eiData] {
	case elfData2LSB:
		bin.order = binary.LittleEndian
	case elfData2MSB:
		bin.order = binary.BigEndian
	default:
		return nil, false
	}
	if ident[eiVersion] != evCurrent {
		return nil, false
	}
	// The header's fields past e_ident, at their offsets in either class;
	// the 32-bit header is 52 bytes, the 64-bit one 64.
	var version uint32
	var phoff, shoff uint64
	var phentsize, phnum, minPhentsize, shnum, shstrndx int
	o := bin.order
	switch class := ident[eiClass]; class {
	case elfClass32:
		var h [52]byte
		if !readFull(f, h[:], 0) {
			return nil, false
		}
		bin.machine, version = elfMachine(o.Uint16(h[18:])), o.Uint32(h[20:])
		phoff, shoff = uint64(o.Uint32(h[28:])), uint64(o.Uint32(h[32:]))
		phentsize, phnum, minPhentsize = int(o.Uint16(h[42:])), int(o.Uint16(h[44:])), 32
		shnum, shstrndx = int(o.Uint16(h[48:])), int(o.Uint16(h[50:]))
	case elfClass64:
		var h [64]byte
		if !readFull(f, h[:], 0) {
			return nil, false
		}
		bin.machine, version = elfMachine(o.Uint16(h[18:])), o.Uint32(h[20:])
		phoff, shoff = o.Uint64(h[32:]), o.Uint64(h[40:])
		phentsize, phnum, minPhentsize = int(o.Uint16(h[54:])), int(o.Uint16(h[56:])), 56
		shnum, shstrndx = int(o.Uint16(h[60:])), int(o.Uint16(h[62:]))
	default:
		return nil, false
	}
	switch {
	case version != evCurrent,
		int64(phoff) < 0, int64(shoff) < 0,
		shoff == 0 && shnum != 0,
		shnum > 0 && shstrndx >= shnum,
		phnum > 0 && phentsize < minPhentsize:
		return nil, false
	}
	for i := range phnum {
		p, typ, ok := readProg(f, o, ident[eiClass], int64(phoff)+int64(i*phentsize))
		if !ok {
			return nil, false
		}
		if typ == ptInterp && bin.interp == nil {
			bin.interp = p
		}
	}
	return bin, true
}

// readProg reads the program header at off, and its type.
func readProg(f io.ReaderAt, o binary.ByteOrder, class byte, off int64) (*elfProg, uint32, bool) {
	var p elfProg
	var typ uint32
	if class == elfClass32 {
		var h [32]byte
		if !readFull(f, h[:], off) {
			return nil, 0, false
		}
		typ, p.off, p.filesz = o.Uint32(h[0:]), uint64(o.Uint32(h[4:])), uint64(o.Uint32(h[16:]))
	} else {
		var h [56]byte
		if !readFull(f, h[:], off) {
			return nil, 0, false
		}
		typ, p.off, p.filesz = o.Uint32(h[0:]), o.Uint64(h[8:]), o.Uint64(h[32:])
	}
	if int64(p.off) < 0 || int64(p.filesz) < 0 {
		return nil, 0, false
	}
	return &p, typ, true
}

// readFull fills b from off: a ReaderAt may say io.EOF with all of b read,
// at the end of the file.
func readFull(f io.ReaderAt, b []byte, off int64) bool {
	if off < 0 {
		return false
	}
	n, _ := f.ReadAt(b, off)
	return n == len(b)
}

// goarch names a binary's machine as Go and image platforms do ("arm64"
// for EM_AARCH64), and any other as debug/elf does ("sparcv9" for
// EM_SPARCV9).
func goarch(bin *elfHeaders) string {
	switch bin.machine {
	case emX86_64:
		return "amd64"
	case emAARCH64:
		return "arm64"
	case em386:
		return "386"
	case emARM:
		return "arm"
	case emS390:
		return "s390x"
	case emRISCV:
		return "riscv64"
	case emPPC64:
		if bin.order == binary.LittleEndian {
			return "ppc64le"
		}
		return "ppc64"
	}
	return strings.ToLower(strings.TrimPrefix(bin.machine.String(), "EM_"))
}

// String is the machine's name as debug/elf's elf.Machine.String gives it:
// the e_machine name, or, for a number without one, the last name in
// elfMachines with a smaller number, plus the difference.
func (m elfMachine) String() string {
	for _, n := range elfMachines {
		if n.m == m {
			return n.name
		}
	}
	for i := len(elfMachines) - 1; i >= 0; i-- {
		if n := elfMachines[i]; n.m < m {
			return n.name + "+" + strconv.FormatUint(uint64(m-n.m), 10)
		}
	}
	return strconv.FormatUint(uint64(m), 10)
}
