// commandline.go: the command line, read by pflag, and what pflag accepts
// although no one means it.

package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// commandLine is args as pflag reads them into c: the flags up to the
// first word that is not one (or "--"), then COMMAND.
type commandLine struct {
	given     map[string]given // by long flag name: how each flag was set
	logFormat *string          // --log-format's value, once parsed
	fs        *pflag.FlagSet
	args      []string
	badValue  error // the first value a flag refused
	parsed    bool  // the flags were read to their end, and COMMAND is known
}

// parse reads the flags. pflag is the parser; set and boolTrap refuse what
// it would accept although no one means it, and usage words its errors. A
// mistake in the flags' shape (an unknown flag, a missing value, the word
// true after a boolean) comes before a value a flag refuses, wherever each
// is: the shape says where COMMAND starts, and so which --log-format counts.
func (cl *commandLine) parse() error {
	if err := cl.fs.ParseAll(cl.args, cl.set); err != nil {
		return cl.usage(err)
	}
	if err := cl.boolTrap(); err != nil {
		return err
	}
	cl.parsed = true
	if cl.badValue != nil {
		return flagError(cl.badValue)
	}
	return nil
}

// set is how pflag sets flag f to value, as written. It refuses "--" or a
// flag where f needs a value ("--timeout --shutdown", which pflag reads as
// the value "--shutdown"), and a long flag written with one dash
// ("-timeout=5s", which pflag reads as -t with the value "imeout=5s"). It
// notes the value as written, for messages that quote it, and the first
// value refused, to report once the flags' shape is known good.
func (cl *commandLine) set(f *pflag.Flag, value string) error {
	if cl.isFlag(value) && slices.Contains(cl.args, value) {
		return usagef(fmt.Sprintf("write --%s=%s", f.Name, example(f)), "--%s needs a value", f.Name)
	}
	cl.given[f.Name] = given{value: shownValue(f, value, false)}
	err := cl.fs.Set(f.Name, value)
	if err == nil {
		return nil
	}
	if f.Shorthand != "" && value != "" { // a value after a short flag in its word is never empty
		if long := cl.oneDash(cl.cluster(f.Shorthand + value)); long != nil {
			return long
		}
	}
	if cl.badValue == nil {
		cl.badValue = err
	}
	return nil
}

// isFlag says whether the word a is "--" or one of the flags.
func (cl *commandLine) isFlag(a string) bool {
	if name, ok := strings.CutPrefix(a, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return name == "" || cl.fs.Lookup(name) != nil
	}
	return len(a) > 1 && a[0] == '-' && cl.fs.ShorthandLookup(a[1:2]) != nil
}

// boolTrap refuses the word true or false right after a boolean flag:
// pflag takes it as COMMAND, and "--timeout-fatal false" would run the
// command false.
func (cl *commandLine) boolTrap() error {
	cmd := len(cl.args) - len(cl.fs.Args())
	if len(cl.fs.Args()) == 0 || cmd == 0 {
		return nil
	}
	w := cl.args[cmd]
	if !strings.EqualFold(w, "true") && !strings.EqualFold(w, "false") {
		return nil
	}
	f := cl.endsInBool(cl.args[cmd-1])
	if f == nil {
		return nil
	}
	return boolValueError(f, w, "a command named")
}

// boolTrapAnywhere is boolTrap for a command line whose flags and other
// words mix (proxy-awaitctl's): the word true or false right after a
// boolean flag, up to "--", would be read as a path.
func (cl *commandLine) boolTrapAnywhere() error {
	for i := 0; i < len(cl.args)-1; i++ {
		a, w := cl.args[i], cl.args[i+1]
		switch f := cl.endsInBool(a); {
		case a == "--":
			return nil
		case f != nil && (strings.EqualFold(w, "true") || strings.EqualFold(w, "false")):
			return boolValueError(f, w, "a path named")
		case f == nil && cl.takesNextWord(a):
			i++ // the flag's value, whatever it says
		}
	}
	return nil
}

