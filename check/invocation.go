// invocation.go: whether a container runs proxy-await, and with which
// arguments: as its command, as the first word of args on an image without
// an entrypoint, after an image's entrypoint, behind exec, env, tini,
// dumb-init, gosu or su-exec, or in any statement of a shell script.

package check

import (
	"slices"
	"strings"
)

// invocation is how a container runs proxy-await.
type invocation struct {
	args  []word   // proxy-await's arguments
	env   []assign // NAME=value that a shell or env(1) puts before it
	line  int      // the line where proxy-await is named
	shell string   // the shell whose script runs it, "" when no shell does
	exec  bool     // the script execs it
	sub   string   // why it runs in a subshell, whose exec leaves the shell

	assigned []string // variables the script sets, whose values are the script's
}

// assign is a variable set on a command line: env NAME=value, or a shell's
// NAME=value before the command.
type assign struct {
	name  string
	value word
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

// argv is what a container runs, as far as the manifest shows: command and
// args; without command, args alone when its first word is a program
// (an image without an ENTRYPOINT runs them so), or args after the image's
// entrypoint where the caller knows it, or proxy-await's own image's.
// entrypoint may be nil; argv is nil when what runs is not shown.
func (c *container) argv(entrypoint func(image string) []string) []word {
	cmd, args := c.words(c.command), c.words(c.args)
	if len(cmd) == 0 {
		switch {
		case entrypoint != nil && entrypoint(c.image) != nil:
			for _, e := range entrypoint(c.image) {
				cmd = append(cmd, word{text: e, known: true, line: c.line})
			}
		case len(args) > 0 && args[0].known && program(args[0].text):
			return args
		case ownImage(c.image):
			cmd = []word{{text: "/proxy-await", known: true, line: c.line}}
		default:
			return nil
		}
	}
	return append(cmd, args...)
}

// program says whether a first word of args names a program rather than
// an argument of an entrypoint: proxy-await, a shell, or a wrapper.
func program(w string) bool {
	return isProxyAwait(w) || isShell(w) || baseName(w) == "busybox" || wrapperOf(baseName(w)) != nil
}

// invocationOf finds proxy-await in what c runs.
func invocationOf(c *container, entrypoint func(image string) []string) (invocation, bool) {
	argv := c.argv(entrypoint)
	w, env := unwrap(argv)
	if len(w) == 0 || !w[0].known {
		return invocation{}, false
	}
	if isProxyAwait(w[0].text) {
		return invocation{args: w[1:], env: env, line: w[0].line}, true
	}
	sc := scriptOf(w, c.vars)
	if sc == nil {
		return invocation{}, false
	}
	for _, cmd := range sc.commands() {
		if inv, ok := commandInvocation(cmd); ok {
			inv.shell = baseName(w[0].text)
			if inv.shell == "busybox" {
				inv.shell = "busybox " + baseName(w[1].text)
			}
			for name := range sc.assigned {
				inv.assigned = append(inv.assigned, name)
			}
			slices.Sort(inv.assigned)
			return inv, true
		}
	}
	return invocation{}, false
}

// scriptOf is the script of "sh [OPTIONS] -c [OPTIONS] [--] SCRIPT [NAME
// [ARG...]]", which sees the ARGs as its positional parameters; nil for
// anything else (a script file is not visible here). busybox sh is sh.
func scriptOf(w []word, vars *environment) *script {
	i, ok := shellScript(w)
	if !ok {
		return nil
	}
	// The script is read even where it holds a $(VAR) whose value is not
	// known: the words that hold it are unknown.
	a := w[i]
	var positional []word
	if i+2 < len(w) {
		positional = w[i+2:]
	}
	return newScript(scalar{s: a.text, line: a.line, breaks: a.breaks, folded: a.folded}, vars, positional)
}

// shellScript is where the script string of a shell's command line is:
// the first word after the shell's options, when one of them is -c. The
// options are read as sh, bash, dash, ash and zsh read them: letters in
// clusters after - or + (-euo, +x), where o and O take the next word
// (-o pipefail), bash's long options (--rcfile FILE), and -- or - to end
// them. "busybox sh" is sh.
func shellScript(w []word) (int, bool) {
	i := 0
	if len(w) > 1 && w[0].known && baseName(w[0].text) == "busybox" {
		i = 1
	}
	if i >= len(w) || !w[i].known || !isShell(w[i].text) {
		return 0, false
	}
	c := false
	for i++; i < len(w); i++ {
		t := w[i].text
		if !w[i].known || len(t) < 2 || t[0] != '-' && t[0] != '+' {
			break
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		for _, ch := range t[1:] {
			switch ch {
			case 'c':
				c = c || t[0] == '-'
			case 'o', 'O':
				i++ // its value is the next word
			}
		}
	}
	if !c || i >= len(w) {
		return 0, false
	}
	return i, true
}

// commandInvocation reads a simple command of a script as proxy-await's,
// if it is: [NAME=value...] [exec [-options]] [wrappers] proxy-await ARG...
func commandInvocation(c command) (invocation, bool) {
	cmd := c.words
	inv := invocation{sub: c.sub}
	i := 0
	for ; i < len(cmd) && isAssignment(cmd[i].text); i++ {
		name, v, _ := strings.Cut(cmd[i].text, "=")
		w := cmd[i]
		w.text = v
		inv.env = append(inv.env, assign{name, w})
	}
	if i < len(cmd) && cmd[i].text == "exec" {
		inv.exec = true
		for i++; i < len(cmd) && strings.HasPrefix(cmd[i].text, "-"); i++ {
			if cmd[i].text == "-a" {
				i++ // bash's exec -a NAME
			}
		}
	}
	w, env := unwrap(cmd[min(i, len(cmd)):])
	if len(w) == 0 || !w[0].known || !isProxyAwait(w[0].text) {
		return invocation{}, false
	}
	inv.env = append(inv.env, env...)
	inv.args, inv.line = w[1:], w[0].line
	return inv, true
}

// wrapper is a program that runs its arguments as a command, after its
// own options: valued are those that take the next word as their value.
type wrapper struct {
	valued   []string
	assigns  bool     // NAME=value words before the command set variables (env)
	operands int      // words before the command: a user (gosu, su-exec), a duration (timeout)
	queries  []string // options with which it runs nothing (command -v)
}

// wrapperOf is the wrapper a program's name is, nil for none. A function,
// not a map: nothing of the check runs when proxy-await starts.
func wrapperOf(name string) *wrapper {
	switch name {
	case "env":
		return &wrapper{valued: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assigns: true}
	case "tini", "tini-static":
		return &wrapper{valued: []string{"-p", "-e"}}
	case "dumb-init":
		return &wrapper{valued: []string{"-r", "--rewrite"}}
	case "gosu", "su-exec":
		return &wrapper{operands: 1}
	case "timeout":
		return &wrapper{valued: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1}
	case "nice":
		return &wrapper{valued: []string{"-n", "--adjustment"}}
	case "nohup":
		return &wrapper{}
	case "command": // the shell's builtin: the command, not a function of that name
		return &wrapper{queries: []string{"-v", "-V"}}
	}
	return nil
}

// unwrap strips the wrappers at the start of a command line, and returns
// the command they run and the variables env(1) sets for it.
func unwrap(w []word) ([]word, []assign) {
	var env []assign
	for len(w) > 0 && w[0].known {
		wr := wrapperOf(baseName(w[0].text))
		if wr == nil {
			break
		}
		w = w[1:]
		for len(w) > 0 && strings.HasPrefix(w[0].text, "-") && len(w[0].text) > 1 {
			opt := w[0].text
			w = w[1:]
			if opt == "--" {
				break
			}
			if slices.Contains(wr.queries, opt) {
				return nil, env
			}
			for _, v := range wr.valued {
				if opt == v && len(w) > 0 {
					w = w[1:]
				}
			}
		}
		for wr.assigns && len(w) > 0 && isAssignment(w[0].text) {
			name, v, _ := strings.Cut(w[0].text, "=")
			a := assign{name, w[0]}
			a.value.text = v
			env = append(env, a)
			w = w[1:]
		}
		w = w[min(wr.operands, len(w)):]
	}
	return w, env
}

func isProxyAwait(arg0 string) bool { return baseName(arg0) == "proxy-await" }

func isShell(arg0 string) bool {
	switch baseName(arg0) {
	case "sh", "bash", "ash", "dash", "ksh", "zsh":
		return true
	}
	return false
}

// commandsOf are the commands a container runs, each as its words behind
// its wrappers: its argv, or what its shell script runs.
func commandsOf(c *container, entrypoint func(image string) []string) [][]word {
	argv := c.argv(entrypoint)
	w, _ := unwrap(argv)
	if sc := scriptOf(w, c.vars); sc != nil {
		return sc.runs(0)
	}
	if len(w) == 0 {
		return nil
	}
	markCredentials(w)
	return [][]word{w}
}

// runs are the commands a script runs, each as its words behind
// assignments, exec and wrappers: its statements, and what the shell runs
// for them: a trap's action when it exits, eval's words, the script of a
// shell it starts.
func (sc *script) runs(depth int) [][]word {
	var out [][]word
	for _, c := range sc.commands() {
		cmd := c.words
		markCredentials(cmd)
		i := 0
		for i < len(cmd) && (isAssignment(cmd[i].text) || cmd[i].text == "exec") {
			i++
		}
		rest, _ := unwrap(cmd[i:])
		if len(rest) == 0 {
			continue
		}
		out = append(out, rest)
		if inner := sc.inner(rest); inner != nil && depth < maxNesting {
			out = append(out, inner.runs(depth+1)...)
		}
	}
	return out
}

// inner is the script that a command has the shell run: the action of a
// trap that runs when the shell exits, eval's words, a shell's -c script;
// nil for any other command.
func (sc *script) inner(cmd []word) *script {
	if !cmd[0].known {
		return nil
	}
	switch cmd[0].text {
	case "trap":
		if action, ok := exitTrap(cmd[1:]); ok {
			return sc.child(action)
		}
		return nil
	case "eval":
		var words []string
		for _, w := range cmd[1:] {
			words = append(words, w.text)
		}
		if len(words) == 0 {
			return nil
		}
		return sc.child(word{text: strings.Join(words, " "), known: true, line: cmd[1].line})
	}
	return scriptOf(cmd, sc.vars)
}

// child is the script in w that the shell runs itself, with the script's
// variables and parameters.
func (sc *script) child(w word) *script {
	return &script{src: scalar{s: w.text, line: w.line}, cmds: lexScript(w.text), assigned: sc.assigned,
		positional: sc.positional, shifted: sc.shifted, vars: sc.vars}
}

// exitTrap is the action of "trap [--] ACTION CONDITION..." when one of
// its conditions is the shell's exit (EXIT, 0, SIGEXIT, in any case), as
// the quit call of a Job's script often is; false for any other trap, a
// trap that resets (-) or ignores ("") its conditions, and trap -p or -l.
func exitTrap(args []word) (word, bool) {
	if len(args) > 0 && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].text == "-" || args[0].text == "" || strings.HasPrefix(args[0].text, "-") {
		return word{}, false
	}
	for _, c := range args[1:] {
		switch strings.ToUpper(c.text) {
		case "EXIT", "0", "SIGEXIT":
			return args[0], true
		}
	}
	return word{}, false
}
