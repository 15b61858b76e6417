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
	"strings"
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
}

// rawWord is a word of a script before expansion, and where it starts.
type rawWord struct {
	parts []part
	at    int
}

// rawCommand is a simple command's words, before expansion.
type rawCommand []rawWord

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
	var cmds []rawCommand
	var cur rawCommand
	var w *rawWord
	var lit strings.Builder
	var heredocs []string // delimiters whose bodies start after the line
	skipWord := false     // the next word is a redirection's target
	flushLit := func(quoted bool) {
		if lit.Len() > 0 {
			w.parts = append(w.parts, part{lit: lit.String(), quoted: quoted, raw: lit.String()})
			lit.Reset()
		}
	}
	start := func(at int) {
		if w == nil {
			w = &rawWord{at: at}
		}
	}
	endWord := func() {
		if w == nil {
			return
		}
		flushLit(false)
		if skipWord {
			skipWord = false
		} else {
			cur = append(cur, *w)
		}
		w = nil
	}
	endCommand := func() {
		endWord()
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
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				start(i - 1)
				lit.WriteByte(s[i])
			}
		case ch == '\'':
			start(i)
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			flushLit(false)
			w.parts = append(w.parts, part{lit: s[i+1 : i+1+end], quoted: true, raw: s[i:min(len(s), i+end+2)]})
			i += end + 1
		case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
			// $'...': ANSI-C quoting; its escapes are rare in manifests.
			start(i)
			flushLit(false)
			j := i + 2
			for j < len(s) && s[j] != '\'' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			w.parts = append(w.parts, part{lit: s[i+2 : min(j, len(s))], quoted: true, raw: s[i:min(len(s), j+1)]})
			i = j
		case ch == '"':
			start(i)
			flushLit(false)
			for i++; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
					i++
					if s[i] != '\n' {
						lit.WriteByte(s[i])
					}
				case s[i] == '$' || s[i] == '`':
					flushLit(true)
					p, next := expansion(s, i, true)
					w.parts = append(w.parts, p)
					i = next - 1
				default:
					lit.WriteByte(s[i])
				}
			}
			flushLit(true)
			if len(w.parts) == 0 {
				w.parts = append(w.parts, part{quoted: true, raw: `""`}) // "" is an empty word
			}
		case ch == '$' || ch == '`':
			start(i)
			flushLit(false)
			p, next := expansion(s, i, false)
			w.parts = append(w.parts, p)
			i = next - 1
		case ch == '#' && w == nil:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			i-- // the line break ends the command
		case ch == '<' || ch == '>' || ch == '&' && i+1 < len(s) && s[i+1] == '>':
			// A redirection: an fd number before it is no word, nor is
			// its target after it. "<<" opens a here-document.
			if w != nil && lit.Len() > 0 && len(w.parts) == 0 && isDigits(lit.String()) {
				lit.Reset()
				w = nil
			}
			endWord()
			if strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<") {
				j := i + 2
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
				heredocs = append(heredocs, strings.Trim(s[j:k], `'"\`))
				i = k - 1
				continue
			}
			for i+1 < len(s) && strings.IndexByte("<>&|-", s[i+1]) >= 0 {
				i++
			}
			skipWord = true
		case ch == '\n':
			endCommand()
			for _, delim := range heredocs {
				// The body runs to a line that is the delimiter alone.
				for i+1 < len(s) {
					end := strings.IndexByte(s[i+1:], '\n')
					line := s[i+1:]
					if end >= 0 {
						line = s[i+1 : i+1+end]
					}
					if end < 0 {
						i = len(s)
						break
					}
					i += end + 1
					if strings.TrimLeft(line, "\t") == delim {
						break
					}
				}
			}
			heredocs = nil
		case strings.IndexByte(";&|()", ch) >= 0:
			endCommand()
			skipWord = false
		case ch == ' ' || ch == '\t' || ch == '\r':
			endWord()
		default:
			start(i)
			lit.WriteByte(ch)
		}
	}
	endCommand()
	return cmds
}

// expansion reads the $ or ` expansion at s[i] and returns it and the
// index after it.
func expansion(s string, i int, quoted bool) (part, int) {
	unknown := func(end int) (part, int) {
		end = min(end, len(s))
		return part{unknown: true, quoted: quoted, raw: s[i:end]}, end
	}
	if s[i] == '`' {
		end := strings.IndexByte(s[i+1:], '`')
		if end < 0 {
			return unknown(len(s))
		}
		return unknown(i + end + 2)
	}
	if i+1 >= len(s) {
		return part{lit: "$", quoted: quoted, raw: "$"}, i + 1
	}
	switch ch := s[i+1]; {
	case ch == '(':
		// $(cmd) or $((expr)): to the matching parenthesis.
		depth := 0
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return unknown(j + 1)
				}
			case '\'', '"':
				if end := strings.IndexByte(s[j+1:], s[j]); end >= 0 {
					j += end + 1
				}
			}
		}
		return unknown(len(s))
	case ch == '{':
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return unknown(len(s))
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
	src        scalar
	cmds       []rawCommand
	assigned   map[string]bool // variables the script sets: their values are not in the manifest
	positional []word
	shifted    bool // set -- or shift change the positional parameters
	vars       *environment
}

