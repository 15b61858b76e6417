// shell.go: the simple commands of an sh -c script, as far as --check
// needs them: every statement, wherever it sits (after ; && ||, in a
// pipeline, inside if, while, case, { } or a function), with its words
// unquoted and expanded from the container's environment and the
// positional parameters. What the manifest does not hold (a variable set
// by the script or by the image, a command substitution) leaves its word
// unknown, never guessed.
//
// A full POSIX parser (mvdan.cc/sh/v3/syntax) would cost more than the
// binary-size budget allows for a check that every start of proxy-await
// carries (BENCHMARKS.md); this reader covers what manifests write and
// marks the rest unknown.

package check

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// part is a piece of a word: literal text, or a parameter to expand.
type part struct {
	lit     string
	param   string // a variable's name, "@" or a digit; "" for literal text
	def     string // ${VAR:-def} and ${VAR-def}: the default, as literal text
	op      string // ":-", "-", or "" for $VAR and ${VAR}
	quoted  bool   // inside double quotes: not split into fields
	unknown bool   // a command substitution, arithmetic, or an expansion not read here
	raw     string // the text as written, for messages
	// A command substitution's script, and where it starts in raw.
	script   string
	scriptAt int
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

// Why a command runs in a subshell, as messages say it.
const (
	inPipeline     = "in a pipeline (|)"
	inParentheses  = "in a subshell ( ... )"
	inBackground   = "in the background (&)"
	inSubstitution = "in a command substitution"
)

// maxNesting bounds how deep command substitutions are read inside each
// other: deeper ones stay unknown words.
const maxNesting = 8

// reserved says whether a word opens or closes a compound command: a
// simple command may follow it in the same statement.
func reserved(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time", "esac":
		return true
	}
	return false
}

// lexScript splits a script into its simple commands.
func lexScript(s string) []rawCommand {
	l := &lexer{s: s}
	l.run()
	return l.cmds
}

func (l *lexer) run() {
	for l.i < len(l.s) {
		l.step()
	}
	l.endCommand()
}

// lexer reads a script a construct at a time: step reads the one that
// starts at i, quoted text, an expansion, a comment, a redirection or an
// operator, each with its method, and moves i past it.
type lexer struct {
	s        string
	i        int             // where the next construct starts
	base     int             // where s starts in the whole script (a command substitution's)
	nesting  int             // how many command substitutions s is inside
	cmds     []rawCommand    // the commands read
	cur      []rawWord       // the words of the command being read
	w        *rawWord        // the word being read; nil between words
	lit      strings.Builder // the word's literal text not yet in its parts
	heredocs []string        // delimiters whose bodies start after the line
	skipWord bool            // the next word is a redirection's target
	parens   []bool          // the ( ) open around i: true for a subshell
	piped    bool            // the next command is the right side of a |
}

// step reads the construct at i.
func (l *lexer) step() {
	s, i := l.s, l.i
	switch ch := s[i]; {
	case ch == '\\' && i+1 < len(s):
		l.escaped()
	case ch == '\'':
		l.singleQuoted()
	case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
		l.ansiQuoted()
	case ch == '"':
		l.doubleQuoted()
	case ch == '$' || ch == '`':
		l.start(i)
		l.flushLit(false)
		p, next := expansion(s, i, false)
		l.substitution(p, i)
		l.w.parts = append(l.w.parts, p)
		l.i = next
	case ch == '#' && l.w == nil:
		l.comment()
	case ch == '<' || ch == '>' || ch == '&' && i+1 < len(s) && s[i+1] == '>':
		l.redirection()
	case ch == '\n':
		l.endCommand()
		l.hereDocBodies()
	case ch == '(' || ch == ')':
		l.parenthesis(ch)
	case ch == '|' || ch == '&':
		l.control(ch)
	case ch == ';':
		l.endCommand()
		l.skipWord = false
		l.i++
	case ch == ' ' || ch == '\t' || ch == '\r':
		l.endWord()
		l.i++
	default:
		l.start(i)
		l.lit.WriteByte(ch)
		l.i++
	}
}

// start begins a word at at, unless one is being read.
func (l *lexer) start(at int) {
	if l.w == nil {
		l.w = &rawWord{at: l.base + at}
	}
}

