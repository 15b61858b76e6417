// Package testutil holds small helpers shared by the tests of several
// packages.
package testutil

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer that one goroutine may write while another reads,
// for capturing logs and output in tests.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor waits until the buffer holds want, for at most limit: a log
// event, in tests that read a program's log as it is written.
func (s *Buffer) WaitFor(t testing.TB, want string, limit time.Duration) {
	t.Helper()
	EventuallyWithin(t, limit, func() bool { return strings.Contains(s.String(), want) },
		"never logged %q; log:\n%s", want, s)
}

// Getenv is a lookup of the variables in kv, standing in for os.LookupEnv.
func Getenv(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

// NormalizeLog is a log as a test compares it, line for line: every value
// that differs from run to run (a time, a PID, a measured duration, a
// client's address) is written *, in a text line (key=VALUE, up to a space,
// or quoted) and in a JSON line ("key":VALUE, a string or a number), while
// the lines' order and the rest of their words stay. The fake proxy's
// request log is normalised the same way.
func NormalizeLog(log string) string {
	return varying.ReplaceAllStringFunc(log, func(m string) string {
		sub := varying.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			return sub[1] + "=*"
		case strings.HasPrefix(sub[4], `"`):
			return `"` + sub[3] + `":"*"`
		default:
			return `"` + sub[3] + `":*`
		}
	})
}

// varyingKeys are the keys whose values NormalizeLog writes *; a duration
// is in milliseconds under a key ending in _ms in a JSON line.
const varyingKeys = `time|child_pid|pid|remote|(?:elapsed|failing|since_traffic|since_pinned)(?:_ms)?`

var varying = regexp.MustCompile(`\b(` + varyingKeys + `)=("(?:[^"\\]|\\.)*"|[^ \n]*)` +
	`|"(` + varyingKeys + `)":("(?:[^"\\]|\\.)*"|[0-9.]+)`)

// LogLines are the lines of NormalizeLog(log), for a test that compares
// them one for one; none for an empty log.
func LogLines(log string) []string {
	if log = strings.TrimSpace(NormalizeLog(log)); log == "" {
		return nil
	}
	return strings.Split(log, "\n")
}
