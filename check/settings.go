// settings.go: proxy-await's settings in a container, read with config's
// own parser from the arguments and the variables the container gives it,
// with what the manifest does not hold set apart: such a value is replaced
// by one the flag accepts for the parse, and every rule that reads it is
// not judged.

package check

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/config"
)

// unknownValue is a value that the input does not hold: what it is (a
// flag, a variable, a sidecar's setting), where it comes from, and the
// line that names it.
type unknownValue struct {
	what string
	from string
	line int
	may  bool // it may come from there (an envFrom), or not at all
}

// disabledFlag stands for the variables that skip the readiness wait
// (config.DisableVars), which no flag sets.
const disabledFlag = "disabled"

// settings are proxy-await's settings in one container.
type settings struct {
	cfg     *config.Config
	err     error                   // the usage error a start would print
	errLine int                     // the line it is about
	unknown map[string]unknownValue // by flag name: values the input does not hold
	all     *unknownValue           // a word where flags go that the input does not hold: no flag is known
	lines   map[string]int          // by flag name: the line that sets it
	vars    map[string]int          // by variable: the line that sets it
	split   *word                   // a flag and its value written as one word ("--timeout 60s")
}

// flagTable is proxy-await's flags, by long name, by shorthand and by
// variable, and the command lines parsed so far.
type flagTable struct {
	long, short, env map[string]config.FlagInfo
	parsed           map[string]parsed
}

// parsed is what config's parser made of a command line and environment.
type parsed struct {
	cfg *config.Config
	err error
}

// parse is config.ParseEnviron, once for each command line and environment:
// a List of a thousand Deployments has a thousand alike. The config is
// shared, and only read.
func (t *flagTable) parse(args, environ []string) (*config.Config, error) {
	slices.Sort(environ)
	key := strings.Join(args, "\x00") + "\x01" + strings.Join(environ, "\x00")
	p, ok := t.parsed[key]
	if !ok {
		p.cfg, p.err = config.ParseEnviron("proxy-await", args, environ)
		t.parsed[key] = p
	}
	return p.cfg, p.err
}

func newFlagTable() *flagTable {
	t := &flagTable{map[string]config.FlagInfo{}, map[string]config.FlagInfo{}, map[string]config.FlagInfo{}, map[string]parsed{}}
	for _, f := range config.Flags() {
		t.long[f.Name] = f
		if f.Shorthand != "" {
			t.short[f.Shorthand] = f
		}
		if f.Env != "" {
			t.env[f.Env] = f
		}
	}
	return t
}

// readSettings reads the settings of inv in container c.
func readSettings(inv invocation, c *container, flags *flagTable) settings {
	s := settings{unknown: map[string]unknownValue{}, lines: map[string]int{}, vars: map[string]int{}}
	var args []string
	given := map[string]bool{}
	note := func(f config.FlagInfo, w word) {
		given[f.Name] = true
		s.lines[f.Name] = w.line
	}
	unknownValueOf := func(f config.FlagInfo, written string, w word) {
		s.unknown[f.Name] = unknownValue{what: written, from: w.from, line: w.line}
	}
	command := false
	for i := 0; i < len(inv.args); i++ {
		w := inv.args[i]
		switch {
		case command:
			args = append(args, textOr(w, "x"))
			continue
		case w.known && (w.text == "--" || !strings.HasPrefix(w.text, "-") || w.text == "-"):
			command = true
			args = append(args, w.text)
			continue
		case !w.known && !strings.HasPrefix(w.text, "-"):
			// It may be flags or the command: nothing after it is known.
			s.all = &unknownValue{what: "proxy-await's flags", from: w.from, line: w.line}
			return s
		}
		if fields := strings.Fields(w.text); w.known && len(fields) > 1 && s.split == nil {
			if _, ok := flagOf(flags, fields[0]); ok {
				split := w
				s.split = &split
			}
		}
		if long, ok := strings.CutPrefix(w.text, "--"); ok {
			name, _, hasValue := strings.Cut(long, "=")
			f, ok := flags.long[name]
			switch {
			case !ok && !w.known:
				s.all = &unknownValue{what: "proxy-await's flags", from: w.from, line: w.line}
				return s
			case !ok:
				args = append(args, w.text) // the parser names it
			case hasValue:
				note(f, w)
				if w.known {
					args = append(args, w.text)
				} else {
					unknownValueOf(f, "--"+name, w)
					args = append(args, "--"+name+"="+f.Example)
				}
			case f.Bool:
				note(f, w)
				args = append(args, w.text)
			default:
				note(f, w)
				args = append(args, w.text)
				if i+1 < len(inv.args) {
					i++
					v := inv.args[i]
					if !v.known {
						unknownValueOf(f, "--"+name, v)
					}
					args = append(args, textOr(v, f.Example))
				}
			}
			continue
		}
		// A cluster of shorthands: each takes no value, or the rest of
		// the word, or the next word.
		cluster := w.text[1:]
		for j := 0; j < len(cluster); j++ {
			f, ok := flags.short[cluster[j:j+1]]
			if !ok {
				if !w.known {
					s.all = &unknownValue{what: "proxy-await's flags", from: w.from, line: w.line}
					return s
				}
				break // the parser names it
			}
			note(f, w)
			if f.Bool {
				continue
			}
			if j+1 < len(cluster) {
				if !w.known {
					unknownValueOf(f, "-"+f.Shorthand, w)
					w.text = "-" + cluster[:j+1] + f.Example
				}
				break
			}
			if i+1 < len(inv.args) {
				v := inv.args[i+1]
				if !v.known {
					unknownValueOf(f, "-"+f.Shorthand, v)
				}
				args = append(args, w.text, textOr(v, f.Example))
				i++
				w.text = ""
			}
			break
		}
		if w.text != "" {
			args = append(args, w.text)
		}
	}

	// The variables: the shell's or env(1)'s assignments first, as the
	// first of a name wins; then the container's.
	var environ []string
	seen := map[string]bool{}
	variable := func(name string, v value, line int) {
		if seen[name] {
			return
		}
		seen[name] = true
		f, isFlag := flags.env[name]
		if isFlag && !given[f.Name] {
			s.lines[f.Name] = line
		}
		s.vars[name] = line
		switch {
		case v.known:
			environ = append(environ, name+"="+v.text)
		case isFlag && !given[f.Name]:
			s.unknown[f.Name] = unknownValue{what: "$" + name, from: v.from, line: line}
			environ = append(environ, name+"="+f.Example)
		case isDisableVar(name):
			s.unknown[disabledFlag] = unknownValue{what: "$" + name, from: v.from, line: line}
		}
	}
	for _, a := range inv.env {
		variable(a.name, value{text: a.value.text, known: a.value.known, from: a.value.from}, a.value.line)
	}
	for _, ev := range c.env {
		if v, ok := c.vars.vars[ev.name]; ok {
			variable(ev.name, v.value, v.line)
		}
	}
	for name, v := range c.vars.vars {
		variable(name, v.value, v.line) // from an envFrom of the input
	}
	for _, name := range inv.assigned {
		if f, ok := flags.env[name]; ok && !given[f.Name] && !seen[name] {
			s.unknown[f.Name] = unknownValue{what: "$" + name, from: "the script, which sets it", line: inv.line}
		}
	}
	if c.vars.open != "" {
		// An envFrom that the input does not hold may set any variable
		// that env does not.
		for env, f := range flags.env {
			if !given[f.Name] && !seen[env] && f.Name != "check" && f.Name != "install" && f.Name != "versions" {
				if _, ok := s.unknown[f.Name]; !ok {
					s.unknown[f.Name] = unknownValue{what: "$" + env, from: c.vars.open, line: c.vars.openLine, may: true}
				}
			}
		}
		for _, name := range config.DisableVars() {
			if !seen[name] {
				s.unknown[disabledFlag] = unknownValue{what: "$" + name, from: c.vars.open, line: c.vars.openLine, may: true}
			}
		}
	}

	cfg, err := flags.parse(args, environ)
	if err != nil {
		if u, ok := s.mentionsUnknown(err.Error()); ok {
			s.unknown["flags"] = u
			return s
		}
		s.err, s.errLine = err, s.lineOfError(err.Error(), inv)
		return s
	}
	s.cfg = cfg
	return s
}