// newScript reads a script that the container's shell runs with the
// positional parameters positional.
func newScript(src scalar, vars *environment, positional []word) *script {
	sc := &script{src: src, cmds: lexScript(src.s), assigned: map[string]bool{}, positional: positional, vars: vars}
	for _, cmd := range sc.cmds {
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

// commands are the script's simple commands with their words expanded.
func (sc *script) commands() [][]word {
	var out [][]word
	for _, cmd := range sc.cmds {
		var words []word
		for _, w := range cmd {
			words = append(words, sc.expand(w)...)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// expand is a word as the shell makes it: quotes removed, parameters
// expanded; an unquoted word that is one parameter is split into fields,
// and "$@" is one word for each positional parameter.
func (sc *script) expand(w rawWord) []word {
	line := sc.src.lineAt(w.at)
	if len(w.parts) == 1 && w.parts[0].param == "@" && !sc.shifted {
		var out []word
		for _, p := range sc.positional {
			out = append(out, word{text: p.text, known: p.known, from: p.from, line: line})
		}
		return out
	}
	out := word{known: true, line: line}
	var text, raw strings.Builder
	split := len(w.parts) == 1 && w.parts[0].param != "" && !w.parts[0].quoted
	for _, p := range w.parts {
		raw.WriteString(p.raw)
		if p.param == "" && !p.unknown {
			text.WriteString(p.lit)
			continue
		}
		v := sc.param(p)
		if !v.known {
			out.known = false
			if out.from == "" {
				out.from = v.from
			}
		}
		text.WriteString(v.text)
	}
	if !out.known {
		out.text = raw.String() // as written, for messages
		return []word{out}
	}
	out.text = text.String()
	if split {
		var fields []word
		for _, f := range strings.Fields(out.text) {
			fields = append(fields, word{text: f, known: true, line: line})
		}
		return fields
	}
	return []word{out}
}

// param is the value of one expansion.
func (sc *script) param(p part) value {
	switch {
	case p.unknown:
		return value{from: p.raw + ", which the shell computes when the pod starts"}
	case positionalName(p.param):
		n := int(p.param[0] - '1')
		switch {
		case sc.shifted:
			return value{from: p.raw + ", after the script changes its positional parameters"}
		case p.param == "@":
			var parts []string
			for _, w := range sc.positional {
				if !w.known {
					return value{from: w.from}
				}
				parts = append(parts, w.text)
			}
			return value{text: strings.Join(parts, " "), known: true}
		case n < len(sc.positional):
			return value{text: sc.positional[n].text, known: sc.positional[n].known, from: sc.positional[n].from}
		}
		return value{known: true} // not given
	case sc.assigned[p.param]:
		return value{from: "the shell variable $" + p.param + ", which the script sets"}
	}
	v, set := sc.vars.get(p.param)
	switch {
	case !v.known:
		return value{from: "the shell variable $" + p.param + ", which comes from " + v.from}
	case !set:
		return value{from: "the shell variable $" + p.param + ", which the manifest does not set (the image may)"}
	case p.op == ":-" && v.text == "":
		return value{text: p.def, known: true}
	}
	return v
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
