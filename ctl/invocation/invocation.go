// Package invocation reads what a container runs, as far as its manifest
// shows it: its command and args as the kubelet passes them, or an image's
// ENTRYPOINT and CMD where the caller knows them; the wrappers in front
// (exec, env, tini, dumb-init, gosu, timeout...); and every statement of a
// shell script, read by mvdan.cc/sh's parser. It finds proxy-await in
// them, and reads its settings with config's own parser (settings.go). What
// the manifest does not hold (a variable the script or the image sets, a
// command substitution) leaves its word unknown, never guessed.
package invocation

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// Invocation is how a container runs proxy-await.
type Invocation struct {
	Args  []manifest.Word // proxy-await's arguments
	Env   []Assign        // NAME=value that a shell or env(1) puts before it
	Line  int             // the line where proxy-await is named
	Shell string          // the shell whose script runs it, "" when no shell does
	Exec  bool            // the script execs it
	Sub   string          // why it runs in a subshell, whose exec leaves the shell
	Lone  bool            // it is the script's only statement, a simple command: some shells exec it themselves

	Assigned []string // variables the script sets, whose values are the script's
}

// Assign is a variable set on a command line: env NAME=value, or a shell's
// NAME=value before the command.
type Assign struct {
	Name  string
	Value manifest.Word
}

// Image is what an image runs when a container does not say: the
// ENTRYPOINT and CMD of the image's configuration.
type Image struct {
	Entrypoint, Cmd []string
}

// Images tell what an image runs: a file of entrypoints, or what its
// registry answered. Config is the image's, by its reference as a
// container names it, and false when it is not known.
type Images interface {
	Config(ref string) (Image, bool)
}

// ImageTable is Images from a table, by image reference.
type ImageTable map[string]Image

// Config is the table's entry for ref.
func (t ImageTable) Config(ref string) (Image, bool) {
	img, ok := t[ref]
	return img, ok
}

// ownImage says whether image is proxy-await's own, whose entrypoint is
// proxy-await: a container of it that sets only args runs proxy-await.
func ownImage(image string) bool {
	return manifest.BaseName(manifest.Repository(image)) == "proxy-await"
}

// Argv is what a container runs, as far as the manifest and images show,
// by Kubernetes' rule: command and args; without command, the image's
// ENTRYPOINT and then args, or the image's CMD when there are no args.
// When images does not know the image (it may be nil): args alone when its
// first word is a program (an image without an ENTRYPOINT runs them so),
// or args after proxy-await when the image is proxy-await's own. Nil when
// what runs is not shown.
func Argv(c *manifest.Container, images Images) []manifest.Word {
	cmd, args := c.Words(c.Command), c.Words(c.Args)
	if len(cmd) > 0 {
		return append(cmd, args...)
	}
	var img Image
	known := false
	if images != nil {
		img, known = images.Config(c.Image)
	}
	switch {
	case known:
		for _, e := range img.Entrypoint {
			cmd = append(cmd, manifest.Known(e, c.Line))
		}
		if len(args) == 0 {
			for _, a := range img.Cmd {
				args = append(args, manifest.Known(a, c.Line))
			}
		}
	case len(args) > 0 && args[0].Known && program(args[0].Text):
		return args
	case ownImage(c.Image):
		cmd = []manifest.Word{manifest.Known("/proxy-await", c.Line)}
	default:
		return nil
	}
	return append(cmd, args...)
}

// program says whether a first word of args names a program rather than
// an argument of an entrypoint: proxy-await, a shell, or a wrapper.
func program(w string) bool {
	return isProxyAwait(w) || isShell(w) || manifest.BaseName(w) == "busybox" || wrapperOf(manifest.BaseName(w)) != nil
}

// Of finds proxy-await in what c runs: its argv behind wrappers, or a
// statement of its shell script.
func Of(c *manifest.Container, images Images) (*Invocation, bool) {
	w, env := unwrap(Argv(c, images))
	if len(w) == 0 || !w[0].Known {
		return nil, false
	}
	if isProxyAwait(w[0].Text) {
		return &Invocation{Args: w[1:], Env: env, Line: w[0].Line}, true
	}
	sc := scriptOf(w, c.Vars)
	if sc == nil {
		return nil, false
	}
	for _, cmd := range sc.commands() {
		if inv, ok := commandInvocation(cmd); ok {
			inv.Shell = manifest.BaseName(w[0].Text)
			if inv.Shell == "busybox" {
				inv.Shell = "busybox " + manifest.BaseName(w[1].Text)
			}
			inv.Lone = sc.lone && inv.Sub == ""
			for name := range sc.assigned {
				inv.Assigned = append(inv.Assigned, name)
			}
			slices.Sort(inv.Assigned)
			return inv, true
		}
	}
	return nil, false
}

