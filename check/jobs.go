// jobs.go: what a pod shows as a whole, whether or not a container runs
// proxy-await: a Job whose classic sidecar nothing stops, a label or
// annotation that a proxy would read if it were spelt right, a Namespace
// that the input defines twice.

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/proxies"
)

// podReport is a finding about the pod as a whole, at the container that
// runs proxy-await, else its first application container.
func podReport(p *pod, c *container, rule string, line int, format string, args ...any) Finding {
	if line == 0 {
		line = c.line
	}
	return Finding{File: p.file, Line: line, Level: levelOf(rule), Rule: rule,
		Kind: p.kind, Name: p.name, Container: c.name, Message: fmt.Sprintf(format, args...)}
}

// mainContainer is the container a finding about the pod names: the first
// that runs proxy-await, else the first application container.
func mainContainer(p *pod, m mesh, runs func(*container) bool) *container {
	for _, c := range p.containers {
		if runs(c) {
			return c
		}
	}
	for _, c := range p.containers {
		if !c.init && !slices.ContainsFunc(m.sidecars, func(s *sidecar) bool { return s.container == c }) {
			return c
		}
	}
	return p.containers[0]
}

// podFindings judges what p shows as a whole.
func podFindings(p *pod, m mesh, runs func(*container) bool, entrypoint func(string) []string) []Finding {
	if len(p.containers) == 0 {
		return nil
	}
	c := mainContainer(p, m, runs)
	var out []Finding
	if p.nsConflict != "" && (p.job || slices.ContainsFunc(p.containers, runs)) {
		line := p.nsLine
		if line == 0 {
			line = p.line
		}
		out = append(out, podReport(p, c, ruleNamespaceConflict, line, "%s", p.nsConflict))
	}
	known := knownKeys()
	for _, m := range []meta{p.labels, p.annotations} {
		for _, key := range m.keys() {
			if right := misspelt(key, known); right != "" {
				out = append(out, podReport(p, c, ruleMisspeltKey, m.at(key).line, "%s is not a key any proxy reads; %s is: the proxy never sees this one, so write %s",
					key, right, right))
			}
		}
	}
	if p.job && !slices.ContainsFunc(p.containers, runs) {
		out = append(out, unstopped(p, m, c, entrypoint)...)
	}
	return out
}

// unstopped: a Job's pod without proxy-await whose classic sidecar no
// statement of the application's command stops.
func unstopped(p *pod, m mesh, app *container, entrypoint func(string) []string) []Finding {
	var classics []*sidecar
	for _, s := range m.sidecars {
		if s.native != native {
			classics = append(classics, s)
		}
	}
	if len(classics) == 0 {
		return nil
	}
	var cmds [][]word
	for _, c := range p.containers {
		if !c.init && !slices.ContainsFunc(m.sidecars, func(s *sidecar) bool { return s.container == c }) {
			cmds = append(cmds, commandsOf(c, entrypoint)...)
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
		quit := s.shutdown.path
		if s.shutdown.port != 0 {
			quit = fmt.Sprintf("http://127.0.0.1:%d%s", s.shutdown.port, s.shutdown.path)
		}
		line, named := 0, ""
		for _, cmd := range cmds {
			for _, w := range cmd[1:] {
				if strings.Contains(w.text, s.shutdown.path) && named == "" {
					line, named = w.line, onlyNamed(cmd, w)
				}
			}
		}
		if line == 0 {
			line = firstLine(app)
		}
		off := ""
		if s.shutdown.off != "" {
			off = " (" + s.shutdown.off + ")"
		}
		out = append(out, podReport(p, app, ruleJobNeverCompletes, line,
			"the classic %s sidecar (%s) keeps running after the application exits and nothing here stops it, so the %s never completes: run the application under proxy-await -S --proxy %s, or POST %s when it ends%s%s%s",
			s.Name, s.from, p.jobName(), strings.Join(presets, ","), quit, off, named, s.whenClassic()))
	}
	return out
}

// onlyNamed says why cmd, which has w name a sidecar's quit endpoint, does
// not call it, as far as the manifest shows: a folded scalar joined the
// line that calls it to the command before; a trap runs it only on a
// signal; or the endpoint is an argument of a program that is no HTTP
// client, which may or may not call it.
func onlyNamed(cmd []word, w word) string {
	program := shownWord(word{text: baseName(cmd[0].text), secret: cmd[0].secret, written: cmd[0].written})
	switch {
	case w.folded && w.line > cmd[0].line:
		return fmt.Sprintf("; the command names %s only as an argument of %s, on a later line of a folded scalar (- >), which joins the script's lines into one command: write the script as a literal block (- |), or join the commands with &&",
			shownWord(w), program)
	case cmd[0].text == "trap":
		return fmt.Sprintf("; the script calls it in a trap on %s, which runs only when the shell gets that signal, not when the application exits: add EXIT to the trap's conditions",
			shownWord(cmd[len(cmd)-1]))
	}
	return fmt.Sprintf("; the command gives %s to %s, which check cannot see call it", shownWord(w), program)
}

// firstLine is the line of a container's command, else its args, else the
// container's.
func firstLine(c *container) int {
	switch {
	case len(c.command) > 0:
		return c.command[0].line
	case len(c.args) > 0:
		return c.args[0].line
	}
	return c.line
}

// stops says whether a command visibly stops sidecar s: an HTTP client
// that calls its quit endpoint, or a command that the proxy table says
// stops it (pilot-agent's request for Istio's, linkerd-await --shutdown for
// Linkerd's, scuttle for an Envoy's).
func stops(cmds [][]word, s *sidecar) bool {
	for _, cmd := range cmds {
		if len(cmd) == 0 || !cmd[0].known {
			continue
		}
		args := make([]string, len(cmd)-1)
		for i, w := range cmd[1:] {
			args[i] = w.text
		}
		switch program := baseName(cmd[0].text); program {
		case "curl", "wget", "http", "https", "xh":
			if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, s.shutdown.path) }) {
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

// knownKeys are the labels and annotations that the proxies read.
func knownKeys() []string {
	var keys []string
	for _, px := range proxies.InPods {
		keys = append(keys, px.Keys()...)
	}
	return keys
}

// misspelt is the key of known that key is a near miss of, "" when it is
// none: the same but for case, or in the same domain and one or two
// letters off.
func misspelt(key string, known []string) string {
	if slices.Contains(known, key) {
		return ""
	}
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		domain = key[:min(len(key), 4)]
	}
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k
		}
		if d := len(k) - len(key); d < -2 || d > 2 || len(key) < 8 || !strings.HasPrefix(k, domain) {
			continue
		}
		if editdistance.Of(k, key) <= 2 {
			return k
		}
	}
	return ""
}

// nearMiss is a key of the pod's that is a near miss of key, "" if none.
func (p *pod) nearMiss(key string) string {
	known := knownKeys()
	for _, m := range []meta{p.labels, p.annotations} {
		for _, k := range m.keys() {
			if misspelt(k, known) == key {
				return k
			}
		}
	}
	return ""
}