// parenthesis reads ( or ): one at the start of a command opens a
// subshell, whose commands run in a process of their own; (( opens
// arithmetic, and any other ( a function's f() or a case pattern.
func (l *lexer) parenthesis(ch byte) {
	atStart := l.w == nil && len(l.cur) == 0
	l.endCommand()
	l.skipWord = false
	l.i++
	switch {
	case ch == '(':
		l.parens = append(l.parens, atStart && (l.i >= len(l.s) || l.s[l.i] != '('))
	case len(l.parens) > 0:
		l.parens = l.parens[:len(l.parens)-1]
	}
}

// control reads | or &: || and && join commands that the shell runs
// itself, while each side of a pipe, and a command sent to the
// background, runs in a subshell.
func (l *lexer) control(ch byte) {
	double := l.i+1 < len(l.s) && l.s[l.i+1] == ch
	ended := l.endCommand()
	l.skipWord = false
	if double {
		l.i += 2
		return
	}
	l.i++
	why := inBackground
	if ch == '|' {
		why, l.piped = inPipeline, true
		if l.i < len(l.s) && l.s[l.i] == '&' {
			l.i++ // |& pipes stderr too
		}
	}
	if ended && l.cmds[len(l.cmds)-1].sub == "" {
		l.cmds[len(l.cmds)-1].sub = why
	}
}

// substitution reads the commands of a command substitution, $(...) or
// `...`, which run in a subshell before the command that holds it.
func (l *lexer) substitution(p part, at int) {
	if p.script == "" || l.nesting >= maxNesting {
		return
	}
	inner := &lexer{s: p.script, base: l.base + at + p.scriptAt, nesting: l.nesting + 1}
	inner.run()
	for _, c := range inner.cmds {
		c.sub = inSubstitution
		l.cmds = append(l.cmds, c)
	}
}

// flushLit ends the word's literal text so far as a part.
func (l *lexer) flushLit(quoted bool) {
	if l.lit.Len() > 0 {
		l.w.parts = append(l.w.parts, part{lit: l.lit.String(), quoted: quoted, raw: l.lit.String()})
		l.lit.Reset()
	}
}

// endWord ends the word being read, if any: a word of the command, or a
// redirection's target, which is none.
func (l *lexer) endWord() {
	if l.w == nil {
		return
	}
	l.flushLit(false)
	if l.skipWord {
		l.skipWord = false
	} else {
		l.cur = append(l.cur, *l.w)
	}
	l.w = nil
}

// endCommand ends the statement being read and keeps its simple command;
// it says whether there was one.
func (l *lexer) endCommand() bool {
	l.endWord()
	cur := l.cur
	// Reserved words at the start of a statement open a compound
	// command; the command proper follows them.
	for len(cur) > 0 && reserved(cur[0].text()) {
		cur = cur[1:]
	}
	if len(cur) > 0 {
		switch cur[0].text() {
		case "function":
			cur = nil // function NAME: its body follows
		case "case":
			cur = nil // case WORD in: the items follow, each after its ")"
		}
	}
	l.cur = nil
	if len(cur) == 0 {
		return false
	}
	c := rawCommand{words: cur}
	switch {
	case slices.Contains(l.parens, true):
		c.sub = inParentheses
	case l.piped:
		c.sub = inPipeline
	}
	l.piped = false
	l.cmds = append(l.cmds, c)
	return true
}

// escaped reads a backslash and the byte it quotes; a backslash before a
// line break joins the lines.
func (l *lexer) escaped() {
	if ch := l.s[l.i+1]; ch != '\n' {
		l.start(l.i)
		l.lit.WriteByte(ch)
	}
	l.i += 2
}

// singleQuoted reads '...': literal text, to the next quote or the end.
func (l *lexer) singleQuoted() {
	s, i := l.s, l.i
	l.start(i)
	end := strings.IndexByte(s[i+1:], '\'')
	if end < 0 {
		end = len(s) - i - 1
	}
	l.flushLit(false)
	l.w.parts = append(l.w.parts, part{lit: s[i+1 : i+1+end], quoted: true, raw: s[i:min(len(s), i+end+2)]})
	l.i = i + end + 2
}

