package exitcode

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		ws   syscall.WaitStatus
		want int
	}{
		{0, 0},
		{3 << 8, 3},
		{255 << 8, 255},
		{syscall.WaitStatus(syscall.SIGKILL), 137},
		{syscall.WaitStatus(syscall.SIGTERM), 143},
		{syscall.WaitStatus(syscall.SIGSEGV) | 0x80, 139}, // core dumped
	} {
		assert.Equal(t, tc.want, Of(tc.ws), "%#x", uint32(tc.ws))
	}
}
