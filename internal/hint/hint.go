// Package hint carries what to do about an error beside it: the hint that a
// log line or a usage error ends with when the fix is known.
package hint

import "errors"

// Error is an error with a hint.
type Error struct {
	Err  error
	Hint string // what to do about Err; may be empty
}

// New is err with hint.
func New(err error, hint string) *Error { return &Error{Err: err, Hint: hint} }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Of is the hint of the first *Error in err's tree; "" when there is none.
func Of(err error) string {
	var h *Error
	if errors.As(err, &h) {
		return h.Hint
	}
	return ""
}

// Text is msg with its hint, as a text log line ends: "msg (hint: h)"; msg
// alone when there is no hint.
func Text(msg, h string) string {
	if h == "" {
		return msg
	}
	return msg + " (hint: " + h + ")"
}

// Attrs appends the "hint" attribute to a log line's attrs, when there is a
// hint.
func Attrs(attrs []any, hint string) []any {
	if hint == "" {
		return attrs
	}
	return append(attrs, "hint", hint)
}