// ansiQuoted reads $'...': ANSI-C quoting; its escapes are rare in
// manifests, so they are kept as written.
func (l *lexer) ansiQuoted() {
	s, i := l.s, l.i
	l.start(i)
	l.flushLit(false)
	j := i + 2
	for j < len(s) && s[j] != '\'' {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	l.w.parts = append(l.w.parts, part{lit: s[i+2 : min(j, len(s))], quoted: true, raw: s[i:min(len(s), j+1)]})
	l.i = j + 1
}

// doubleQuoted reads "...": literal text and expansions, none split into
// fields, to the next unescaped quote or the end.
func (l *lexer) doubleQuoted() {
	s, i := l.s, l.i
	l.start(i)
	l.flushLit(false)
	for i++; i < len(s) && s[i] != '"'; i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
			i++
			if s[i] != '\n' {
				l.lit.WriteByte(s[i])
			}
		case s[i] == '$' || s[i] == '`':
			l.flushLit(true)
			p, next := expansion(s, i, true)
			l.substitution(p, i)
			l.w.parts = append(l.w.parts, p)
			i = next - 1
		default:
			l.lit.WriteByte(s[i])
		}
	}
	l.flushLit(true)
	if len(l.w.parts) == 0 {
		l.w.parts = append(l.w.parts, part{quoted: true, raw: `""`}) // "" is an empty word
	}
	l.i = i + 1
}

// comment reads a comment, up to the line break that ends the command.
func (l *lexer) comment() {
	for l.i < len(l.s) && l.s[l.i] != '\n' {
		l.i++
	}
}

// redirection reads a redirection's operator: an fd number before it is
// no word, nor is its target after it. "<<" opens a here-document.
func (l *lexer) redirection() {
	if l.w != nil && l.lit.Len() > 0 && len(l.w.parts) == 0 && isDigits(l.lit.String()) {
		l.lit.Reset()
		l.w = nil
	}
	l.endWord()
	s, i := l.s, l.i
	if strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<") {
		l.hereDoc()
		return
	}
	for i+1 < len(s) && strings.IndexByte("<>&|-", s[i+1]) >= 0 {
		i++
	}
	l.skipWord = true
	l.i = i + 1
}

