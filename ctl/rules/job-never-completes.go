// job-never-completes.go: a classic sidecar outlives the application
// unless something tells it to stop, and the Job's pod never completes:
// proxy-await without -S, or -S that does not reach that sidecar; or, in a
// pod where no container runs proxy-await, no command of the application
// that calls the sidecar's quit endpoint.

package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

const ruleJobNeverCompletes = "job-never-completes"

func init() {
	register(Rule{
		Name:  ruleJobNeverCompletes,
		Level: Error,
		Summary: "a Job's or CronJob's classic sidecar that nothing stops: its proxy-await has no `-S` or `-S` does not reach that sidecar, " +
			"or no container runs proxy-await and nothing the application's shell runs calls the sidecar's quit endpoint: a statement of its script, " +
			"behind wrappers (`timeout`, `command`, `env`, `nice`, `nohup`), in a command substitution, a trap on EXIT, `eval` or a nested `sh -c` " +
			"(a folded scalar, `- >`, joins a script's lines into one command), or kills its process through `shareProcessNamespace` (`killall`, `pkill`); " +
			"a warning for a sidecar that its proxy documents the application stopping from its own code (Dapr's, whose SDK's `Shutdown()` calls its shutdown API)",
		Fix:       "`proxy-await -S` with every sidecar's preset in `--proxy`, or a native sidecar",
		Policy:    true,
		container: (*judge).jobNeverCompletes,
		pod:       (*podJudge).jobNeverCompletes,
	})
}

func (j *judge) jobNeverCompletes() {
	// Without -S the sidecar is not stopped, whatever --proxy says.
	if !j.supervises() || !j.p.Job || j.c.Init || !j.needs(ruleJobNeverCompletes, "shutdown") ||
		j.cfg.Shutdown && !j.needs(ruleJobNeverCompletes, shutdownFlags...) {
		return
	}
	shut := j.shutdownTargets()
	for _, s := range j.p.Sidecars.Sidecars {
		other := slices.IndexFunc(shut, func(r *sidecar.Sidecar) bool { return r.Proxy == s.Proxy })
		switch {
		case !classic(s):
		case !j.cfg.Shutdown && s.AppStops != "":
			j.reportAs(Warning, ruleJobNeverCompletes, j.inv.Line, "the classic %s sidecar (%s) keeps running after the application exits unless %s, which the manifest does not show, so the %s may never complete: add -S (--shutdown)%s",
				s.Name, s.From, s.AppStops, j.p.JobName(), s.WhenClassic())
		case !j.cfg.Shutdown:
			j.report(ruleJobNeverCompletes, j.inv.Line, "the classic %s sidecar (%s) keeps running after the application exits, so the %s never completes: add -S (--shutdown)%s",
				s.Name, s.From, j.p.JobName(), s.WhenClassic())
		case !slices.Contains(shut, s) && other >= 0:
			j.report(ruleJobNeverCompletes, j.set.LineOf("proxy", "shutdown-url", "shutdown"), "-S reaches the %s sidecar that answers on port %d, not this other one (%s), so the %s never completes: give it its own shutdown endpoint (%s) and add its URL with --shutdown-url%s",
				s.Name, shut[other].ShutdownAt.Port, s.From, j.p.JobName(), ownEndpoint(s), s.WhenClassic())
		case !slices.Contains(shut, s):
			j.report(ruleJobNeverCompletes, j.set.LineOf("proxy", "shutdown-url", "shutdown"), "-S does not stop the classic %s sidecar (%s), so the %s never completes: add %s to --proxy (--proxy %s)%s",
				s.Name, s.From, j.p.JobName(), s.Preset, j.suggest(classic), s.WhenClassic())
		}
	}
}

// ownEndpoint is what gives a second sidecar of a kind a shutdown endpoint
// of its own: its flags, where it has them.
func ownEndpoint(s *sidecar.Sidecar) string {
	switch e := s.Shutdown; {
	case e.Flag != "" && e.PortFlag != "":
		return fmt.Sprintf("--%s, on an --%s of its own", e.Flag, e.PortFlag)
	case e.PortFlag != "":
		return fmt.Sprintf("an --%s of its own", e.PortFlag)
	}
	return "on a port of its own"
}

