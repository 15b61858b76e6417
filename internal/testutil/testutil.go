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

// LogLines are proxy-await's text log lines as a test compares them, one
// for one: each PID (child_pid=PID) and each measured duration (elapsed=D,
// failing=D, since_traffic=D) written as those words, since they differ
// from run to run while the lines' order and the rest of their words do
// not.
func LogLines(log string) []string {
	log = pids.ReplaceAllString(log, "${1}=PID")
	log = measured.ReplaceAllString(log, "${1}=D")
	if log = strings.TrimSpace(log); log == "" {
		return nil
	}
	return strings.Split(log, "\n")
}

var (
	pids     = regexp.MustCompile(`\b(child_pid|pid)=\d+`)
	measured = regexp.MustCompile(`\b(elapsed|failing|since_traffic|since_pinned)=[0-9][0-9.hmsµn]*`)
)
