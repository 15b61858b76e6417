// suggest.go: what a usage error suggests: the known flag closest to an
// unknown one, and a value to show for a flag given without one.

package config

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// exampler is a flag value that knows a value to show in a hint: one that
// the flag takes and that means what the flag is for.
type exampler interface{ example() string }

// example is a value to show in the hint for a flag given without one: the
// value type's example, else the flag's default.
func example(f *pflag.Flag) string {
	if e, ok := f.Value.(exampler); ok {
		return e.example()
	}
	return f.DefValue
}

// unknownFlag is the error for the argument a, a flag called name, with the
// closest known flag. It quotes a up to its "=" when name can be a flag's
// (the value may be a URL with a password), else a as redact shows a word.
func unknownFlag(fs *pflag.FlagSet, a, name string) error {
	hint := "see --help for the flags"
	if near := closestFlag(fs, name); near != "" {
		hint = "did you mean --" + near + "?"
	}
	written, _, _ := strings.Cut(a, "=")
	if !redact.IsName(name) {
		written = redact.Word(a)
	}
	return usagef(hint, "unknown flag %s", shown(written))
}

// unknownShorthand is the error for the letter c in the argument a: a long
// flag's name written after one dash ("-shutdown") gets the long flag. It
// quotes a as redact shows a word: "-Shttp://u:secret@..." holds a URL.
func unknownShorthand(fs *pflag.FlagSet, a string, c byte) error {
	hint := "see --help for the flags"
	name, _, _ := strings.Cut(a[1:], "=")
	if near := closestFlag(fs, name); near != "" && len(name) > 1 {
		hint = "did you mean --" + near + "?"
	}
	if len(a) == 2 {
		return usagef(hint, "unknown flag %s", shown(a))
	}
	return usagef(hint, "unknown flag %s in %s", shown("-"+string(rune(c))), shown(redact.Word(a)))
}

// closestFlag is the long flag name nearest to name (see closest).
func closestFlag(fs *pflag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return closest(name, names)
}

// closest is the candidate nearest to name in edit distance (ignoring
// case), or one that name begins; "" if none is near enough to be what was
// meant.
func closest(name string, candidates []string) string {
	name = strings.ToLower(name)
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editdistance.Of(name, c)
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			d = min(d, 1) // "--ready" for --ready-url
		}
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist > max(2, len(name)/3) {
		return ""
	}
	return best
}

// longName says whether name, what follows the one dash of an argument
// "-name=VALUE", is a long flag's name written after one dash: a name, and
// not short flags that take the value, booleans but for the last letter
// ("-gS=false", "-vt=5s").
func longName(name string, fs *pflag.FlagSet) bool {
	if !redact.IsName(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		f := fs.ShorthandLookup(name[i : i+1])
		if f == nil || i < len(name)-1 && f.Value.Type() != "bool" {
			return true
		}
	}
	return false
}
