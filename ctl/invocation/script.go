// script.go: the simple commands of an sh -c script, as mvdan.cc/sh's
// parser reads it: every statement, wherever it sits (after ; && ||, in a
// pipeline, inside if, while, case, { } or a function, in a command
// substitution), with its words unquoted and expanded from the container's
// environment and the positional parameters. What the manifest does not
// hold (a variable set by the script or by the image, a command
// substitution) leaves its word unknown, never guessed.

package invocation

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// Bounds on reading scripts. A script longer than maxScriptBytes is not
// parsed (the parser's recursion follows the script's nesting, and a
// manifest's scalar may be megabytes of parentheses); its commands stay
// unknown. Command substitutions are read maxNesting deep inside each
// other, and so are the scripts that the shell runs for a script (a trap's
// action, eval's words, a nested sh -c): deeper ones stay unknown.
const (
	maxScriptBytes = 64 << 10
	maxNesting     = 8
)

// Why a command runs in a subshell, as messages say it.
const (
	inPipeline     = "in a pipeline (|)"
	inParentheses  = "in a subshell ( ... )"
	inBackground   = "in the background (&)"
	inSubstitution = "in a command substitution"
)

// part is a piece of a word: literal text, or a parameter to expand.
type part struct {
	lit     string
	param   string // a variable's name, "@" or a digit; "" for literal text
	def     string // ${VAR:-def} and ${VAR-def}: the default, as literal text
	op      string // ":-", "-", or "" for $VAR and ${VAR}
	quoted  bool   // inside quotes: not split into fields
	unknown bool   // a command substitution, arithmetic, or an expansion not read here
	raw     string // the text as written, for messages
	script  string // a command substitution's script, for messages
}

// rawWord is a word of a script before expansion, and where it starts.
type rawWord struct {
	parts []part
	at    int
}

// rawCommand is a simple command's words, before expansion, and why it
// runs in a subshell, if it does: an exec there replaces the subshell, and
// the shell stays.
type rawCommand struct {
	words []rawWord
	sub   string
}

// parsed is what a script's text holds: its simple commands, the
// variables it sets itself, and whether it changes its positional
// parameters.
type parsed struct {
	cmds     []rawCommand
	assigned map[string]bool
	shifted  bool
	// lone: the script is one statement, a simple command without
	// redirections, in the foreground.
	lone bool
}

// parse reads a script's text. A script that does not parse, or is past
// maxScriptBytes, holds no command that can be read.
func parse(text string) parsed {
	r := &reader{src: text, p: parsed{assigned: map[string]bool{}}}
	if len(text) > maxScriptBytes {
		return r.p
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return r.p
	}
	r.stmts(f.Stmts, "", 0)
	if len(f.Stmts) == 1 {
		s := f.Stmts[0]
		_, call := s.Cmd.(*syntax.CallExpr)
		r.p.lone = call && len(s.Redirs) == 0 && !s.Background && !s.Coprocess && !s.Negated
	}
	return r.p
}

// reader walks a parsed script for its simple commands.
type reader struct {
	src string
	p   parsed
}

// raw is a node's text as the script writes it.
func (r *reader) raw(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(r.src) || start > end {
		return ""
	}
	return r.src[start:end]
}

func (r *reader) stmts(list []*syntax.Stmt, sub string, depth int) {
	for _, s := range list {
		r.stmt(s, sub, depth)
	}
}

// stmt reads a statement: what it runs, and the command substitutions of
// its redirections. The innermost reason to run in a subshell is the one
// messages name.
func (r *reader) stmt(s *syntax.Stmt, sub string, depth int) {
	if s == nil {
		return
	}
	if s.Background || s.Coprocess {
		sub = inBackground
	}
	for _, rd := range s.Redirs {
		r.substitutions(rd.Word, depth)
		r.substitutions(rd.Hdoc, depth)
	}
	r.command(s.Cmd, sub, depth)
}

