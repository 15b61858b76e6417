// settings.go: proxy-await's settings in a container, read with config's
// own parser from the arguments and the variables the container gives it,
// with what the manifest does not hold set apart: such a value is replaced
// by one the flag accepts for the parse, and every rule that reads it is
// not judged.

package invocation

import (
	"maps"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// DisabledFlag stands for the variables that skip the readiness wait
// (config.DisableVars), which no flag sets.
const DisabledFlag = "disabled"

// Settings are proxy-await's settings in one container.
type Settings struct {
	Config  *config.Config              // nil when a start would refuse them, or a flag is not known
	Err     error                       // the usage error a start would print
	ErrLine int                         // the line it is about
	Unknown map[string]manifest.Unknown // by flag name (or DisabledFlag): values the input does not hold
	All     *manifest.Unknown           // a word where flags go that the input does not hold: no flag is known
	Lines   map[string]int              // by flag name: the line that sets it
	Vars    map[string]int              // by variable: the line that sets it
	Split   *manifest.Word              // a flag and its value written as one word ("--timeout 60s")
}

// FlagTable is proxy-await's flags, by long name, by shorthand and by
// variable, and the command lines parsed so far.
type FlagTable struct {
	long, short, env map[string]config.FlagInfo
	parsed           map[string]parseResult
}

// parseResult is what config's parser made of a command line and environment.
type parseResult struct {
	cfg *config.Config
	err error
}

// parse is config.ParseEnviron, once for each command line and environment:
// a List of a thousand Deployments has a thousand alike. The config is
// shared, and only read.
func (t *FlagTable) parse(args, environ []string) (*config.Config, error) {
	slices.Sort(environ)
	key := strings.Join(args, "\x00") + "\x01" + strings.Join(environ, "\x00")
	p, ok := t.parsed[key]
	if !ok {
		p.cfg, p.err = config.ParseEnviron("proxy-await", args, environ)
		t.parsed[key] = p
	}
	return p.cfg, p.err
}

// NewFlagTable is a table of proxy-await's flags that has parsed nothing
// yet.
func NewFlagTable() *FlagTable {
	t := &FlagTable{map[string]config.FlagInfo{}, map[string]config.FlagInfo{}, map[string]config.FlagInfo{}, map[string]parseResult{}}
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

// settingsReader reads one container's settings: the words and variables it
// passes to config's parser, and what it learns of each flag on the way.
type settingsReader struct {
	s       Settings
	flags   *FlagTable
	args    []string
	environ []string
	given   map[string]bool // flags set on the command line
	seen    map[string]bool // variables read
	// stand-ins are the positions in args, and the variables of environ,
	// that stand for a value the input does not hold.
	standArgs map[int]bool
	standEnv  map[string]bool
}

// ReadSettings reads the settings of inv in container c.
func ReadSettings(inv *Invocation, c *manifest.Container, flags *FlagTable) Settings {
	r := &settingsReader{
		s:     Settings{Unknown: map[string]manifest.Unknown{}, Lines: map[string]int{}, Vars: map[string]int{}},
		flags: flags, given: map[string]bool{}, seen: map[string]bool{},
		standArgs: map[int]bool{}, standEnv: map[string]bool{},
	}
	if !r.readArgs(inv.Args) {
		return r.s
	}
	r.readVariables(inv, c)
	cfg, err := flags.parse(r.args, r.environ)
	switch {
	case err == nil:
		r.s.Config = cfg
	case r.mentionsUnknown(err):
		// A start may refuse the flags with that value, or not: the rules
		// that do not read it are judged without it.
		if cfg, err := flags.parse(r.withoutStandIns()); err == nil {
			r.s.Config = cfg
		}
	default:
		r.s.Err, r.s.ErrLine = err, r.s.lineOfError(err.Error(), inv)
	}
	return r.s
}

// readArgs reads proxy-await's words, each value the input does not hold
// replaced by one its flag accepts; false when a word where a flag may go
// is not known, which leaves no flag known.
func (r *settingsReader) readArgs(words []manifest.Word) bool {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w.Known && (w.Text == "--" || w.Text == "-" || !strings.HasPrefix(w.Text, "-")) {
			for _, rest := range words[i:] {
				r.args = append(r.args, textOr(rest, "x")) // the command: no rule reads it
			}
			return true
		}
		if fields := strings.Fields(w.Text); w.Known && len(fields) > 1 && r.s.Split == nil {
			if _, ok := flagOf(r.flags, fields[0]); ok {
				split := w
				r.s.Split = &split
			}
		}
		f, written, inWord, ok := r.flagIn(w)
		switch {
		case !ok && !w.Known:
			r.s.All = &manifest.Unknown{What: "proxy-await's flags", From: w.From, Line: w.Line}
			return false
		case !ok:
			r.args = append(r.args, w.Text) // the parser names it
			continue
		}
		r.given[f.Name] = true
		r.s.Lines[f.Name] = w.Line
		switch {
		case f.Bool || inWord && w.Known:
			r.args = append(r.args, w.Text)
		case inWord:
			r.unknown(f, written, w)
			r.standArgs[len(r.args)] = true
			r.args = append(r.args, written+"="+f.Example)
		case i+1 < len(words):
			i++
			if !words[i].Known {
				r.unknown(f, written, words[i])
				r.standArgs[len(r.args)], r.standArgs[len(r.args)+1] = true, true
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
func (r *settingsReader) flagIn(w manifest.Word) (f config.FlagInfo, written string, inWord, ok bool) {
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
		r.s.Lines[f.Name] = w.Line
	}
	return f, "-" + f.Shorthand, false, ok
}

// unknown notes that a flag's value, in word w, is not in the input.
func (r *settingsReader) unknown(f config.FlagInfo, written string, w manifest.Word) {
	r.s.Unknown[f.Name] = manifest.Unknown{What: written, From: w.From, Line: w.Line}
}

// readVariables reads the variables proxy-await would see: the shell's or
// env(1)'s assignments first, as the first of a name wins; then the
// container's. A variable the input does not hold stands for its flag's
// value, unless the command line sets the flag.
func (r *settingsReader) readVariables(inv *Invocation, c *manifest.Container) {
	for _, a := range inv.Env {
		r.variable(a.Name, manifest.Value{Text: a.Value.Text, Known: a.Value.Known, From: a.Value.From}, a.Value.Line)
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
	for _, name := range inv.Assigned {
		if f, ok := r.flags.env[name]; ok && !r.given[f.Name] && !r.seen[name] {
			r.s.Unknown[f.Name] = manifest.Unknown{What: "$" + name, From: "the script, which sets it", Line: inv.Line}
		}
	}
	if c.Vars.Open == "" {
		return
	}
	// An envFrom that the input does not hold may set any variable that
	// env does not.
	may := func(flag, name string) {
		if _, ok := r.s.Unknown[flag]; !ok && !r.seen[name] {
			r.s.Unknown[flag] = manifest.Unknown{What: "$" + name, From: c.Vars.Open, Line: c.Vars.OpenLine, May: true}
		}
	}
	for _, f := range config.Flags() {
		if !r.given[f.Name] && f.Env != "" && f.Name != "check" && f.Name != "install" && f.Name != "versions" {
			may(f.Name, f.Env)
		}
	}
	for _, name := range config.DisableVars() {
		may(DisabledFlag, name)
	}
}

// variable reads one variable, once.
func (r *settingsReader) variable(name string, v manifest.Value, line int) {
	if r.seen[name] {
		return
	}
	r.seen[name] = true
	f, isFlag := r.flags.env[name]
	isFlag = isFlag && !r.given[f.Name]
	if isFlag {
		r.s.Lines[f.Name] = line
	}
	r.s.Vars[name] = line
	switch {
	case v.Known:
		r.environ = append(r.environ, name+"="+v.Text)
	case isFlag:
		r.s.Unknown[f.Name] = manifest.Unknown{What: "$" + name, From: v.From, Line: line}
		r.standEnv[name] = true
		r.environ = append(r.environ, name+"="+f.Example)
	case isDisableVar(name):
		r.s.Unknown[DisabledFlag] = manifest.Unknown{What: "$" + name, From: v.From, Line: line}
	}
}

// mentionsUnknown says whether a usage error is about a value the input
// does not hold (it names its flag or variable): then it is not judged.
func (r *settingsReader) mentionsUnknown(err error) bool {
	msg := err.Error()
	for _, name := range slices.Sorted(maps.Keys(r.s.Unknown)) {
		if u := r.s.Unknown[name]; Mentions(msg, "--"+name) || Mentions(msg, u.What) {
			r.s.Unknown["flags"] = u
			return true
		}
	}
	return false
}

// withoutStandIns are the arguments and the environment without the
// stand-ins for values the input does not hold: each such flag as if it
// were not given.
func (r *settingsReader) withoutStandIns() ([]string, []string) {
	var args, environ []string
	for i, a := range r.args {
		if !r.standArgs[i] {
			args = append(args, a)
		}
	}
	for _, kv := range r.environ {
		if name, _, _ := strings.Cut(kv, "="); !r.standEnv[name] {
			environ = append(environ, kv)
		}
	}
	return args, environ
}

// textOr is a word's text, or in place of an unknown word, alt.
func textOr(w manifest.Word, alt string) string {
	if w.Known {
		return w.Text
	}
	return alt
}

// flagOf is the flag a word names: --name, --name=V or -x.
func flagOf(flags *FlagTable, w string) (config.FlagInfo, bool) {
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

// Mentions says whether msg names flag, not a longer one that starts so.
func Mentions(msg, flag string) bool {
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
func (s *Settings) lineOfError(msg string, inv *Invocation) int {
	for _, name := range slices.Sorted(maps.Keys(s.Vars)) {
		if Mentions(msg, "$"+name) {
			return s.Vars[name]
		}
	}
	best, bestLen := 0, 0
	for _, w := range inv.Args {
		if !w.Known || !strings.HasPrefix(w.Text, "-") || w.Text == "--" {
			continue
		}
		name, _, _ := strings.Cut(w.Text, "=")
		if (Mentions(msg, name) || strings.Contains(msg, `"`+w.Text+`"`)) && len(name) > bestLen {
			best, bestLen = w.Line, len(name)
		}
	}
	if best > 0 {
		return best
	}
	for _, name := range slices.Sorted(maps.Keys(s.Lines)) {
		if Mentions(msg, "--"+name) {
			return s.Lines[name]
		}
	}
	return inv.Line
}

// LineOf is the line that sets the first of flags that is set, else 0.
func (s *Settings) LineOf(flags ...string) int {
	for _, f := range flags {
		if line, ok := s.Lines[f]; ok {
			return line
		}
	}
	return 0
}