// scriptOf is the script of "sh [OPTIONS] -c [OPTIONS] [--] SCRIPT [NAME
// [ARG...]]", which sees the ARGs as its positional parameters; nil for
// anything else (a script file is not visible here). busybox sh is sh.
func scriptOf(w []manifest.Word, vars *manifest.Variables) *script {
	i, ok := ShellScript(w)
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

// ShellScript is where the script string of a shell's command line is:
// the first word after the shell's options, when one of them is -c. The
// options are read as sh, bash, dash, ash and zsh read them: letters in
// clusters after - or + (-euo, +x), where o and O take the next word
// (-o pipefail), bash's long options (--rcfile FILE), and -- or - to end
// them. "busybox sh" is sh.
func ShellScript(w []manifest.Word) (int, bool) {
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
func commandInvocation(c command) (*Invocation, bool) {
	cmd := c.words
	inv := &Invocation{Sub: c.sub}
	i := 0
	for ; i < len(cmd) && isAssignment(cmd[i].Text); i++ {
		name, v, _ := strings.Cut(cmd[i].Text, "=")
		w := cmd[i]
		w.Text = v
		inv.Env = append(inv.Env, Assign{name, w})
	}
	if i < len(cmd) && cmd[i].Text == "exec" {
		inv.Exec = true
		for i++; i < len(cmd) && strings.HasPrefix(cmd[i].Text, "-"); i++ {
			if cmd[i].Text == "-a" {
				i++ // bash's exec -a NAME
			}
		}
	}
	w, env := unwrap(cmd[min(i, len(cmd)):])
	if len(w) == 0 || !w[0].Known || !isProxyAwait(w[0].Text) {
		return nil, false
	}
	inv.Env = append(inv.Env, env...)
	inv.Args, inv.Line = w[1:], w[0].Line
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

// wrapperOf is the wrapper a program's name is, nil for none.
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
func unwrap(w []manifest.Word) ([]manifest.Word, []Assign) {
	var env []Assign
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
			a := Assign{name, w[0]}
			a.Value.Text = v
			env = append(env, a)
			w = w[1:]
		}
		w = w[min(wr.operands, len(w)):]
	}
	return w, env
}

// isProxyAwait says whether a program's name is proxy-await's.
func isProxyAwait(arg0 string) bool { return manifest.BaseName(arg0) == "proxy-await" }

// Shells are the programs whose -c runs a script.
var Shells = []string{"sh", "bash", "ash", "dash", "ksh", "zsh"}

// ExecsLone are the shells that exec a script's only statement when it is
// a simple command, rather than fork and wait for it (bash's "one-shot"
// -c; BusyBox ash's, which its sh is): the command is the container's PID
// 1. MayExecLone are those that may be such a shell or dash, which does
// not: sh (dash on Debian, BusyBox on Alpine, bash elsewhere), ash.
var (
	ExecsLone   = []string{"bash", "busybox sh", "busybox ash"}
	MayExecLone = []string{"sh", "ash"}
)

// isShell says whether a program's name is a shell's.
func isShell(arg0 string) bool { return slices.Contains(Shells, manifest.BaseName(arg0)) }

// Commands are the commands a container runs, each as its words behind
// its wrappers: its argv, or what its shell script runs.
func Commands(c *manifest.Container, images Images) [][]manifest.Word {
	w, _ := unwrap(Argv(c, images))
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
// shell it starts, maxNesting deep.
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
		if depth < maxNesting {
			if inner := sc.inner(rest); inner != nil {
				out = append(out, inner.runs(depth+1)...)
			}
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
		return sc.child(manifest.Known(strings.Join(words, " "), cmd[1].Line))
	}
	return scriptOf(cmd, sc.vars)
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
