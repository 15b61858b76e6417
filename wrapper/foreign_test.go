package wrapper

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/exitcode"

	"github.com/proxy-await/proxy-await/internal/hint"
)

// A binary built for another machine (an arm64 image on an amd64 node) is
// refused by the kernel with ENOEXEC, as a script without "#!" is; it must
// not be handed to /bin/sh, which would read machine code as shell, or be
// reported as "/bin/sh: no such file" in an image without a shell. It fails
// with 126, as in bash, saying which machine it was built for.
func TestBinaryForAnotherMachine(t *testing.T) {
	other, want := elf.EM_AARCH64, "arm64"
	if runtime.GOARCH == "arm64" {
		other, want = elf.EM_X86_64, "amd64"
	}
	data, err := os.ReadFile("/bin/true")
	require.NoError(t, err)
	require.Equal(t, elf.ELFMAG, string(data[:4]))
	binary.LittleEndian.PutUint16(data[18:], uint16(other)) // e_machine
	path := filepath.Join(t.TempDir(), "foreign")
	require.NoError(t, os.WriteFile(path, data, 0o755))

	_, _, se := runOut(t, path)
	require.NotNil(t, se, "the foreign binary was started")
	assert.Equal(t, exitcode.NotExecutable, se.Code)
	assert.Equal(t, path+": a binary built for "+want+"; this machine runs "+runtime.GOARCH, se.Error())
	assert.NotEmpty(t, hint.Of(se))
}