func (r *reader) command(c syntax.Command, sub string, depth int) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		r.call(c, sub, depth)
	case *syntax.DeclClause:
		words := []rawWord{r.literal(c.Variant)}
		for _, a := range c.Args {
			if a.Name != nil {
				r.p.assigned[a.Name.Value] = true
			}
			if w, ok := r.assignment(a, depth); ok {
				words = append(words, w)
			}
		}
		r.p.cmds = append(r.p.cmds, rawCommand{words, sub})
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			sub = inPipeline
		}
		r.stmt(c.X, sub, depth)
		r.stmt(c.Y, sub, depth)
	case *syntax.Subshell:
		r.stmts(c.Stmts, inParentheses, depth)
	case *syntax.Block:
		r.stmts(c.Stmts, sub, depth)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			r.stmts(c.Cond, sub, depth)
			r.stmts(c.Then, sub, depth)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond, sub, depth)
		r.stmts(c.Do, sub, depth)
	case *syntax.ForClause:
		if it, ok := c.Loop.(*syntax.WordIter); ok {
			r.p.assigned[it.Name.Value] = true
		}
		r.substitutions(c.Loop, depth)
		r.stmts(c.Do, sub, depth)
	case *syntax.CaseClause:
		r.substitutions(c.Word, depth)
		for _, it := range c.Items {
			r.stmts(it.Stmts, sub, depth)
		}
	case *syntax.FuncDecl:
		r.stmt(c.Body, sub, depth)
	case *syntax.TimeClause:
		r.stmt(c.Stmt, sub, depth)
	case *syntax.CoprocClause:
		r.stmt(c.Stmt, inBackground, depth)
	case nil:
	default: // [[ ]], (( )), let: no command, but substitutions
		r.substitutions(c, depth)
	}
}

// call reads a simple command: NAME=value words, then its arguments, each
// after the commands of its substitutions, which run first. NAME=value
// alone sets a variable of the script, as read, unset and getopts do; set
// and shift change the positional parameters.
func (r *reader) call(c *syntax.CallExpr, sub string, depth int) {
	var words []rawWord
	for _, a := range c.Assigns {
		if len(c.Args) == 0 && a.Name != nil {
			r.p.assigned[a.Name.Value] = true
		}
		if w, ok := r.assignment(a, depth); ok {
			words = append(words, w)
		}
	}
	for _, arg := range c.Args {
		r.substitutions(arg, depth)
		words = append(words, r.word(arg))
	}
	if len(words) == 0 {
		return
	}
	if len(c.Args) > 0 {
		switch c.Args[0].Lit() {
		case "read", "unset", "getopts":
			for _, arg := range c.Args[1:] {
				if name := arg.Lit(); syntax.ValidName(name) {
					r.p.assigned[name] = true
				}
			}
		case "set":
			for _, arg := range c.Args[1:] {
				if t := arg.Lit(); t == "--" || !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
					r.p.shifted = true
				}
			}
		case "shift":
			r.p.shifted = true
		}
	}
	r.p.cmds = append(r.p.cmds, rawCommand{words, sub})
}

// assignment is NAME=value as one word, after the commands of the
// value's substitutions; false for what is no such word (an array).
func (r *reader) assignment(a *syntax.Assign, depth int) (rawWord, bool) {
	if a.Name == nil || a.Array != nil || a.Index != nil {
		return rawWord{}, false
	}
	if a.Naked {
		return r.literal(a.Name), true
	}
	w := rawWord{at: int(a.Pos().Offset())}
	name := a.Name.Value + "="
	if a.Append {
		name = a.Name.Value + "+="
	}
	w.parts = append(w.parts, part{lit: name, raw: name})
	if a.Value != nil {
		r.substitutions(a.Value, depth)
		w.parts = append(w.parts, r.word(a.Value).parts...)
	}
	return w, true
}

// literal is a word of one literal.
func (r *reader) literal(l *syntax.Lit) rawWord {
	return rawWord{parts: []part{{lit: l.Value, raw: l.Value}}, at: int(l.Pos().Offset())}
}

// substitutions reads the commands of the command substitutions in n,
// maxNesting deep.
func (r *reader) substitutions(n syntax.Node, depth int) {
	if n == nil || n == (*syntax.Word)(nil) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			if depth < maxNesting {
				r.stmts(n.Stmts, inSubstitution, depth+1)
			}
			return false
		case *syntax.ProcSubst:
			if depth < maxNesting {
				r.stmts(n.Stmts, inSubstitution, depth+1)
			}
			return false
		}
		return true
	})
}

// word is a word's parts, quotes noted and escapes removed.
func (r *reader) word(w *syntax.Word) rawWord {
	out := rawWord{at: int(w.Pos().Offset())}
	for _, p := range w.Parts {
		out.parts = append(out.parts, r.parts(p, false)...)
	}
	return out
}

