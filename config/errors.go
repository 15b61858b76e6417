// errors.go: usage errors and warnings, and how a message quotes what was
// written.
//
// Every usage error reads the same way: one line that says what is wrong
// and quotes the flag or variable with the whole value as written
// (`invalid value "5q" for --timeout: not a duration ...`), then, when the
// fix is known, a hint that says what to do, lower case, with flags written
// as on the command line (`write --timeout-fatal=false ...`).

package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// UsageError is a bad command line or environment: exit 2 with msg, and a
// hint when one helps. format is the log format to print it in, as far as
// the command line and environment said before the error.
// Its hint, if any, is in Err (hint.Of).
type UsageError struct {
	Err    error
	Format string
}

func (e *UsageError) Error() string { return e.Err.Error() }

func (e *UsageError) Unwrap() error { return e.Err }

// Report prints e to w: under --log-format json one record with the event
// usage_error, else the message and a hint line, each after prefix
// ("proxy-await: ").
func (e *UsageError) Report(w io.Writer, prefix string) {
	if e.Format == "json" {
		logging.NewNamed(prefix, w, "json", slog.LevelError).Error(e.Error(), hint.Attrs([]any{"event", "usage_error"}, hint.Of(e))...)
		return
	}
	fmt.Fprintf(w, "%s%s\n", prefix, e.Error())
	if h := hint.Of(e); h != "" {
		fmt.Fprintf(w, "%shint: %s\n", prefix, h)
	}
}

func usagef(h, format string, args ...any) error {
	return &UsageError{Err: hint.New(fmt.Errorf(format, args...), h)}
}

// warnf is a warning: something in the command line or environment that
// proxy-await ignores. The run goes on, and the warning is logged once at
// the start, with its hint.
func warnf(h, format string, args ...any) *hint.Error {
	return hint.New(fmt.Errorf(format, args...), h)
}

// invalid is the usage error for flag's value, quoted as the user wrote it
// (current when it was not written but derived), naming the variable it came
// from if it did: `invalid value "0" for $PROXY_AWAIT_BACKOFF (--backoff): ...`.
func (c *Config) invalid(flag, current, hint, reason string) error {
	g, ok := c.given[flag]
	if !ok {
		g.value = current
	}
	if g.env != "" {
		return usagef(hint, "invalid value %q for $%s (--%s): %s", g.value, g.env, flag, reason)
	}
	return usagef(hint, "invalid value %q for --%s: %s", g.value, flag, reason)
}

// flagError turns an error from pflag into a usage error whose message
// starts with what is wrong and names the flag: `invalid value "5q" for
// --timeout: ...`, `--timeout needs a value`.
func flagError(err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		f := invalid.GetFlag()
		return usagef(hintFor(err, f.Name), "invalid value %q for --%s: %v", shownValue(f, invalid.GetValue(), false), f.Name, errors.Unwrap(err))
	}
	var missing *pflag.ValueRequiredError
	if errors.As(err, &missing) {
		return usagef(fmt.Sprintf("write --%s=%s", missing.GetFlag().Name, example(missing.GetFlag())), "--%s needs a value", missing.GetFlag().Name)
	}
	var syntax *pflag.InvalidSyntaxError
	if errors.As(err, &syntax) {
		// Not past its "=": the value may be a URL with a password.
		a := syntax.GetSpecifiedFlag()
		name, _, _ := strings.Cut(a, "=")
		if n := strings.TrimLeft(name, "-"); n == "" || !redact.IsName(n) {
			name = redact.Word(a)
		}
		return usagef("see --help for the flags", "bad flag syntax: %s", shown(name))
	}
	// pflag's other errors quote the argument whole.
	words := strings.Fields(err.Error())
	for i, w := range words {
		words[i] = redact.Word(w)
	}
	return usagef("see --help for the flags", "%s", shown(strings.Join(words, " ")))
}

// hintFor is the hint a value's parser attached to its error, if any, with
// FLAG standing for the flag's name.
func hintFor(err error, flag string) string {
	return strings.ReplaceAll(hint.Of(err), "FLAG", "--"+flag)
}

// shown is s as a message shows it: quoted if it has a control character or
// anything but ASCII, so that a message stays one line of plain text.
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return strconv.Quote(s)
		}
	}
	return s
}

// shownValue is v, a value of f as written (a list, from the environment),
// as a message may quote it: a URL flag's value without its password
// (package redact), and any other flag's value too, which may be a URL
// given to the wrong flag.
func shownValue(f *pflag.Flag, v string, list bool) string {
	if _, ok := f.Value.(*appProbe); ok {
		return redact.URL(v)
	}
	switch _, ok := f.Value.(*urlList); {
	case ok && list:
		return redact.URLs(urlItems(v))
	case ok:
		return redact.URL(v)
	}
	return redact.Word(v)
}
