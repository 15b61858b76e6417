// invocation.go: whether a container runs proxy-await, and with which
// arguments: as its command, as the first word of args on an image without
// an entrypoint, after an image's entrypoint, behind exec, env, tini,
// dumb-init, gosu or su-exec, or in any statement of a shell script.

package check

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// invocation is how a container runs proxy-await.
type invocation struct {
	args  []manifest.Word // proxy-await's arguments
	env   []assign        // NAME=value that a shell or env(1) puts before it
	line  int             // the line where proxy-await is named
	shell string          // the shell whose script runs it, "" when no shell does
	exec  bool            // the script execs it
	sub   string          // why it runs in a subshell, whose exec leaves the shell

	assigned []string // variables the script sets, whose values are the script's
}

// assign is a variable set on a command line: env NAME=value, or a shell's
// NAME=value before the command.
type assign struct {
	name  string
	value manifest.Word
}

// ownImage says whether image is proxy-await's own, whose entrypoint is
// proxy-await: a container of it that sets only args runs proxy-await.
func ownImage(image string) bool {
	return manifest.BaseName(manifest.Repository(image)) == "proxy-await"
}

// Repository is an image reference without its digest and tag:
// "gcr.io/x/proxy" for "gcr.io/x/proxy:1.2@sha256:...". A registry's port
// ("localhost:5000/x") is not a tag.
func Repository(image string) string {
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
func argvOf(c *manifest.Container, entrypoint func(image string) []string) []manifest.Word {
	cmd, args := c.Words(c.Command), c.Words(c.Args)
	if len(cmd) == 0 {
		switch {
		case entrypoint != nil && entrypoint(c.Image) != nil:
			for _, e := range entrypoint(c.Image) {
				cmd = append(cmd, manifest.Word{Text: e, Known: true, Line: c.Line})
			}
		case len(args) > 0 && args[0].Known && program(args[0].Text):
			return args
		case ownImage(c.Image):
			cmd = []manifest.Word{{Text: "/proxy-await", Known: true, Line: c.Line}}
		default:
			return nil
		}
	}
	return append(cmd, args...)
}

// program says whether a first word of args names a program rather than
// an argument of an entrypoint: proxy-await, a shell, or a wrapper.
func program(w string) bool {
	return isProxyAwait(w) || isShell(w) || manifest.BaseName(w) == "busybox" || wrapperOf(manifest.BaseName(w)) != nil
}

// invocationOf finds proxy-await in what c runs.
func invocationOf(c *manifest.Container, entrypoint func(image string) []string) (invocation, bool) {
	argv := argvOf(c, entrypoint)
	w, env := unwrap(argv)
	if len(w) == 0 || !w[0].Known {
		return invocation{}, false
	}
	if isProxyAwait(w[0].Text) {
		return invocation{args: w[1:], env: env, line: w[0].Line}, true
	}
	sc := scriptOf(w, c.Vars)
	if sc == nil {
		return invocation{}, false
	}
	for _, cmd := range sc.commands() {
		if inv, ok := commandInvocation(cmd); ok {
			inv.shell = manifest.BaseName(w[0].Text)
			if inv.shell == "busybox" {
				inv.shell = "busybox " + manifest.BaseName(w[1].Text)
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
func scriptOf(w []manifest.Word, vars *manifest.Variables) *script {
	i, ok := shellScript(w)
	if !ok {
		return nil
	}
	// The script is read even where it holds a $(VAR) whose value is not
	// known: the words that hold it are unknown.
	a := w[i]
	var positional []manifest.Word
	if i+2 < len(w) {
		positional = w[i+2:]
	}
	return newScript(manifest.Scalar{Text: a.Text, Line: a.Line, Breaks: a.Breaks, Folded: a.Folded}, vars, positional)
}

// shellScript is where the script string of a shell's command line is:
// the first word after the shell's options, when one of them is -c. The
// options are read as sh, bash, dash, ash and zsh read them: letters in
// clusters after - or + (-euo, +x), where o and O take the next word
// (-o pipefail), bash's long options (--rcfile FILE), and -- or - to end
// them. "busybox sh" is sh.
func shellScript(w []manifest.Word) (int, bool) {
	i := 0
	if len(w) > 1 && w[0].Known && manifest.BaseName(w[0].Text) == "busybox" {
		i = 1
	}
	if i >= len(w) || !w[i].Known || !isShell(w[i].Text) {
		return 0, false
	}
	c := false
	for i++; i < len(w); i++ {
		t := w[i].Text
		if !w[i].Known || len(t) < 2 || t[0] != '-' && t[0] != '+' {
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
	for ; i < len(cmd) && isAssignment(cmd[i].Text); i++ {
		name, v, _ := strings.Cut(cmd[i].Text, "=")
		w := cmd[i]
		w.Text = v
		inv.env = append(inv.env, assign{name, w})
	}
	if i < len(cmd) && cmd[i].Text == "exec" {
		inv.exec = true
		for i++; i < len(cmd) && strings.HasPrefix(cmd[i].Text, "-"); i++ {
			if cmd[i].Text == "-a" {
				i++ // bash's exec -a NAME
			}
		}
	}
	w, env := unwrap(cmd[min(i, len(cmd)):])
	if len(w) == 0 || !w[0].Known || !isProxyAwait(w[0].Text) {
		return invocation{}, false
	}
	inv.env = append(inv.env, env...)
	inv.args, inv.line = w[1:], w[0].Line
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
func unwrap(w []manifest.Word) ([]manifest.Word, []assign) {
	var env []assign
	for len(w) > 0 && w[0].Known {
		wr := wrapperOf(manifest.BaseName(w[0].Text))
		if wr == nil {
			break
		}
		w = w[1:]
		for len(w) > 0 && strings.HasPrefix(w[0].Text, "-") && len(w[0].Text) > 1 {
			opt := w[0].Text
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
		for wr.assigns && len(w) > 0 && isAssignment(w[0].Text) {
			name, v, _ := strings.Cut(w[0].Text, "=")
			a := assign{name, w[0]}
			a.value.Text = v
			env = append(env, a)
			w = w[1:]
		}
		w = w[min(wr.operands, len(w)):]
	}
	return w, env
}

func isProxyAwait(arg0 string) bool { return manifest.BaseName(arg0) == "proxy-await" }

func isShell(arg0 string) bool {
	switch manifest.BaseName(arg0) {
	case "sh", "bash", "ash", "dash", "ksh", "zsh":
		return true
	}
	return false
}

// commandsOf are the commands a container runs, each as its words behind
// its wrappers: its argv, or what its shell script runs.
func commandsOf(c *manifest.Container, entrypoint func(image string) []string) [][]manifest.Word {
	argv := argvOf(c, entrypoint)
	w, _ := unwrap(argv)
	if sc := scriptOf(w, c.Vars); sc != nil {
		return sc.runs(0)
	}
	if len(w) == 0 {
		return nil
	}
	markCredentials(w)
	return [][]manifest.Word{w}
}

// runs are the commands a script runs, each as its words behind
// assignments, exec and wrappers: its statements, and what the shell runs
// for them: a trap's action when it exits, eval's words, the script of a
// shell it starts.
func (sc *script) runs(depth int) [][]manifest.Word {
	var out [][]manifest.Word
	for _, c := range sc.commands() {
		cmd := c.words
		markCredentials(cmd)
		i := 0
		for i < len(cmd) && (isAssignment(cmd[i].Text) || cmd[i].Text == "exec") {
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
func (sc *script) inner(cmd []manifest.Word) *script {
	if !cmd[0].Known {
		return nil
	}
	switch cmd[0].Text {
	case "trap":
		if action, ok := exitTrap(cmd[1:]); ok {
			return sc.child(action)
		}
		return nil
	case "eval":
		var words []string
		for _, w := range cmd[1:] {
			words = append(words, w.Text)
		}
		if len(words) == 0 {
			return nil
		}
		return sc.child(manifest.Word{Text: strings.Join(words, " "), Known: true, Line: cmd[1].Line})
	}
	return scriptOf(cmd, sc.vars)
}

// child is the script in w that the shell runs itself, with the script's
// variables and parameters.
func (sc *script) child(w manifest.Word) *script {
	return &script{src: manifest.Scalar{Text: w.Text, Line: w.Line}, cmds: lexScript(w.Text), assigned: sc.assigned,
		positional: sc.positional, shifted: sc.shifted, vars: sc.vars}
}

// exitTrap is the action of "trap [--] ACTION CONDITION..." when one of
// its conditions is the shell's exit (EXIT, 0, SIGEXIT, in any case), as
// the quit call of a Job's script often is; false for any other trap, a
// trap that resets (-) or ignores ("") its conditions, and trap -p or -l.
func exitTrap(args []manifest.Word) (manifest.Word, bool) {
	if len(args) > 0 && args[0].Text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].Text == "-" || args[0].Text == "" || strings.HasPrefix(args[0].Text, "-") {
		return manifest.Word{}, false
	}
	for _, c := range args[1:] {
		switch strings.ToUpper(c.Text) {
		case "EXIT", "0", "SIGEXIT":
			return args[0], true
		}
	}
	return manifest.Word{}, false
}
