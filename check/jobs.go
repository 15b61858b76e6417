// jobs.go: what a pod shows as a whole, whether or not a container runs
// proxy-await: a Job whose classic sidecar nothing stops, a label or
// annotation that a proxy would read if it were spelt right, a Namespace
// that the input defines twice.

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

// podReport is a finding about the pod as a whole, at the container that
// runs proxy-await, else its first application container.
func podReport(p *manifest.Pod, c *manifest.Container, rule string, line int, format string, args ...any) Finding {
	if line == 0 {
		line = c.Line
	}
	return Finding{File: p.File, Line: line, Level: levelOf(rule), Rule: rule,
		Kind: p.Kind, Name: p.Name, Container: c.Name, Message: fmt.Sprintf(format, args...)}
}

// mainContainer is the container a finding about the pod names: the first
// that runs proxy-await, else the first application container.
func mainContainer(p *manifest.Pod, m sidecar.Set, runs func(*manifest.Container) bool) *manifest.Container {
	for _, c := range p.Containers {
		if runs(c) {
			return c
		}
	}
	for _, c := range p.Containers {
		if !c.Init && !slices.ContainsFunc(m.Sidecars, func(s *sidecar.Sidecar) bool { return s.Container == c }) {
			return c
		}
	}
	return p.Containers[0]
}

// podFindings judges what p shows as a whole.
func podFindings(p *manifest.Pod, m sidecar.Set, runs func(*manifest.Container) bool, images invocation.Images) []Finding {
	if len(p.Containers) == 0 {
		return nil
	}
	c := mainContainer(p, m, runs)
	var out []Finding
	if p.NSConflict != "" && (p.Job || slices.ContainsFunc(p.Containers, runs)) {
		line := p.NamespaceLine
		if line == 0 {
			line = p.Line
		}
		out = append(out, podReport(p, c, ruleNamespaceConflict, line, "%s", p.NSConflict))
	}
	for _, m := range []manifest.Meta{p.Labels, p.Annotations} {
		for _, key := range m.Keys() {
			if right := sidecar.NearMiss(key); right != "" {
				out = append(out, podReport(p, c, ruleMisspeltKey, m.At(key).Line, "%s is not a key any proxy reads; %s is: the proxy never sees this one, so write %s",
					key, right, right))
			}
		}
	}
	if p.Job && !slices.ContainsFunc(p.Containers, runs) {
		out = append(out, unstopped(p, m, c, images)...)
	}
	return out
}

// unstopped: a Job's pod without proxy-await whose classic sidecar no
// statement of the application's command stops.
func unstopped(p *manifest.Pod, m sidecar.Set, app *manifest.Container, images invocation.Images) []Finding {
	var classics []*sidecar.Sidecar
	for _, s := range m.Sidecars {
		if s.Nativeness != sidecar.Native {
			classics = append(classics, s)
		}
	}
	if len(classics) == 0 {
		return nil
	}
	var cmds [][]manifest.Word
	for _, c := range p.Containers {
		if !c.Init && !slices.ContainsFunc(m.Sidecars, func(s *sidecar.Sidecar) bool { return s.Container == c }) {
			cmds = append(cmds, invocation.Commands(c, images)...)
		}
	}
	var presets []string
	for _, s := range classics {
		if !slices.Contains(presets, s.Preset) {
			presets = append(presets, s.Preset)
		}
	}
	var out []Finding
	for _, s := range classics {
		if stops(cmds, s) {
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
			line = firstLine(app)
		}
		off := ""
		if s.ShutdownAt.Off != "" {
			off = " (" + s.ShutdownAt.Off + ")"
		}
		out = append(out, podReport(p, app, ruleJobNeverCompletes, line,
			"the classic %s sidecar (%s) keeps running after the application exits and nothing here stops it, so the %s never completes: run the application under proxy-await -S --proxy %s, or POST %s when it ends%s%s%s",
			s.Name, s.From, p.JobName(), strings.Join(presets, ","), quit, off, named, s.WhenClassic()))
	}
	return out
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
		switch program := manifest.BaseName(cmd[0].Text); program {
		case "curl", "wget", "http", "https", "xh":
			if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, s.ShutdownAt.Path) }) {
				return true
			}
		default:
			if s.StoppedByCommand(program, args) {
				return true
			}
		}
	}
	return false
}