// textOr is a word's text, or in place of an unknown word, alt.
func textOr(w word, alt string) string {
	if w.known {
		return w.text
	}
	return alt
}

// flagOf is the flag a word names: --name, --name=V or -x.
func flagOf(flags *flagTable, w string) (config.FlagInfo, bool) {
	if long, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		f, ok := flags.long[name]
		return f, ok
	}
	if len(w) >= 2 && w[0] == '-' {
		f, ok := flags.short[w[1:2]]
		return f, ok
	}
	return config.FlagInfo{}, false
}

func isDisableVar(name string) bool {
	for _, v := range config.DisableVars() {
		if v == name {
			return true
		}
	}
	return false
}

// mentionsUnknown says whether a usage error is about a value the input
// does not hold (it names its flag or variable): then it is not judged.
func (s *settings) mentionsUnknown(msg string) (unknownValue, bool) {
	for _, name := range slices.Sorted(maps.Keys(s.unknown)) {
		if u := s.unknown[name]; mentions(msg, "--"+name) || mentions(msg, u.what) {
			return u, true
		}
	}
	return unknownValue{}, false
}

// mentions says whether msg names flag, not a longer one that starts so.
func mentions(msg, flag string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], flag)
		if j < 0 {
			return false
		}
		end := i + j + len(flag)
		if end == len(msg) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz-", rune(msg[end])) {
			return true
		}
		i = end
	}
}

// lineOfError is the line of what a usage error is about: the variable or
// the flag it names, else the word it quotes, else proxy-await's own.
func (s *settings) lineOfError(msg string, inv invocation) int {
	for _, name := range slices.Sorted(maps.Keys(s.vars)) {
		if mentions(msg, "$"+name) {
			return s.vars[name]
		}
	}
	best, bestLen := 0, 0
	for _, w := range inv.args {
		if !w.known || !strings.HasPrefix(w.text, "-") || w.text == "--" {
			continue
		}
		name, _, _ := strings.Cut(w.text, "=")
		if (mentions(msg, name) || strings.Contains(msg, `"`+w.text+`"`)) && len(name) > bestLen {
			best, bestLen = w.line, len(name)
		}
	}
	if best > 0 {
		return best
	}
	for _, name := range slices.Sorted(maps.Keys(s.lines)) {
		if mentions(msg, "--"+name) {
			return s.lines[name]
		}
	}
	return inv.line
}

// lineOf is the line that sets the first of flags that is set, else 0.
func (s *settings) lineOf(flags ...string) int {
	for _, f := range flags {
		if line, ok := s.lines[f]; ok {
			return line
		}
	}
	return 0
}

// usage is a usage error as a finding's message: its text and its hint.
func usage(err error) (string, string) {
	var u *config.UsageError
	if errors.As(err, &u) {
		return u.Msg, u.Hint
	}
	return err.Error(), ""
}
