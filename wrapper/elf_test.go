package wrapper

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readELF reads what elf.NewFile reads of the file and program headers, the
// same: on the system's binaries and libraries, and on headers of the kinds
// they lack (32-bit, big-endian, broken).
func TestReadELFAgreesWithDebugELF(t *testing.T) {
	var files []string
	for _, pattern := range []string{"/bin/*", "/usr/bin/*", "/usr/lib/*/*.so*", "/lib/*/*.so*"} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, found...)
	}
	checked := 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		var magic [len(elf.ELFMAG)]byte
		if _, err := f.ReadAt(magic[:], 0); err == nil && string(magic[:]) == elf.ELFMAG {
			agree(t, path, f)
			checked++
		}
		f.Close()
	}
	require.NotZero(t, checked, "no ELF file found to compare on")

	for name, data := range map[string][]byte{
		"32-bit big-endian, with a loader":    syntheticELF(t, elf.ELFCLASS32, binary.BigEndian, "/lib/ld.so.1"),
		"32-bit little-endian, with a loader": syntheticELF(t, elf.ELFCLASS32, binary.LittleEndian, "/lib/ld-linux.so.3"),
		"64-bit big-endian, static":           syntheticELF(t, elf.ELFCLASS64, binary.BigEndian, ""),
		"64-bit little-endian, with a loader": syntheticELF(t, elf.ELFCLASS64, binary.LittleEndian, "/lib64/ld-linux-x86-64.so.2"),
	} {
		agree(t, name, bytes.NewReader(data))
		_, err := elf.NewFile(bytes.NewReader(data))
		require.NoError(t, err, name)
	}

	good := syntheticELF(t, elf.ELFCLASS64, binary.LittleEndian, "/lib/ld.so")
	for name, breakIt := range map[string]func([]byte){
		"no class":                    func(b []byte) { b[elf.EI_CLASS] = 0 },
		"no byte order":               func(b []byte) { b[elf.EI_DATA] = 9 },
		"another version":             func(b []byte) { b[elf.EI_VERSION] = 2 },
		"a header's version":          func(b []byte) { binary.LittleEndian.PutUint32(b[20:], 2) },
		"short program headers":       func(b []byte) { binary.LittleEndian.PutUint16(b[54:], 8) },
		"program headers past EOF":    func(b []byte) { binary.LittleEndian.PutUint64(b[32:], 1<<40) },
		"sections without a table":    func(b []byte) { binary.LittleEndian.PutUint16(b[60:], 3) },
		"a truncated header":          func(b []byte) { clear(b[40:]) },
		"an interpreter past the end": func(b []byte) { binary.LittleEndian.PutUint64(b[64+8:], 1<<62) },
	} {
		data := bytes.Clone(good)
		breakIt(data)
		if name == "a truncated header" {
			data = data[:40]
		}
		agree(t, name, bytes.NewReader(data))
	}
}

// agree checks that readELF and elf.NewFile read f alike.
func agree(t *testing.T, name string, f io.ReaderAt) {
	t.Helper()
	want, werr := elf.NewFile(f)
	got, ok := readELF(f)
	if werr != nil {
		assert.False(t, ok, "%s: elf.NewFile refuses it (%v)", name, werr)
		return
	}
	require.True(t, ok, "%s: elf.NewFile reads it", name)
	assert.Equal(t, uint16(want.Machine), uint16(got.machine), name)
	assert.Equal(t, want.ByteOrder, got.order, name)
	var interp *elfProg
	for _, p := range want.Progs {
		if p.Type == elf.PT_INTERP {
			interp = &elfProg{off: p.Off, filesz: p.Filesz}
			break
		}
	}
	assert.Equal(t, interp, got.interp, name)
}

// Every machine is named as debug/elf names it, the numbers without a name
// too.
func TestMachineNamesAreDebugELFs(t *testing.T) {
	for m := range 1 << 16 {
		if got, want := elfMachine(m).String(), elf.Machine(m).String(); got != want {
			require.Equal(t, want, got, "machine %d", m)
		}
	}
}

// The ELF facts the reader names are debug/elf's.
func TestELFConstantsAreDebugELFs(t *testing.T) {
	assert.Equal(t, elf.ELFMAG, elfMagic)
	assert.Equal(t, []int{elf.EI_CLASS, elf.EI_DATA, elf.EI_VERSION, elf.EI_NIDENT},
		[]int{eiClass, eiData, eiVersion, eiNident})
	assert.Equal(t, []int{int(elf.ELFCLASS32), int(elf.ELFCLASS64), int(elf.ELFDATA2LSB), int(elf.ELFDATA2MSB), int(elf.EV_CURRENT), int(elf.PT_INTERP)},
		[]int{elfClass32, elfClass64, elfData2LSB, elfData2MSB, evCurrent, ptInterp})
	for want, got := range map[elf.Machine]elfMachine{
		elf.EM_X86_64: emX86_64, elf.EM_AARCH64: emAARCH64, elf.EM_386: em386, elf.EM_ARM: emARM,
		elf.EM_S390: emS390, elf.EM_RISCV: emRISCV, elf.EM_PPC64: emPPC64,
	} {
		assert.Equal(t, uint16(want), uint16(got), want.String())
	}
}

// syntheticELF is an ELF file with a header, no section, and a PT_INTERP
// program header naming loader, if any, and its name after it.
func syntheticELF(t *testing.T, class elf.Class, order binary.ByteOrder, loader string) []byte {
	t.Helper()
	var ident [elf.EI_NIDENT]byte
	copy(ident[:], elf.ELFMAG)
	ident[elf.EI_CLASS], ident[elf.EI_VERSION] = byte(class), byte(elf.EV_CURRENT)
	ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if order == binary.BigEndian {
		ident[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	phnum := 0
	if loader != "" {
		phnum = 1
	}
	var buf bytes.Buffer
	write := func(v any) { require.NoError(t, binary.Write(&buf, order, v)) }
	if class == elf.ELFCLASS32 {
		hsize, psize := binary.Size(elf.Header32{}), binary.Size(elf.Prog32{})
		write(elf.Header32{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_MIPS), Version: uint32(elf.EV_CURRENT),
			Phoff: uint32(hsize), Ehsize: uint16(hsize), Phentsize: uint16(psize), Phnum: uint16(phnum)})
		if loader != "" {
			write(elf.Prog32{Type: uint32(elf.PT_INTERP), Off: uint32(hsize + psize), Filesz: uint32(len(loader) + 1)})
		}
	} else {
		hsize, psize := binary.Size(elf.Header64{}), binary.Size(elf.Prog64{})
		write(elf.Header64{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_S390), Version: uint32(elf.EV_CURRENT),
			Phoff: uint64(hsize), Ehsize: uint16(hsize), Phentsize: uint16(psize), Phnum: uint16(phnum)})
		if loader != "" {
			write(elf.Prog64{Type: uint32(elf.PT_INTERP), Off: uint64(hsize + psize), Filesz: uint64(len(loader) + 1)})
		}
	}
	if loader != "" {
		buf.WriteString(loader + "\x00")
	}
	return buf.Bytes()
}
