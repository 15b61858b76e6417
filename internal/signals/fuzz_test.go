package signals

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Fuzz targets for the signal names and --rewrite rules users type. Plain
// `go test` runs the seeds and testdata/fuzz; scripts/fuzz.sh fuzzes each
// target for a while.

// rewriteSeeds are the rules of the config tests and the edges around them.
var rewriteSeeds = []string{
	"TERM:USR1", "sigint:0", "1:15", "WINCH:SIGHUP", "HUP:0", "INT:TERM", "FOO:BAR", "TERM", "TERM:", ":USR1", ":",
	"TERM:99", "KILL:TERM", "STOP:TERM", "CHLD:TERM", "URG:TERM", "PROF:TERM", "0:TERM", "32:TERM", "33:1", "34:1",
	"35:1", "64:0", "65:1", "TERM:64", "TERM:65", "TERM:-1", "TERM:-0", "+15:+10", "015:010", "-15:1",
	"SIGTERM:SIGKILL", "term:kill", "IOT:TERM", "SIGIO:POLL", "SYS:TERM", "TERM:USR1:USR2", "TERM :USR1",
	"9223372036854775807:1", "1:9223372036854775808", "SIG:1", "SIGSIGTERM:1", "ſigterm:1", "RTMIN:1",
}

// notCatchable are the signals a FROM may never be: SIGKILL and SIGSTOP cannot
// be caught, SIGCHLD, SIGURG and SIGPROF belong to the wrapper and the Go
// runtime, and 32-34 are glibc's (docs/signals-and-pid1.md).
var notCatchable = map[syscall.Signal]bool{
	syscall.SIGKILL: true, syscall.SIGSTOP: true, syscall.SIGCHLD: true, syscall.SIGURG: true, syscall.SIGPROF: true,
}

func FuzzParseRewrite(f *testing.F) {
	for _, r := range rewriteSeeds {
		f.Add(r)
	}
	forwarded := map[os.Signal]bool{}
	for _, s := range Forwarded() {
		forwarded[s] = true
	}
	f.Fuzz(func(t *testing.T, rule string) {
		from, to, err := ParseRewrite(rule)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			return
		}
		require.True(t, from >= 1 && int(from) <= Max, "%q: FROM %d out of range", rule, int(from))
		assert.False(t, notCatchable[from], "%q: FROM %s cannot be forwarded", rule, Name(from))
		if Max == 64 {
			assert.False(t, from >= 32 && from <= 34, "%q: FROM %d is reserved by glibc", rule, int(from))
		}
		assert.True(t, forwarded[from], "%q: FROM %s is not in Forwarded()", rule, Name(from))
		require.True(t, to >= 0 && int(to) <= Max, "%q: TO %d out of range", rule, int(to))

		// The table prints rules back by number; they must read the same.
		again := fmt.Sprintf("%d:%d", int(from), int(to))
		f2, t2, err := ParseRewrite(again)
		require.NoError(t, err, "%q read as %q", rule, again)
		assert.Equal(t, [2]int{int(from), int(to)}, [2]int{int(f2), int(t2)}, "%q read as %q", rule, again)
	})
}

func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{
		"TERM", "SIGTERM", "term", "sigterm", "SigTerm", "0", "-0", "+0", "00", "1", "15", "+15", "015", "31", "32",
		"64", "65", "-1", "", "SIG", "SIGSIG", "IOT", "POLL", "CLD", "RTMIN", "RTMIN+1", "SIGRTMAX", "signal 40",
		"ſigterm", "ıo", "KILL", "STOP", "9223372036854775807", "9223372036854775808", " 1", "1 ",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, allowZero bool) {
		sig, err := Parse(s, allowZero)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			assert.Zero(t, sig)
			return
		}
		if sig == 0 {
			require.True(t, allowZero, "%q read as 0 without allowZero", s)
		} else {
			require.True(t, sig >= 1 && int(sig) <= Max, "%q read as %d", s, int(sig))
		}

		// By number, and by name when the signal has one.
		back, err := Parse(strconv.Itoa(int(sig)), allowZero)
		require.NoError(t, err, "%q read as %d", s, int(sig))
		assert.Equal(t, sig, back)
		if name := unix.SignalName(sig); name != "" {
			for _, n := range []string{name, name[len("SIG"):]} {
				back, err := Parse(n, false)
				require.NoError(t, err, "%s", n)
				assert.Equal(t, sig, back, "%s", n)
			}
		}
	})
}
