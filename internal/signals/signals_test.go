package signals

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want syscall.Signal
		err  string
	}{
		{"TERM", syscall.SIGTERM, ""},
		{"SIGTERM", syscall.SIGTERM, ""},
		{"term", syscall.SIGTERM, ""},
		{"sigusr1", syscall.SIGUSR1, ""},
		{"15", syscall.SIGTERM, ""},
		{"34", syscall.Signal(34), ""},
		{"0", 0, "out of range"},
		{"65", 0, "out of range"},
		{"-1", 0, "out of range"},
		{"FOO", 0, "unknown signal FOO"},
		{"", 0, "missing signal"},
		{"010", syscall.SIGUSR1, ""}, // decimal, not octal
		{"0x0a", 0, "unknown signal 0x0a"},
		{"RTMIN", syscall.Signal(34), ""}, // as `kill -l` prints them on Debian
		{"SIGRTMIN+1", syscall.Signal(35), ""},
		{"rtmin+15", syscall.Signal(49), ""},
		{"RTMAX-14", syscall.Signal(50), ""},
		{"SIGRTMAX", syscall.Signal(64), ""},
		{"RTMIN+31", 0, "RTMIN+31 is signal 65, outside the real-time signals 34 (SIGRTMIN) to 64 (SIGRTMAX)"},
		{"RTMIN-1", 0, "unknown signal RTMIN-1"},
		{"RTMIN+", 0, "unknown signal RTMIN+"},
	} {
		got, err := Parse(tc.in, false)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func BenchmarkParseSignal(b *testing.B) {
	names := []string{"TERM", "SIGUSR1", "hup", "15", "WINCH"}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			if _, err := Parse(n, false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkParseRewrite(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseRewrite("TERM:USR1"); err != nil {
			b.Fatal(err)
		}
	}
}