func (r *reader) parts(p syntax.WordPart, quoted bool) []part {
	raw := r.raw(p)
	switch p := p.(type) {
	case *syntax.Lit:
		return []part{{lit: unescape(p.Value, quoted), quoted: quoted, raw: raw}}
	case *syntax.SglQuoted:
		return []part{{lit: p.Value, quoted: true, raw: raw}} // $'...' keeps its escapes: rare in manifests
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return []part{{quoted: true, raw: raw}} // "" is an empty word
		}
		var out []part
		for _, in := range p.Parts {
			out = append(out, r.parts(in, true)...)
		}
		return out
	case *syntax.ParamExp:
		return []part{r.param(p, quoted, raw)}
	case *syntax.CmdSubst:
		script := strings.TrimSuffix(strings.TrimPrefix(raw, "$("), ")")
		if p.Backquotes {
			script = strings.Trim(raw, "`")
		}
		return []part{{unknown: true, quoted: quoted, raw: raw, script: script}}
	case *syntax.BraceExp, *syntax.ExtGlob:
		return []part{{lit: raw, quoted: quoted, raw: raw}}
	}
	return []part{{unknown: true, quoted: quoted, raw: raw}} // arithmetic, a process substitution
}

// param reads a parameter expansion: $VAR, ${VAR}, $1, "$@", and a
// default with ${VAR:-def} or ${VAR-def}; any other (${#VAR},
// ${VAR%suffix}, $?, $$) is unknown.
func (r *reader) param(p *syntax.ParamExp, quoted bool, raw string) part {
	out := part{quoted: quoted, raw: raw, unknown: true}
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 ||
		p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		return out
	}
	name := p.Param.Value
	if !syntax.ValidName(name) && !positionalName(name) {
		return out // $*, $#, $?, $$, $0 and the like
	}
	if e := p.Exp; e != nil {
		switch e.Op {
		case syntax.DefaultUnsetOrNull:
			out.op = ":-"
		case syntax.DefaultUnset:
			out.op = "-"
		default:
			return out
		}
		if e.Word != nil {
			out.def = strings.Trim(r.raw(e.Word), `"'`)
		}
	}
	out.param, out.unknown = name, false
	return out
}

// unescape removes a word's backslashes as the shell does: outside quotes
// each quotes the next character, inside double quotes only $ ` " \ and a
// line break; a backslash before a line break joins the lines.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
		default:
			b.WriteByte('\\')
			b.WriteByte(next)
		}
		i++
	}
	return b.String()
}

// text is a word's literal text when it is all literal, "" otherwise.
func (w rawWord) text() string {
	var b strings.Builder
	for _, p := range w.parts {
		if p.param != "" || p.unknown {
			return ""
		}
		b.WriteString(p.lit)
	}
	return b.String()
}

func positionalName(name string) bool {
	return name == "@" || len(name) == 1 && name[0] >= '1' && name[0] <= '9'
}

// script is a shell script of a container, ready to expand: its commands,
// the variables it sets itself, and the positional parameters it gets.
type script struct {
	src manifest.Scalar
	parsed
	positional []manifest.Word
	vars       *manifest.Variables
}

// newScript reads a script that the container's shell runs with the
// positional parameters positional.
func newScript(src manifest.Scalar, vars *manifest.Variables, positional []manifest.Word) *script {
	return &script{src: src, parsed: parse(src.Text), positional: positional, vars: vars}
}

// child is the script in w that the shell runs itself (a trap's action,
// eval's words), with the script's variables and parameters.
func (sc *script) child(w manifest.Word) *script {
	p := parse(w.Text)
	p.assigned, p.shifted = sc.assigned, sc.shifted
	return &script{src: manifest.Scalar{Text: w.Text, Line: w.Line}, parsed: p, positional: sc.positional, vars: sc.vars}
}

// command is a simple command of a script with its words expanded, and
// why it runs in a subshell, if it does.
type command struct {
	words []manifest.Word
	sub   string
}

// commands are the script's simple commands with their words expanded.
func (sc *script) commands() []command {
	var out []command
	for _, cmd := range sc.cmds {
		var words []manifest.Word
		for _, w := range cmd.words {
			words = append(words, sc.expand(w)...)
		}
		if len(words) > 0 {
			out = append(out, command{words, cmd.sub})
		}
	}
	return out
}

