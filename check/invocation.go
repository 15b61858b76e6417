// invocation.go: whether a container runs proxy-await, and with which
// arguments: as its command, after an image's entrypoint, or in a shell
// script (sh -c), where the shell's words are split and expanded as the
// shell would.

package check

import (
	"strings"
)

// invocation is how a container runs proxy-await.
type invocation struct {
	args  []string          // proxy-await's arguments
	env   map[string]string // assignments the shell puts before it (NAME=value proxy-await ...)
	shell string            // the shell that runs it, "" when proxy-await is the command itself
	exec  bool              // the shell replaces itself with proxy-await
	known bool              // every argument is in the manifest: the flags can be judged
}

// ownImage says whether image is proxy-await's own, whose entrypoint is
// proxy-await: a container of it that sets only args runs proxy-await.
func ownImage(image string) bool { return baseName(repository(image)) == "proxy-await" }

// repository is an image reference without its digest and tag:
// "gcr.io/x/proxy" for "gcr.io/x/proxy:1.2@sha256:...". A registry's port
// ("localhost:5000/x") is not a tag.
func repository(image string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	return repo
}

// invocationOf finds proxy-await in what c runs. entrypoint is an image's
// entrypoint where the caller knows it (nil otherwise): a manifest does not
// show it, so a container that sets only args is seen to run proxy-await
// when its image is proxy-await's own, or entrypoint says so.
func invocationOf(c *container, entrypoint func(image string) []string) (invocation, bool) {
	argv := c.command
	if len(argv) == 0 {
		switch {
		case entrypoint != nil && entrypoint(c.image) != nil:
			argv = entrypoint(c.image)
		case ownImage(c.image):
			argv = []string{"/proxy-await"}
		default:
			return invocation{}, false
		}
	}
	argv = append(argv[:len(argv):len(argv)], c.args...)
	if len(argv) == 0 {
		return invocation{}, false
	}
	if isProxyAwait(argv[0]) {
		return invocation{args: argv[1:], known: !c.unknownArgv}, true
	}
	if !isShell(argv[0]) {
		return invocation{}, false
	}
	script, positional, ok := shellScript(argv[1:])
	if !ok {
		return invocation{}, false
	}
	for _, cmd := range shellCommands(script, c, positional) {
		if inv, ok := cmd.invocation(); ok {
			inv.shell = baseName(argv[0])
			inv.known = inv.known && !c.unknownArgv
			return inv, true
		}
	}
	return invocation{}, false
}

func isProxyAwait(arg0 string) bool { return baseName(arg0) == "proxy-await" }

func isShell(arg0 string) bool {
	switch baseName(arg0) {
	case "sh", "bash", "ash", "dash", "ksh", "zsh":
		return true
	}
	return false
}

// scriptFlag says whether a shell's option word asks it to run a script
// string: -c, or -c among other letters (-ec, -xc).
func scriptFlag(w string) bool {
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsRune(w, 'c')
}

// shellScript finds the script of "sh [OPTIONS] -c SCRIPT [NAME [ARG...]]"
// and the positional parameters it sees ($1... are the ARGs).
func shellScript(args []string) (script string, positional []string, ok bool) {
	c := false
	for i, a := range args {
		switch {
		case !c && len(a) > 1 && a[0] == '-':
			c = scriptFlag(a)
		case c:
			if i+2 < len(args) {
				positional = args[i+2:]
			}
			return a, positional, true
		default:
			return "", nil, false // a script file: not visible here
		}
	}
	return "", nil, false
}

// word is a shell word after expansion; known is false when it held an
// expansion the manifest cannot resolve ($(cmd), an unset-looking variable
// from valueFrom).
type word struct {
	text  string
	known bool
}

// simpleCommand is the words of one command of a script: those between
// ;, &, |, &&, ||, newlines and parentheses.
type simpleCommand []word