// jobNeverCompletes, for a Job's pod without proxy-await: a classic sidecar
// that no statement of the application's command stops.
func (j *podJudge) jobNeverCompletes() {
	p := j.p
	if !p.Job || p.runsProxyAwait() {
		return
	}
	classics := slices.DeleteFunc(slices.Clone(p.Sidecars.Sidecars), func(s *sidecar.Sidecar) bool { return !classic(s) })
	if len(classics) == 0 {
		return
	}
	var cmds [][]manifest.Word
	for _, c := range p.Containers {
		if !c.Init && !p.isSidecar(c) {
			cmds = append(cmds, invocation.Commands(c, p.images)...)
		}
	}
	var presets []string
	for _, s := range classics {
		if !slices.Contains(presets, s.Preset) {
			presets = append(presets, s.Preset)
		}
	}
	for _, s := range classics {
		if stops(cmds, s) || p.SharedProcesses && killer(cmds, s) != nil {
			continue
		}
		quit := s.ShutdownAt.Path
		if s.ShutdownAt.Port != 0 {
			quit = fmt.Sprintf("http://127.0.0.1:%d%s", s.ShutdownAt.Port, s.ShutdownAt.Path)
		}
		line, named := 0, ""
		for _, cmd := range cmds {
			for _, w := range cmd[1:] {
				if strings.Contains(w.Text, s.ShutdownAt.Path) && named == "" {
					line, named = w.Line, onlyNamed(cmd, w)
				}
			}
		}
		if line == 0 {
			line = firstLine(j.app)
		}
		off := ""
		if s.ShutdownAt.Off != "" {
			off = " (" + s.ShutdownAt.Off + ")"
		}
		if k := killer(cmds, s); k != nil && named == "" {
			named = fmt.Sprintf("; a container kills it (%s), but it sees no process of the sidecar's: the pod has no shareProcessNamespace: true", shown(k))
		}
		if s.AppStops != "" {
			j.reportAs(Warning, ruleJobNeverCompletes, line,
				"the classic %s sidecar (%s) keeps running after the application exits unless %s, which the manifest does not show, so the %s may never complete: run the application under proxy-await -S --proxy %s, or POST %s when it ends%s%s%s",
				s.Name, s.From, s.AppStops, p.JobName(), strings.Join(presets, ","), quit, off, named, s.WhenClassic())
			continue
		}
		j.report(ruleJobNeverCompletes, line,
			"the classic %s sidecar (%s) keeps running after the application exits and nothing here stops it, so the %s never completes: run the application under proxy-await -S --proxy %s, or POST %s when it ends%s%s%s",
			s.Name, s.From, p.JobName(), strings.Join(presets, ","), quit, off, named, s.WhenClassic())
	}
}

// onlyNamed says why cmd, which has w name a sidecar's quit endpoint, does
// not call it, as far as the manifest shows: a folded scalar joined the
// line that calls it to the command before; a trap runs it only on a
// signal; or the endpoint is an argument of a program that is no HTTP
// client, which may or may not call it.
func onlyNamed(cmd []manifest.Word, w manifest.Word) string {
	program := manifest.Shown(manifest.Word{Text: manifest.BaseName(cmd[0].Text), Secret: cmd[0].Secret, Written: cmd[0].Written})
	switch {
	case w.Folded && w.Line > cmd[0].Line:
		return fmt.Sprintf("; the command names %s only as an argument of %s, on a later line of a folded scalar (- >), which joins the script's lines into one command: write the script as a literal block (- |), or join the commands with &&",
			manifest.Shown(w), program)
	case cmd[0].Text == "trap":
		return fmt.Sprintf("; the script calls it in a trap on %s, which runs only when the shell gets that signal, not when the application exits: add EXIT to the trap's conditions",
			manifest.Shown(cmd[len(cmd)-1]))
	}
	return fmt.Sprintf("; the command gives %s to %s, which check cannot see call it", manifest.Shown(w), program)
}

