package testutil

import (
	"fmt"
	"testing"
	"time"
)

// pollEvery is how often Until looks: often enough that a test sees an event
// within a millisecond or two, seldom enough to cost nothing beside it.
const pollEvery = time.Millisecond

// Until looks whether cond holds, at once and then every millisecond, and
// returns true once it does, or false once limit has passed without it.
// It is the one wait for a state that nothing announces (a process's state
// in /proc, a file written, a log line, a count of goroutines); where the
// program says what it does (a child's "ready", the next line of output),
// the test reads that instead.
func Until(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// Eventually waits until cond holds, for at most WaitLimit, and fails the
// test otherwise with the message format and args say: what never
// happened. The args are formatted when the test fails, so a *Buffer among
// them shows what it holds by then.
func Eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	EventuallyWithin(t, WaitLimit, cond, format, args...)
}

// EventuallyWithin is Eventually with its own limit: a limit that only
// guards a hang, for work whose length grows with the machine's load, or a
// bound the test is about.
func EventuallyWithin(t testing.TB, limit time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Until(limit, cond) {
		t.Fatalf("%s (waited %s)", fmt.Sprintf(format, args...), limit)
	}
}