// invocation reads a simple command as proxy-await's, if it is:
// [NAME=value...] [exec [-options]] proxy-await ARG...
func (sc simpleCommand) invocation() (invocation, bool) {
	inv := invocation{env: map[string]string{}, known: true}
	i := 0
	for ; i < len(sc) && isAssignment(sc[i].text); i++ {
		name, value, _ := strings.Cut(sc[i].text, "=")
		inv.env[name] = value
		inv.known = inv.known && sc[i].known
	}
	if i < len(sc) && sc[i].text == "exec" {
		inv.exec = true
		for i++; i < len(sc) && strings.HasPrefix(sc[i].text, "-"); i++ {
			if sc[i].text == "-a" {
				i++ // bash's exec -a NAME
			}
		}
	}
	if i >= len(sc) || !isProxyAwait(sc[i].text) {
		return invocation{}, false
	}
	for _, w := range sc[i+1:] {
		inv.args = append(inv.args, w.text)
		inv.known = inv.known && w.known
	}
	return inv, true
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// shellCommands splits a script into its simple commands, with quotes
// removed and parameters expanded from the container's environment and the
// positional parameters, as sh would. It reads what manifests hold (quotes,
// escapes, $VAR, ${VAR}, ${VAR:-default}, "$@"); anything beyond that marks
// its word unknown rather than guessing.
func shellCommands(script string, c *container, positional []string) []simpleCommand {
	var cmds []simpleCommand
	var cur simpleCommand
	var b strings.Builder
	inWord, known, dropEmpty := false, true, false
	endWord := func() {
		if inWord && !(dropEmpty && b.Len() == 0) {
			cur = append(cur, word{b.String(), known})
		}
		b.Reset()
		inWord, known, dropEmpty = false, true, false
	}
	endCommand := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	// param expands the parameter at s[i] ($ already seen at s[i-1]) into
	// b and returns the index after it.
	param := func(s string, i int, quoted bool) int {
		inWord = true
		if i >= len(s) {
			b.WriteByte('$')
			return i
		}
		switch ch := s[i]; {
		case ch == '@' && (quoted && strings.HasPrefix(s[i:], `@"`) && b.Len() == 0 || !quoted):
			// "$@" as a whole word: each positional parameter is a word,
			// and none at all when there is none.
			dropEmpty = b.Len() == 0 && len(positional) == 0
			for j, p := range positional {
				if j > 0 {
					endWord()
					inWord = true
				}
				b.WriteString(p)
			}
			return i + 1
		case ch >= '1' && ch <= '9':
			if n := int(ch - '1'); n < len(positional) {
				b.WriteString(positional[n])
			}
			return i + 1
		case ch == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				known = false
				return len(s)
			}
			expr := s[i+1 : i+end]
			name, def, colon := strings.Cut(expr, ":-")
			if !colon {
				name, def, _ = strings.Cut(expr, "-")
			}
			v, set, ok := c.lookup(name)
			switch {
			case !ok || !validName(name):
				known = false
			case name == expr || set && (v != "" || !colon):
				b.WriteString(v)
			default:
				b.WriteString(def)
			}
			return i + end + 1
		case ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			v, _, ok := c.lookup(s[i:j])
			b.WriteString(v)
			known = known && ok
			return j
		}
		known = false // $(cmd), $((...)), $?, $$ and the like
		if s[i] == '(' {
			if end := strings.IndexByte(s[i:], ')'); end >= 0 {
				return i + end + 1
			}
			return len(s)
		}
		return i + 1
	}
	for i := 0; i < len(script); i++ {
		ch := script[i]
		switch {
		case ch == '\\' && i+1 < len(script):
			i++
			if script[i] != '\n' {
				b.WriteByte(script[i])
				inWord = true
			}
		case ch == '\'':
			end := strings.IndexByte(script[i+1:], '\'')
			if end < 0 {
				end = len(script) - i - 1
			}
			b.WriteString(script[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case ch == '"':
			inWord = true
			for i++; i < len(script) && script[i] != '"'; i++ {
				switch {
				case script[i] == '\\' && i+1 < len(script) && strings.IndexByte("$`\"\\\n", script[i+1]) >= 0:
					i++
					if script[i] != '\n' {
						b.WriteByte(script[i])
					}
				case script[i] == '$':
					i = param(script, i+1, true) - 1
				case script[i] == '`':
					known = false
					if end := strings.IndexByte(script[i+1:], '`'); end >= 0 {
						i += end + 1
					}
				default:
					b.WriteByte(script[i])
				}
			}
		case ch == '$':
			i = param(script, i+1, false) - 1
		case ch == '`':
			known, inWord = false, true
			if end := strings.IndexByte(script[i+1:], '`'); end >= 0 {
				i += end + 1
			} else {
				i = len(script)
			}
		case ch == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
			endCommand()
		case strings.IndexByte(";&|()\n", ch) >= 0:
			endCommand()
		case ch == ' ' || ch == '\t':
			endWord()
		default:
			b.WriteByte(ch)
			inWord = true
		}
	}
	endCommand()
	return cmds
}

func validName(name string) bool { return isAssignment(name + "=") }

// lookup is a variable as the container's shell sees it: its value, whether
// it is set, and whether the manifest shows which (not when it comes from
// valueFrom or may come from envFrom).
func (c *container) lookup(name string) (value string, set, known bool) {
	v, ok := c.env[name]
	switch {
	case ok:
		return v.value, true, v.known
	case c.envFrom:
		return "", false, false
	}
	return "", false, true
}
