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
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/internal/hint"
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
	split   *manifest.Word          // a flag and its value written as one word ("--timeout 60s")
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

// reader reads one container's settings: the words and variables it
// passes to config's parser, and what it learns of each flag on the way.
type reader struct {
	s       settings
	flags   *flagTable
	args    []string
	environ []string
	given   map[string]bool // flags set on the command line
	seen    map[string]bool // variables read
}

// readSettings reads the settings of inv in container c.
func readSettings(inv invocation, c *manifest.Container, flags *flagTable) settings {
	r := &reader{
		s:     settings{unknown: map[string]unknownValue{}, lines: map[string]int{}, vars: map[string]int{}},
		flags: flags, given: map[string]bool{}, seen: map[string]bool{},
	}
	if !r.readArgs(inv.args) {
		return r.s
	}
	r.readVariables(inv, c)
	cfg, err := flags.parse(r.args, r.environ)
	switch {
	case err == nil:
		r.s.cfg = cfg
	case r.mentionsUnknown(err):
	default:
		r.s.err, r.s.errLine = err, r.s.lineOfError(err.Error(), inv)
	}
	return r.s
}

// readArgs reads proxy-await's words, each value the input does not hold
// replaced by one its flag accepts; false when a word where a flag may go
// is not known, which leaves no flag known.
func (r *reader) readArgs(words []manifest.Word) bool {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w.Known && (w.Text == "--" || w.Text == "-" || !strings.HasPrefix(w.Text, "-")) {
			for _, rest := range words[i:] {
				r.args = append(r.args, textOr(rest, "x")) // the command: no rule reads it
			}
			return true
		}
		if fields := strings.Fields(w.Text); w.Known && len(fields) > 1 && r.s.split == nil {
			if _, ok := flagOf(r.flags, fields[0]); ok {
				split := w
				r.s.split = &split
			}
		}
		f, written, inWord, ok := r.flagIn(w)
		switch {
		case !ok && !w.Known:
			r.s.all = &unknownValue{what: "proxy-await's flags", from: w.From, line: w.Line}
			return false
		case !ok:
			r.args = append(r.args, w.Text) // the parser names it
			continue
		}
		r.given[f.Name] = true
		r.s.lines[f.Name] = w.Line
		switch {
		case f.Bool || inWord && w.Known:
			r.args = append(r.args, w.Text)
		case inWord:
			r.unknown(f, written, w)
			r.args = append(r.args, written+"="+f.Example)
		case i+1 < len(words):
			i++
			if !words[i].Known {
				r.unknown(f, written, words[i])
			}
			r.args = append(r.args, w.Text, textOr(words[i], f.Example))
		default:
			r.args = append(r.args, w.Text) // the parser says it needs a value
		}
	}
	return true
}

// flagIn is the flag a word sets that takes a value, or else its last
// boolean: --name[=V], or a cluster of shorthands (-Sb 1s, -t5s); written
// is the flag as written, and inWord says the value is in the word.
func (r *reader) flagIn(w manifest.Word) (f config.FlagInfo, written string, inWord, ok bool) {
	if long, isLong := strings.CutPrefix(w.Text, "--"); isLong {
		name, _, hasValue := strings.Cut(long, "=")
		f, ok = r.flags.long[name]
		return f, "--" + name, hasValue, ok
	}
	cluster := w.Text[1:]
	for j := 0; j < len(cluster); j++ {
		f, ok = r.flags.short[cluster[j:j+1]]
		if !ok {
			return f, "", false, false
		}
		if !f.Bool {
			return f, "-" + f.Shorthand, j+1 < len(cluster), true
		}
		r.given[f.Name] = true
		r.s.lines[f.Name] = w.Line
	}
	return f, "-" + f.Shorthand, false, ok
}

// unknown notes that a flag's value, in word w, is not in the input.
func (r *reader) unknown(f config.FlagInfo, written string, w manifest.Word) {
	r.s.unknown[f.Name] = unknownValue{what: written, from: w.From, line: w.Line}
}

// readVariables reads the variables proxy-await would see: the shell's or
// env(1)'s assignments first, as the first of a name wins; then the
// container's. A variable the input does not hold stands for its flag's
// value, unless the command line sets the flag.
func (r *reader) readVariables(inv invocation, c *manifest.Container) {
	for _, a := range inv.env {
		r.variable(a.name, manifest.Value{Text: a.value.Text, Known: a.value.Known, From: a.value.From}, a.value.Line)
	}
	for _, ev := range c.Env {
		if v, ok := c.Vars.Set[ev.Name]; ok {
			r.variable(ev.Name, v.Value, v.Line)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Vars.Set)) {
		v := c.Vars.Set[name]
		r.variable(name, v.Value, v.Line) // from an envFrom of the input
	}
	for _, name := range inv.assigned {
		if f, ok := r.flags.env[name]; ok && !r.given[f.Name] && !r.seen[name] {
			r.s.unknown[f.Name] = unknownValue{what: "$" + name, from: "the script, which sets it", line: inv.line}
		}
	}
	if c.Vars.Open == "" {
		return
	}
	// An envFrom that the input does not hold may set any variable that
	// env does not.
	may := func(flag, name string) {
		if _, ok := r.s.unknown[flag]; !ok && !r.seen[name] {
			r.s.unknown[flag] = unknownValue{what: "$" + name, from: c.Vars.Open, line: c.Vars.OpenLine, may: true}
		}
	}
	for _, f := range config.Flags() {
		if !r.given[f.Name] && f.Env != "" && f.Name != "check" && f.Name != "install" && f.Name != "versions" {
			may(f.Name, f.Env)
		}
	}
	for _, name := range config.DisableVars() {
		may(disabledFlag, name)
	}
}

// variable reads one variable, once.
func (r *reader) variable(name string, v manifest.Value, line int) {
	if r.seen[name] {
		return
	}
	r.seen[name] = true
	f, isFlag := r.flags.env[name]
	isFlag = isFlag && !r.given[f.Name]
	if isFlag {
		r.s.lines[f.Name] = line
	}
	r.s.vars[name] = line
	switch {
	case v.Known:
		r.environ = append(r.environ, name+"="+v.Text)
	case isFlag:
		r.s.unknown[f.Name] = unknownValue{what: "$" + name, from: v.From, line: line}
		r.environ = append(r.environ, name+"="+f.Example)
	case isDisableVar(name):
		r.s.unknown[disabledFlag] = unknownValue{what: "$" + name, from: v.From, line: line}
	}
}

// mentionsUnknown says whether a usage error is about a value the input
// does not hold (it names its flag or variable): then it is not judged.
func (r *reader) mentionsUnknown(err error) bool {
	msg := err.Error()
	for _, name := range slices.Sorted(maps.Keys(r.s.unknown)) {
		if u := r.s.unknown[name]; mentions(msg, "--"+name) || mentions(msg, u.what) {
			r.s.unknown["flags"] = u
			return true
		}
	}
	return false
}

// textOr is a word's text, or in place of an unknown word, alt.
func textOr(w manifest.Word, alt string) string {
	if w.Known {
		return w.Text
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
		if !w.Known || !strings.HasPrefix(w.Text, "-") || w.Text == "--" {
			continue
		}
		name, _, _ := strings.Cut(w.Text, "=")
		if (mentions(msg, name) || strings.Contains(msg, `"`+w.Text+`"`)) && len(name) > bestLen {
			best, bestLen = w.Line, len(name)
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
		return u.Error(), hint.Of(u)
	}
	return err.Error(), ""
}