// hereDoc reads "<<" or "<<-" and the delimiter after it, whose body
// starts after the line.
func (l *lexer) hereDoc() {
	s := l.s
	j := l.i + 2
	if j < len(s) && s[j] == '-' {
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	k := j
	for k < len(s) && strings.IndexByte(" \t\n;&|<>()", s[k]) < 0 {
		k++
	}
	l.heredocs = append(l.heredocs, strings.Trim(s[j:k], `'"\`))
	l.i = k
}

// hereDocBodies reads the line break at i and the bodies of the
// here-documents opened on the line it ends, each to a line that is its
// delimiter alone.
func (l *lexer) hereDocBodies() {
	s, i := l.s, l.i
	for _, delim := range l.heredocs {
		for i+1 < len(s) {
			end := strings.IndexByte(s[i+1:], '\n')
			if end < 0 {
				i = len(s)
				break
			}
			line := s[i+1 : i+1+end]
			i += end + 1
			if strings.TrimLeft(line, "\t") == delim {
				break
			}
		}
	}
	l.heredocs = nil
	l.i = i + 1
}

// expansion reads the $ or ` expansion at s[i] and returns it and the
// index after it.
func expansion(s string, i int, quoted bool) (part, int) {
	unknown := func(end int) (part, int) {
		end = min(end, len(s))
		return part{unknown: true, quoted: quoted, raw: s[i:end]}, end
	}
	// substituted is a command substitution whose script is s[from:end-1].
	substituted := func(from, end int) (part, int) {
		p, next := unknown(end)
		p.script, p.scriptAt = s[min(from, len(s)):max(from, min(end-1, len(s)))], from-i
		return p, next
	}
	if s[i] == '`' {
		end := strings.IndexByte(s[i+1:], '`')
		if end < 0 {
			return substituted(i+1, len(s)+1)
		}
		return substituted(i+1, i+end+2)
	}
	if i+1 >= len(s) {
		return part{lit: "$", quoted: quoted, raw: "$"}, i + 1
	}
	switch ch := s[i+1]; {
	case ch == '(' && i+2 < len(s) && s[i+2] == '(':
		return unknown(parenEnd(s, i+1)) // $((expr))
	case ch == '(':
		end := parenEnd(s, i+1)
		if s[end-1] != ')' {
			return substituted(i+2, end+1) // not closed: to the end
		}
		return substituted(i+2, end)
	case ch == '{':
		return braced(s, i, quoted)
	case ch == '@' || ch >= '1' && ch <= '9':
		return part{param: string(ch), quoted: quoted, raw: s[i : i+2]}, i + 2
	case ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z':
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return part{param: s[i+1 : j], quoted: quoted, raw: s[i:j]}, j
	case strings.IndexByte("*#?$!-0", ch) >= 0:
		return unknown(i + 2) // $*, $#, $?, $$ and the like
	}
	return part{lit: "$", quoted: quoted, raw: "$"}, i + 1
}

// parenEnd is the index after the parenthesis that closes the one at
// s[open], or len(s) if none does; quoted text inside is skipped.
func parenEnd(s string, open int) int {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '\'', '"':
			if end := strings.IndexByte(s[j+1:], s[j]); end >= 0 {
				j += end + 1
			}
		}
	}
	return len(s)
}

// braced reads the ${...} at s[i] and returns it and the index after it.
func braced(s string, i int, quoted bool) (part, int) {
	end := strings.IndexByte(s[i:], '}')
	if end < 0 {
		return part{unknown: true, quoted: quoted, raw: s[i:]}, len(s)
	}
	expr := s[i+2 : i+end]
	p := part{quoted: quoted, raw: s[i : i+end+1]}
	name, def, colon := strings.Cut(expr, ":-")
	switch {
	case colon:
		p.param, p.def, p.op = name, def, ":-"
	case strings.Contains(expr, "-") && validName(expr[:strings.IndexByte(expr, '-')]):
		p.param, p.def, p.op = expr[:strings.IndexByte(expr, '-')], expr[strings.IndexByte(expr, '-')+1:], "-"
	default:
		p.param = expr
	}
	if !validName(p.param) && !positionalName(p.param) {
		p.unknown = true // ${#VAR}, ${VAR%suffix} and the like
	}
	p.def = strings.Trim(p.def, `"'`)
	return p, i + end + 1
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

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// script is a shell script of a container, ready to expand: its commands,
// the variables it sets itself, and the positional parameters it gets.
type script struct {
	src        manifest.Scalar
	cmds       []rawCommand
	assigned   map[string]bool // variables the script sets: their values are not in the manifest
	positional []manifest.Word
	shifted    bool // set -- or shift change the positional parameters
	vars       *manifest.Variables
}

// newScript reads a script that the container's shell runs with the
// positional parameters positional.
func newScript(src manifest.Scalar, vars *manifest.Variables, positional []manifest.Word) *script {
	sc := &script{src: src, cmds: lexScript(src.Text), assigned: map[string]bool{}, positional: positional, vars: vars}
	for _, c := range sc.cmds {
		cmd := c.words
		i := 0
		for i < len(cmd) && isAssignment(cmd[i].prefix()) {
			i++
		}
		if i == len(cmd) { // NAME=value alone sets a shell variable
			for _, w := range cmd {
				sc.assigned[nameOf(w.prefix())] = true
			}
			continue
		}
		switch cmd[i].text() {
		case "export", "readonly", "local", "declare", "typeset", "read", "unset", "for", "select", "getopts":
			for _, w := range cmd[i+1:] {
				if name := nameOf(w.prefix()); validName(name) {
					sc.assigned[name] = true
				}
			}
		case "set":
			for _, w := range cmd[i+1:] {
				if t := w.text(); t == "--" || !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
					sc.shifted = true
				}
			}
		case "shift":
			sc.shifted = true
		}
	}
	return sc
}

// prefix is a word's literal text up to its first expansion.
func (w rawWord) prefix() string {
	var b strings.Builder
	for _, p := range w.parts {
		if p.param != "" || p.unknown {
			break
		}
		b.WriteString(p.lit)
	}
	return b.String()
}

// nameOf is the NAME of NAME=value, or the word.
func nameOf(w string) string {
	name, _, _ := strings.Cut(w, "=")
	return name
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
	return ok && validName(name)
}

func validName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
