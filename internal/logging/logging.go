// Package logging builds proxy-await's logger: one line a record on stderr,
// either "proxy-await: message key=value" text or one JSON object a line.
//
// An attribute that names a URL is called "url" or ends in "_url"; its value
// is one URL (a string) or a list of them ([]string), and it is printed as
// package redact shows URLs: a password becomes "xxxxx", and a list is
// redacted URL by URL before it is joined, never split again on its commas.
//
// Every record carries an "event" attribute, a stable name that log pipelines
// can match on (the JSON output shows it; the text output leaves it out because
// the message already says it). Durations are printed as Go durations in text
// and as integer milliseconds under KEY_ms in JSON.
package logging

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// Prefix starts every text line, so that proxy-await's lines stand apart from
// the child's in a pod's log.
const Prefix = "proxy-await: "

// Level maps the -v and -q flags to a slog level: debug, errors only, or info.
func Level(verbose, quiet bool) slog.Level {
	switch {
	case quiet:
		return slog.LevelError
	case verbose:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// New returns a logger writing to w in format "text" or "json".
func New(w io.Writer, format string, level slog.Level) *slog.Logger {
	return NewNamed(Prefix, w, format, level)
}

// NewNamed is New for a program whose text lines start with prefix
// (proxy-awaitctl's "proxy-awaitctl: ").
func NewNamed(prefix string, w io.Writer, format string, level slog.Level) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
			Level:       level,
			ReplaceAttr: jsonAttr,
		}))
	}
	return slog.New(&textHandler{prefix: prefix, out: &lockedWriter{w: w}, level: level})
}

// Discard is a logger that writes nothing, for tests and library callers.
func Discard() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}

func jsonAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch {
	case isURL(a.Key):
		return slog.String(a.Key, shownURL(a.Value))
	case a.Key == slog.LevelKey:
		return slog.String(slog.LevelKey, strings.ToLower(a.Value.String()))
	case a.Value.Kind() == slog.KindDuration:
		return slog.Int64(a.Key+"_ms", a.Value.Duration().Milliseconds())
	}
	return a
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

type textHandler struct {
	prefix string
	out    *lockedWriter
	level  slog.Level
	attrs  []slog.Attr
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup is not used by proxy-await; attributes stay flat.
func (h *textHandler) WithGroup(string) slog.Handler { return h }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.prefix)
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	case r.Level < slog.LevelInfo:
		b.WriteString("debug: ")
	}
	b.WriteString(r.Message)
	var hint string
	write := func(a slog.Attr) bool {
		switch a.Key {
		case "event":
		case "hint":
			hint = a.Value.String()
		default:
			if isURL(a.Key) {
				a.Value = slog.StringValue(shownURL(a.Value))
			}
			b.WriteByte(' ')
			b.WriteString(a.Key)
			b.WriteByte('=')
			b.WriteString(quote(a.Value))
		}
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	if hint != "" {
		// A hint may name a file or a #! line; quoted, as any other
		// value is, when it holds what a terminal would act on.
		if !printable(hint) {
			hint = strconv.Quote(hint)
		}
		b.WriteString(" (hint: ")
		b.WriteString(hint)
		b.WriteByte(')')
	}
	b.WriteByte('\n')
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, b.String())
	return err
}

// printable says whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// isURL says whether an attribute's key names a URL.
func isURL(key string) bool { return key == "url" || strings.HasSuffix(key, "_url") }

// shownURL is a URL attribute's value as it may be printed.
func shownURL(v slog.Value) string {
	v = v.Resolve()
	if list, ok := v.Any().([]string); ok {
		return redact.URLs(list)
	}
	return redact.URL(v.String())
}

func quote(v slog.Value) string {
	var s string
	switch v.Kind() {
	case slog.KindDuration:
		s = v.Duration().Round(time.Millisecond).String()
		if v.Duration() > 0 && v.Duration() < time.Millisecond {
			s = v.Duration().String()
		}
	default:
		s = v.Resolve().String()
	}
	if s == "" || strings.ContainsAny(s, " \t\n\"=") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}