// takesNextWord says whether the word a is a flag that takes the next word
// as its value: --name or -n without a value of its own, for a flag that
// is not a boolean.
func (cl *commandLine) takesNextWord(a string) bool {
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
		f = cl.fs.Lookup(a[2:])
	case len(a) == 2 && a[0] == '-':
		f = cl.fs.ShorthandLookup(a[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

// boolValueError is the error for the word w after the boolean flag f: a
// boolean takes its value only after "=". what is what w would otherwise
// be read as.
func boolValueError(f *pflag.Flag, w, what string) error {
	return usagef(fmt.Sprintf("write --%s=%s, or put -- before %s %s", f.Name, strings.ToLower(w), what, w),
		"invalid value %q for --%s: a boolean flag takes its value only after =", w, f.Name)
}

// endsInBool is the boolean flag that the argument a ends with, without a
// value after "=": "--shutdown", or "-gS" (booleans all); nil for any other.
func (cl *commandLine) endsInBool(a string) *pflag.Flag {
	if name, ok := strings.CutPrefix(a, "--"); ok {
		if f := cl.fs.Lookup(name); f != nil && f.Value.Type() == "bool" {
			return f
		}
		return nil
	}
	if len(a) < 2 || a[0] != '-' {
		return nil // a value, or a word before COMMAND
	}
	var f *pflag.Flag
	for i := 1; i < len(a); i++ {
		if f = cl.fs.ShorthandLookup(a[i : i+1]); f == nil || f.Value.Type() != "bool" {
			return nil
		}
	}
	return f
}

// usage words pflag's error as a usage error that names the flag. A long
// flag written with one dash ("-shutdown", read as -s, which does not
// exist) is named as the unknown flag it is.
func (cl *commandLine) usage(err error) error {
	var u *UsageError
	if errors.As(err, &u) {
		return err // from set
	}
	var notExist *pflag.NotExistError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &syntax) && cl.badValue != nil:
		return flagError(cl.badValue) // pflag's own order: the value came first
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() != "":
		rest := notExist.GetSpecifiedShortnames()
		a := cl.cluster(rest)
		if a == "" {
			a = "-" + rest
		}
		if long := cl.oneDash(a); long != nil {
			return long
		}
		return unknownShorthand(cl.fs, a, rest[0])
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		i := slices.IndexFunc(cl.args, func(a string) bool { return a == "--"+name || strings.HasPrefix(a, "--"+name+"=") })
		return unknownFlag(cl.fs, cl.args[i], name)
	}
	return flagError(err)
}

// cluster is the argument of short flags whose rest, after the boolean
// flags pflag read first, is rest: "-gtimeout=5s" for "timeout=5s". It is
// "" when there is none, and rest must not be empty: a word of COMMAND may
// end with anything.
func (cl *commandLine) cluster(rest string) string {
	for _, a := range cl.args {
		if a == "--" || rest == "" {
			break
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' || !strings.HasSuffix(a, rest) {
			continue
		}
		if cl.endsInBool(a[:len(a)-len(rest)]) != nil || len(a) == len(rest)+1 {
			return a
		}
	}
	return ""
}

// oneDash is the unknown-flag error for the argument a when it is a long
// flag's name after one dash: "-timeout=5s", "-shutdown", "-ready_url=URL".
// nil when a reads as short flags ("-gS", "-t5s").
func (cl *commandLine) oneDash(a string) error {
	if a == "" {
		return nil
	}
	name, _, hasValue := strings.Cut(a[1:], "=")
	if len(name) > 1 && (cl.fs.Lookup(name) != nil || hasValue && longName(name, cl.fs)) {
		return unknownFlag(cl.fs, "-"+name, name)
	}
	return nil
}

// format is the log format a usage error is printed in: --log-format's
// value if the command line gives one, else $PROXY_AWAIT_LOG_FORMAT's; a
// value that is not text or json (the error may be about it) means text.
// When the flags' shape is wrong, a --log-format after the mistake counts
// too: where the flags end is then unknown, and a log pipeline that reads
// JSON gets JSON whatever the order of the flags.
func (cl *commandLine) format(getenv func(string) (string, bool)) string {
	v, given := *cl.logFormat, cl.fs.Changed("log-format")
	if !cl.parsed {
		for i := 0; i < len(cl.args) && cl.args[i] != "--"; i++ {
			if value, ok := strings.CutPrefix(cl.args[i], "--log-format="); ok {
				v, given = value, true
			} else if cl.args[i] == "--log-format" && i+1 < len(cl.args) {
				v, given = cl.args[i+1], true
			}
		}
	}
	if !given {
		v, _ = getenv(EnvPrefix + "LOG_FORMAT")
	}
	if v == "json" {
		return "json"
	}
	return "text"
}
