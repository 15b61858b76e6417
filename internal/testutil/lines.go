package testutil

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Lines is a program's output, read line by line in the background, for
// tests that assert what it prints one line after the other: Expect checks
// the next line, never one somewhere later, so an extra line fails the test.
type Lines struct {
	c     chan string
	limit time.Duration
	// context is added to every failure: the program's stderr or log.
	context func() string
}

// NewLines reads r until EOF. Every wait for a line is bounded by limit, so
// that a broken program fails a test instead of hanging it; context says
// what to show when a wait fails.
func NewLines(r io.Reader, limit time.Duration, context func() string) *Lines {
	l := &Lines{c: make(chan string, 1<<16), limit: limit, context: context}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.c <- sc.Text()
		}
		close(l.c)
	}()
	return l
}

// Next returns the next line; it fails the test if the output ends first or
// no line comes within the limit.
func (l *Lines) Next(t testing.TB, what string) string {
	t.Helper()
	return l.NextWithin(t, what, l.limit)
}

// NextWithin is Next with its own limit, for a line that comes after work
// whose length grows with the machine's load (thousands of forks, say).
func (l *Lines) NextWithin(t testing.TB, what string, limit time.Duration) string {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case line, ok := <-l.c:
		if !ok {
			t.Fatalf("output closed, expecting %s\n%s", what, l.context())
		}
		return line
	case <-timer.C:
		t.Fatalf("no line within %s, expecting %s\n%s", limit, what, l.context())
	}
	return ""
}

// Expect returns the next line, which must start with prefix.
func (l *Lines) Expect(t testing.TB, prefix string) string {
	t.Helper()
	line := l.Next(t, "a line starting with "+quote(prefix))
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("the next line is %s, not one starting with %s\n%s", quote(line), quote(prefix), l.context())
	}
	return line
}

// Silent fails the test if a line is already there.
func (l *Lines) Silent(t testing.TB, why string) {
	t.Helper()
	select {
	case line, ok := <-l.c:
		if ok {
			t.Fatalf("%s, yet the program printed %s", why, quote(line))
		}
	default:
	}
}

// Rest returns every line left, once the output has ended.
func (l *Lines) Rest(t testing.TB) []string {
	t.Helper()
	var out []string
	timer := time.NewTimer(l.limit)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-l.c:
			if !ok {
				return out
			}
			out = append(out, line)
		case <-timer.C:
			t.Fatalf("output still open after %s\n%s", l.limit, l.context())
		}
	}
}

// Discard reads and drops whatever is left, in the background.
func (l *Lines) Discard() {
	go func() {
		for range l.c {
		}
	}()
}

func quote(s string) string { return strconv.Quote(s) }