// expand is a word as the shell makes it: quotes removed, parameters
// expanded; an unquoted word that is one parameter is split into fields,
// and "$@" is one word for each positional parameter.
func (sc *script) expand(w rawWord) []manifest.Word {
	line := sc.src.LineAt(w.at)
	if len(w.parts) == 1 && w.parts[0].param == "@" && !sc.shifted {
		var out []manifest.Word
		for _, p := range sc.positional {
			out = append(out, manifest.Word{Text: p.Text, Known: p.Known, From: p.From, Line: line, Secret: p.Secret, Written: p.Written})
		}
		return out
	}
	out := manifest.Word{Known: true, Line: line, Folded: sc.src.Folded}
	var text, raw strings.Builder
	split := len(w.parts) == 1 && w.parts[0].param != "" && !w.parts[0].quoted
	for _, p := range w.parts {
		raw.WriteString(shownRaw(p))
		if p.param == "" && !p.unknown {
			text.WriteString(p.lit)
			continue
		}
		v := sc.param(p)
		out.Secret = out.Secret || v.Secret
		if !v.Known {
			out.Known = false
			if out.From == "" {
				out.From = v.From
			}
		}
		text.WriteString(v.Text)
	}
	if !out.Known {
		out.Text = raw.String() // as written, for messages
		return []manifest.Word{out}
	}
	out.Text = text.String()
	if out.Secret {
		out.Written = raw.String()
	}
	if split {
		var fields []manifest.Word
		for _, f := range strings.Fields(out.Text) {
			fields = append(fields, manifest.Word{Text: f, Known: true, Line: line, Folded: sc.src.Folded, Secret: out.Secret, Written: out.Written})
		}
		return fields
	}
	return []manifest.Word{out}
}

// param is the value of one expansion.
func (sc *script) param(p part) manifest.Value {
	switch {
	case p.unknown:
		return manifest.Value{From: shownRaw(p) + ", which the shell computes when the pod starts"}
	case positionalName(p.param):
		n := int(p.param[0] - '1')
		switch {
		case sc.shifted:
			return manifest.Value{From: shownRaw(p) + ", after the script changes its positional parameters"}
		case p.param == "@":
			var parts []string
			for _, w := range sc.positional {
				if !w.Known {
					return manifest.Value{From: w.From}
				}
				parts = append(parts, w.Text)
			}
			return manifest.Value{Text: strings.Join(parts, " "), Known: true}
		case n < len(sc.positional):
			w := sc.positional[n]
			return manifest.Value{Text: w.Text, Known: w.Known, From: w.From, Secret: w.Secret}
		}
		return manifest.Value{Known: true} // not given
	case sc.assigned[p.param]:
		return manifest.Value{From: "the shell variable $" + p.param + ", which the script sets"}
	}
	v, set := sc.vars.Get(p.param)
	switch {
	case !v.Known:
		return manifest.Value{From: "the shell variable $" + p.param + ", which comes from " + v.From}
	case !set:
		return manifest.Value{From: "the shell variable $" + p.param + ", which the manifest does not set (the image may)"}
	case p.op == ":-" && v.Text == "":
		return manifest.Value{Text: p.def, Known: true, Secret: manifest.SecretName(p.param)}
	}
	v.Secret = v.Secret || manifest.SecretName(p.param)
	return v
}

// shownRaw is an expansion as messages show it: as written, but for what
// may be a credential: a command substitution shows only the program it
// runs ($(curl ...)), a default value (${VAR:-default}) only as far as a
// URL may be shown, or not at all under a name that says it is a secret.
func shownRaw(p part) string {
	switch {
	case strings.HasPrefix(p.raw, "$(") && !strings.HasPrefix(p.raw, "$(("), strings.HasPrefix(p.raw, "`"):
		open, end := "$(", ")"
		if p.raw[0] == '`' {
			open, end = "`", "`"
		}
		fields := strings.Fields(p.script)
		switch {
		case len(fields) == 0 || !redact.IsName(strings.ReplaceAll(fields[0], "/", "")):
			return open + "..." + end
		case len(fields) == 1:
			return open + fields[0] + end
		}
		return open + fields[0] + " ..." + end
	case p.def != "":
		def := redact.Word(p.def)
		switch {
		case manifest.SecretName(p.param):
			def = redact.Mask
		case strings.ContainsAny(p.def, "$`"):
			def = "..."
		}
		return "${" + p.param + p.op + def + "}"
	}
	return p.raw
}

// isAssignment says whether a word is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && syntax.ValidName(name)
}