// firstLine is the line of a container's command, else its args, else the
// container's.
func firstLine(c *manifest.Container) int {
	switch {
	case len(c.Command) > 0:
		return c.Command[0].Line
	case len(c.Args) > 0:
		return c.Args[0].Line
	}
	return c.Line
}

// shown is a command's words as messages show them.
func shown(cmd []manifest.Word) string {
	var words []string
	for _, w := range cmd {
		words = append(words, manifest.Shown(w))
	}
	return strings.Join(words, " ")
}

// killer is the command that signals sidecar s's process by its name
// (killall, pkill), as a container of a pod with shareProcessNamespace
// sees it; nil for none.
func killer(cmds [][]manifest.Word, s *sidecar.Sidecar) []manifest.Word {
	for _, cmd := range cmds {
		if len(cmd) == 0 || !cmd[0].Known {
			continue
		}
		args := make([]string, 0, len(cmd)-1)
		for _, w := range cmd[1:] {
			if !w.Known {
				break // what follows is not known
			}
			args = append(args, w.Text)
		}
		if kills(manifest.BaseName(cmd[0].Text), args, s.Processes) {
			return cmd
		}
	}
	return nil
}

// valued are the options of killall (psmisc) and pkill (procps) that take
// the next word as their value.
var valued = map[string][]string{
	"killall": {"-s", "--signal", "-u", "--user", "-o", "--older-than", "-y", "--younger-than", "-n", "--ns", "-Z", "--context"},
	"pkill":   {"--signal", "-u", "--euid", "-U", "--uid", "-g", "--pgroup", "-G", "--group", "-P", "--parent", "-s", "--session", "-t", "--terminal", "-F", "--pidfile", "--ns", "--nslist", "-O", "--older"},
}

// kills says whether program with args signals a process of one of
// names: killall NAME (its whole name, or its first 15 bytes, which is
// all of a longer name the kernel keeps; -r: a regular expression), pkill
// PATTERN (a regular expression of the name, -x of the whole of it; -f:
// of the command line, which holds the name).
func kills(program string, args, names []string) bool {
	opts, ok := valued[program]
	if !ok {
		return false
	}
	regex, exact, full := program == "pkill", false, false
	var patterns []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			patterns = append(patterns, args[i+1:]...)
			i = len(args)
		case slices.Contains(opts, a):
			i++
		case a == "-r" || a == "--regexp":
			regex = program == "killall" || regex
		case a == "-x" || a == "--exact":
			exact = true
		case program == "pkill" && (a == "-f" || a == "--full"):
			full = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// another option, or a signal (-9, -INT)
		default:
			patterns = append(patterns, a)
		}
	}
	for _, pat := range patterns {
		for _, name := range names {
			comm := name[:min(len(name), 15)]
			switch {
			case !regex && (pat == name || len(pat) >= 15 && pat[:15] == comm):
				return true
			case regex:
				if exact {
					pat = "^(" + pat + ")$"
				}
				if re, err := regexp.Compile(pat); err == nil && (re.MatchString(comm) || full && re.MatchString(name)) {
					return true
				}
			}
		}
	}
	return false
}

// httpClients are the programs that call a URL they are given.
var httpClients = []string{"curl", "wget", "http", "https", "xh"}

// stops says whether a command visibly stops sidecar s: an HTTP client
// that calls its quit endpoint, or a command that the proxy table says
// stops it (pilot-agent's request for Istio's, linkerd-await --shutdown for
// Linkerd's, scuttle for an Envoy's).
func stops(cmds [][]manifest.Word, s *sidecar.Sidecar) bool {
	for _, cmd := range cmds {
		if len(cmd) == 0 || !cmd[0].Known {
			continue
		}
		args := make([]string, len(cmd)-1)
		for i, w := range cmd[1:] {
			args[i] = w.Text
		}
		program := manifest.BaseName(cmd[0].Text)
		if slices.Contains(httpClients, program) {
			if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, s.ShutdownAt.Path) }) {
				return true
			}
		} else if s.StoppedByCommand(program, args) {
			return true
		}
	}
	return false
}
