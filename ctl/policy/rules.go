// rules.go: the variables the validations share, and one validation for
// each of check's rules that says the policy judges it (rules.Rule.Policy).
// Each one's message starts with the rule's name and ends with the rule's
// fix; the defaults it reads (the grace period, --proxy's and
// --shutdown-timeout's, the shells, the preStop sleep) are those of the
// packages that read manifests and flags.

package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/proxies"
)

// Variable is a named CEL expression that later ones read as
// variables.NAME.
type Variable struct{ Name, Expression string }

// Validation is one rule's CEL: the object is refused when Expression is
// false, with the message that MessageExpression makes.
type Validation struct {
	Rule              string
	Expression        string
	MessageExpression string
}

// Covered are the rules that the policy judges, in the registry's order.
func Covered() []rules.Rule {
	return slices.DeleteFunc(rules.All(), func(r rules.Rule) bool { return !r.Policy })
}

// Omitted are the rules that the policy leaves out and says why
// (rules.Rule.PolicyOmits), in the registry's order.
func Omitted() []rules.Rule {
	return slices.DeleteFunc(rules.All(), func(r rules.Rule) bool { return r.PolicyOmits == "" })
}

func (x *writer) variables() []Variable {
	idx := make([]string, maxWords)
	for i := range idx {
		idx[i] = fmt.Sprint(i)
	}
	vars := []Variable{
		{"idx", "[" + strings.Join(idx, ", ") + "]"},
		{"template", "object.kind == 'Pod' ? object : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template : object.spec.template"},
		{"job", "object.kind == 'Job' || object.kind == 'CronJob'"},
		{"spec", "variables.template.spec"},
		{"labels", "has(variables.template.metadata) && has(variables.template.metadata.labels) ? variables.template.metadata.labels : {}"},
		{"annotations", "has(variables.template.metadata) && has(variables.template.metadata.annotations) ? variables.template.metadata.annotations : {}"},
		{"containers", "has(variables.spec.containers) ? variables.spec.containers : []"},
		{"inits", "has(variables.spec.initContainers) ? variables.spec.initContainers : []"},
		{"all", "variables.inits + variables.containers"},
		// The containers that run beside the application: its own and the
		// native sidecars; any other init container has ended by then.
		{"running", "variables.inits.filter(c, has(c.restartPolicy) && c.restartPolicy == 'Always') + variables.containers"},
		{"grace", "has(variables.spec.terminationGracePeriodSeconds) ? duration(string(variables.spec.terminationGracePeriodSeconds) + 's') : " + durationOf(manifest.DefaultGrace)},
	}
	// What the object shows of each proxy's sidecar, by preset.
	// classic: one of them is not native; onlyClassic: none is, where
	// check judges the one that answers, which may be a native one.
	var classic, onlyClassic, nativeMay, off, never, moved []string
	for _, px := range proxies.InPods {
		classic = append(classic, fmt.Sprintf("%s: %s", q(px.Preset), x.notNative(px)))
		onlyClassic = append(onlyClassic, fmt.Sprintf("%s: (%s && !%s)", q(px.Preset), x.notNative(px), nativeShown(px)))
		nativeMay = append(nativeMay, fmt.Sprintf("%s: %s", q(px.Preset), nativeMayAnswer(px)))
		moved = append(moved, fmt.Sprintf("%s: %s", q(px.Preset), x.shutdownMoved(px)))
		off = append(off, fmt.Sprintf("%s: %s", q(px.Preset), or(x.shutdownOff(px))))
		never = append(never, fmt.Sprintf("%s: %s", q(px.Preset), or(x.readyOff(px), x.absent(px))))
	}
	vars = append(vars,
		Variable{"classic", "{" + strings.Join(classic, ", ") + "}"},
		Variable{"onlyClassic", "{" + strings.Join(onlyClassic, ", ") + "}"},
		Variable{"nativeMay", "{" + strings.Join(nativeMay, ", ") + "}"},
		Variable{"moved", "{" + strings.Join(moved, ", ") + "}"},
		Variable{"shutdownOff", "{" + strings.Join(off, ", ") + "}"},
		Variable{"neverReady", "{" + strings.Join(never, ", ") + "}"},
	)
	// What each container runs: its words, where its "--" is, whether it
	// runs proxy-await plainly, and the flags the rules read.
	for _, l := range []struct{ prefix, cs string }{{"", "variables.containers"}, {"init", "variables.inits"}} {
		name := func(n string) string {
			if l.prefix == "" {
				return n
			}
			return l.prefix + strings.ToUpper(n[:1]) + n[1:]
		}
		v := func(n string) string { return "variables." + name(n) }
		w, d := v("words")+"[k]", v("dds")+"[k][0]"
		// Each list is read once by position: ks, the containers'
		// positions; pos, each container's positions of proxy-await's
		// flags, before its "--". The rest iterate those, not idx.
		each := func(expr string) string {
			return fmt.Sprintf("%s.map(k, %s)", v("ks"), expr)
		}
		vars = append(vars,
			Variable{name("ks"), fmt.Sprintf("variables.idx.filter(k, k < size(%s))", l.cs)},
			Variable{name("words"), l.cs + ".map(c, " + argv("c") + ")"},
			Variable{name("dds"), v("words") + ".map(w, variables.idx.filter(i, i < size(w) && w[i] == '--'))"},
			Variable{name("pos"), each(fmt.Sprintf("size(%[1]s[k]) > 0 ? variables.idx.filter(i, i >= 1 && i < %[1]s[k][0]) : []", v("dds")))},
			Variable{name("plain"), each(x.plain("k", v("words"), v("dds"), v("pos"), l.cs))},
			Variable{name("command"), each(fmt.Sprintf("%s[k] && %s", v("plain"), command(w, d)))},
		)
		// Each flag the rules read, once: where it is last set (-1 for
		// nowhere), then its value ("" for none).
		for _, f := range []struct{ flag, short, short2 string }{
			{"term-delay", "", "td"}, {"kill-after", "", "ka"}, {"shutdown-timeout", "", "st"}, {"proxy", "", "px"},
			{"shutdown", "S", "s"}, {"keep-proxy-on-failure", "", "keep"}, {"shutdown-url", "", "su"}, {"ready-url", "", "ru"}, {"port", "p", "port"},
		} {
			l := x.lastSet(w, v("pos")+"[k]", f.flag, f.short)
			vars = append(vars, Variable{name(f.short2 + "At"), each(fmt.Sprintf("%s[k] ? (size(%[2]s) > 0 ? %[2]s[size(%[2]s) - 1] : -1) : -1", v("plain"), l))})
			at := v(f.short2+"At") + "[k]"
			val := fmt.Sprintf("(%[3]s < 0 ? '' : %[1]s[%[3]s] == '--%[2]s' ? %[1]s[%[3]s + 1] : %[1]s[%[3]s].startsWith('--%[2]s=') ? %[1]s[%[3]s].substring(%[4]d) : '-')",
				w, f.flag, at, len(f.flag)+3)
			vars = append(vars, Variable{name(f.short2), each(val)})
		}
		dur := func(short2 string) string {
			val := v(short2) + "[k]"
			return fmt.Sprintf("(%[1]s == '' ? duration('0s') : %[1]s.matches('^[0-9]+$') ? duration(%[1]s + 's') : duration(%[1]s))", val)
		}
		ok := func(short2 string) string {
			val := v(short2) + "[k]"
			return fmt.Sprintf("(%[1]s == '' || %[1]s.matches('%[2]s'))", val, durationPattern)
		}
		// A boolean flag is on where it is last set, unless that sets it
		// to a false word: --shutdown=false, as proxy-await's parser reads it.
		on := func(short2, flag string) string {
			at := v(short2+"At") + "[k]"
			return fmt.Sprintf("(%[1]s >= 0 && !(%[2]s[%[1]s].startsWith('--%[3]s=') && %[2]s[%[1]s].substring(%[4]d) in %[5]s))",
				at, w, flag, len(flag)+3, list(falseWords))
		}
		vars = append(vars,
			Variable{name("shutdownOn"), each(on("s", "shutdown"))},
			Variable{name("keepOn"), each(on("keep", "keep-proxy-on-failure"))},
			Variable{name("urls"), each(fmt.Sprintf("%s[k] >= 0 || %s[k] >= 0 || %s[k] >= 0", v("suAt"), v("ruAt"), v("portAt")))},
			Variable{name("presets"), each(fmt.Sprintf("!%[1]s[k] ? [] : %[2]s[k] == '' ? %[3]s : %[2]s[k].lowerAscii().split(',').map(p, p.trim())", v("plain"), v("px"), list(x.defaults.Proxies)))},
			Variable{name("overGrace"), each(fmt.Sprintf("%s[k] && %s && %s && %s && %s + %s + %s + (%s[k] ? (%s[k] != '' ? %s : %s) : duration('0s')) > variables.grace",
				v("command"), ok("td"), ok("ka"), ok("st"), preStop(l.cs+"[k]"), dur("td"), dur("ka"), v("shutdownOn"), v("st"), dur("st"), durationOf(x.defaults.ShutdownTimeout)))},
		)
	}
	return vars
}

// or joins conditions, "false" for none.
func or(conds ...string) string {
	var out []string
	for _, c := range conds {
		if c != "" {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "false"
	}
	return "(" + strings.Join(out, " || ") + ")"
}

// command: proxy-await runs a command after its flags.
func command(w, d string) string { return fmt.Sprintf("size(%s) > %s + 1", w, d) }

// preStop is the container's preStop hook, as long as it says it takes:
// a sleep action, or an exec of sleep with a number of seconds; 0 for
// any other (which check counts as no more).
func preStop(c string) string {
	h := c + ".lifecycle.preStop"
	return fmt.Sprintf(`(has(%[1]s.lifecycle) && has(%[2]s) ? (has(%[2]s.sleep) && has(%[2]s.sleep.seconds) && %[2]s.sleep.seconds > 0 ? duration(string(%[2]s.sleep.seconds) + 's') : has(%[2]s.exec) && has(%[2]s.exec.command) && size(%[2]s.exec.command) == 2 && (%[2]s.exec.command[0] == %[3]s || %[2]s.exec.command[0].endsWith(%[4]s)) && %[2]s.exec.command[1].matches('^[0-9]{1,6}$') ? duration(%[2]s.exec.command[1] + 's') : duration('0s')) : duration('0s'))`,
		c, h, q(invocation.Sleep), q("/"+invocation.Sleep))
}

// durationOf is a duration as a CEL literal.
func durationOf(d time.Duration) string { return "duration(" + q(d.String()) + ")" }

// refused is a validation over one list of containers: it holds unless
// cond holds for a container k (V.NAME its variables, prefixed with
// prefix; C[k] the container itself), and names are the containers it
// refuses. C[k] is written after the prefix's case is fixed, which would
// read variables.inits[k] as variables.initS[k], a flag's value.
func refused(prefix, cond string) (string, string) {
	cs, ks := "variables.containers", "variables.ks"
	if prefix != "" {
		cs, ks = "variables.inits", "variables.initKs"
	}
	cond = strings.ReplaceAll(cond, "V.", "variables."+prefix)
	if prefix != "" {
		cond = fixCase(cond, prefix)
	}
	cond = strings.ReplaceAll(cond, "C[k]", cs+"[k]")
	return fmt.Sprintf("!%s.exists(k, %s)", ks, cond),
		fmt.Sprintf("%s.filter(k, %s).map(k, %s[k].name)", ks, cond, cs)
}

// fixCase writes variables.initX for variables.initx.
func fixCase(s, prefix string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "variables."+prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len("variables."+prefix)
		b.WriteString(s[:j])
		if j < len(s) {
			b.WriteString(strings.ToUpper(s[j : j+1]))
			j++
		}
		s = s[j:]
	}
}

// validationWriters write the validation of each rule that the policy
// judges, by the rule's name. Which rules those are is the rules' to say
// (Covered); a rule that says so and has no writer here is a mistake that
// New panics on, and a test finds first.
var validationWriters = map[string]func(*writer, rules.Rule) Validation{
	"grace-period":        (*writer).gracePeriod,
	"job-never-completes": (*writer).jobNeverCompletes,
	"preset-mismatch":     (*writer).presetMismatch,
	"retry-loses-proxy":   (*writer).retryLosesProxy,
	"shell-form":          (*writer).shellForm,
	"shutdown-disabled":   (*writer).shutdownDisabled,
}

func (x *writer) validations() []Validation {
	var out []Validation
	for _, r := range Covered() {
		write, ok := validationWriters[r.Name]
		if !ok {
			panic("policy: no validation for the rule " + r.Name)
		}
		out = append(out, write(x, r))
	}
	return out
}

// message is a validation's message, as check words its findings: the
// rule's name, what (a CEL expression that makes a string) the object
// shows, and the rule's fix, with more where the policy can say more.
func message(r rules.Rule, what, more string) string {
	return q(r.Name+": ") + " + " + what + " + " + q("; fix: "+strings.ReplaceAll(r.Fix, "`", "")+more)
}

// both is a validation over the init containers and the containers: its
// expression, and the names of the containers it refuses.
func both(cond string) (string, string) {
	e1, m1 := refused("init", cond)
	e2, m2 := refused("", cond)
	return e1 + " && " + e2, "(" + m1 + " + " + m2 + ").join(', ')"
}

// apps is a validation over the containers alone.
func apps(cond string) (string, string) {
	e, m := refused("", cond)
	return e, m + ".join(', ')"
}

// gracePeriod: preStop + --term-delay + --kill-after (+
// --shutdown-timeout with -S) past the grace period.
func (x *writer) gracePeriod(r rules.Rule) Validation {
	e, m := both("V.overGrace[k]")
	return Validation{r.Name, e, message(r,
		`'container ' + `+m+` + ': its preStop + --term-delay + --kill-after (+ --shutdown-timeout with -S) add up to more than terminationGracePeriodSeconds (' + string(variables.grace) + '): the kubelet\'s SIGKILL comes first'`,
		" (proxy-awaitctl check says by how much)")}
}

// jobNeverCompletes: a Job's classic sidecar that nothing stops, where
// its application runs under proxy-await without -S. A Job that runs no
// proxy-await is not judged: its own code may call the sidecar's quit
// endpoint (a Dapr app calls the SDK's Shutdown()), which the object does
// not show.
func (x *writer) jobNeverCompletes(r rules.Rule) Validation {
	// Nor a sidecar whose proxy documents how the application stops it from
	// its own code, for which check warns.
	var appStops []string
	for _, px := range proxies.InPods {
		if px.AppStops != "" {
			appStops = append(appStops, px.Preset)
		}
	}
	anyClassic := fmt.Sprintf("variables.classic.exists(p, variables.classic[p] && !(p in %s))", list(appStops))
	e, m := apps("variables.job && V.command[k] && !V.shutdownOn[k] && " + anyClassic)
	return Validation{r.Name, e, message(r,
		fmt.Sprintf(`'the classic sidecar (' + variables.classic.filter(p, variables.classic[p]).join(', ') + ') keeps running after the application exits, so the ' + object.kind + ' never completes (container ' + %s + ' runs proxy-await without -S)'`, m),
		" (proxy-awaitctl inject adds them)")}
}

// retryLosesProxy: -S without --keep-proxy-on-failure, where the kubelet
// restarts the application in the same pod.
func (x *writer) retryLosesProxy(r rules.Rule) Validation {
	e, m := apps("variables.job && has(variables.spec.restartPolicy) && variables.spec.restartPolicy == 'OnFailure' && V.command[k] && V.shutdownOn[k] && !V.keepOn[k] && !V.urls[k] && V.presets[k].exists(p, p in variables.onlyClassic && variables.onlyClassic[p] && !variables.moved[p])")
	return Validation{r.Name, e, message(r,
		`'container ' + `+m+` + ': restartPolicy: OnFailure restarts the application in the same pod after a failure, but -S has shut the classic sidecar down by then, and it is not restarted'`, "")}
}

// shutdownDisabled: -S to a sidecar whose shutdown endpoint the pod turns
// off; the fix names each proxy's switch, from the proxy table.
func (x *writer) shutdownDisabled(r rules.Rule) Validation {
	e, m := both("V.command[k] && V.shutdownOn[k] && !V.urls[k] && V.presets[k].exists(p, p in variables.shutdownOff && variables.shutdownOff[p])")
	var switches []string
	for _, px := range proxies.InPods {
		switch sw := px.ShutdownSwitch; {
		case px.Shutdown.Flag != "":
			switches = append(switches, fmt.Sprintf("%s: --%s in its args", px.Name, px.Shutdown.Flag))
		case sw.Key != "" && sw.On != "":
			switches = append(switches, fmt.Sprintf("%s: %s: %s", px.Name, sw.Key, sw.On))
		case sw.Key != "":
			switches = append(switches, fmt.Sprintf("%s: %s: \"true\"", px.Name, sw.Key))
		}
	}
	return Validation{r.Name, e, message(r,
		`'container ' + `+m+` + ': -S POSTs to a sidecar whose shutdown endpoint is off, so it would keep running'`,
		" ("+strings.Join(switches, "; ")+")")}
}

// presetMismatch: proxy-await waits for a sidecar that never answers there,
// or that the pod does not have; or, in an init container, for a classic
// sidecar, which starts after it. The fix names each proxy's flag without
// which it never answers, from the proxy table.
func (x *writer) presetMismatch(r rules.Rule) Validation {
	ew, mw := both("!V.urls[k] && V.presets[k].exists(p, p in variables.neverReady && variables.neverReady[p])")
	es, ms := refused("init", "!(has(C[k].restartPolicy) && C[k].restartPolicy == 'Always') && !V.urls[k] && V.presets[k].exists(p, p in variables.onlyClassic && variables.onlyClassic[p] && !variables.nativeMay[p])")
	var flags []string
	for _, px := range proxies.InPods {
		if f := px.Ready.Flag; f != "" {
			flags = append(flags, fmt.Sprintf("%s: --%s in its args", px.Name, f))
		}
	}
	return Validation{r.Name, ew + " && " + es, message(r,
		fmt.Sprintf(`'container ' + (%[1]s != '' ? %[1]s + ': proxy-await waits for a sidecar that the pod does not have, or that never answers where it waits, so it would wait forever' : %[2]s.join(', ') + ': this init container waits for a classic sidecar, which starts only after every init container has finished, so it waits forever')`, mw, ms),
		" ("+strings.Join(flags, "; ")+")")}
}

// shellForm: proxy-await runs its command under sh -c without exec, in a
// script of one plain statement; the shells are those check reads scripts
// of and finds an error in such a script: not those that exec it
// themselves, nor those that may be such a shell, of which check warns.
func (x *writer) shellForm(r rules.Rule) Validation {
	shells := slices.DeleteFunc(slices.Clone(invocation.Shells), func(s string) bool {
		return slices.Contains(invocation.ExecsLone, s) || slices.Contains(invocation.MayExecLone, s)
	})
	form := `^[ \\t]*([^ \\t\\n;&|<>()$\x60\x27"\\\\#]*/)?proxy-await([ \\t]+[^ \\t\\n;&|<>()$\x60\x27"\\\\#]+)*[ \\t]+--[ \\t]+[^\\n;&|<>()$\x60\x27"\\\\#]*[^ \\t\\n;&|<>()$\x60\x27"\\\\#][ \\t\\n]*$`
	w := argv("c")
	shell := fmt.Sprintf(`(size(%[1]s) >= 3 && %[1]s[0].matches('^(/[^ ]*/)?(%[3]s)$') && %[1]s[1] == '-c' && %[1]s[2].matches('%[2]s') && !%[1]s[2].split(' -- ')[0].matches('[ \\t]--(check|inject|policy|install|help|version)') && !%[1]s[2].split(' -- ')[0].matches('[ \\t]-[^- \\t]*[hV]'))`,
		w, form, strings.Join(shells, "|"))
	return Validation{r.Name, fmt.Sprintf("!variables.all.exists(c, %s)", shell), message(r,
		fmt.Sprintf(`'container ' + variables.all.filter(c, %s).map(c, c.name).join(', ') + ': proxy-await runs under sh -c without exec: the shell gets the kubelet\'s SIGTERM, not proxy-await'`, shell), "")}
}

// nativeMayAnswer is the condition that a native sidecar of another
// proxy, one whose readiness has px's path, is in the pod: it starts
// before the init containers after it, and may answer px's readiness
// probe (its port set by a flag or its configuration), which check then
// judges by the one that answers; the policy leaves it to check.
func nativeMayAnswer(px *proxies.Proxy) string {
	var others []string
	for _, o := range proxies.InPods {
		if o != px && o.Ready.Path == px.Ready.Path {
			others = append(others, isProxy("c", o))
		}
	}
	if len(others) == 0 {
		return "false"
	}
	return fmt.Sprintf("variables.inits.exists(c, has(c.restartPolicy) && c.restartPolicy == 'Always' && !%s && (%s))", runsPA("c"), strings.Join(others, " || "))
}

// shutdownOff is the condition that the sidecar that takes px's preset's
// shutdown POST, at the preset's own port, does not take it, from the
// object alone: its container lacks the flag that turns the endpoint on
// (unserved), or the pod's own annotation turns it off; "" when the object
// alone never says.
func (x *writer) shutdownOff(px *proxies.Proxy) string {
	var offs []string
	if u := x.unserved(px, true); u != "" {
		offs = append(offs, u)
	}
	if sw := px.ShutdownSwitch; sw.Key != "" {
		off := fmt.Sprintf("(%[1]s in variables.annotations && !(variables.annotations[%[1]s] in %[2]s))", q(sw.Key), list([]string{sw.On}))
		if sw.On == "" {
			off = fmt.Sprintf("(%[1]s in variables.annotations && variables.annotations[%[1]s] in %[2]s)", q(sw.Key), list(falseWords))
		}
		offs = append(offs, fmt.Sprintf("(%s && !%s && %s && !%s)", x.notNative(px), nativeShown(px), off, movedShutdown(px)))
	}
	if len(offs) == 0 {
		return ""
	}
	return "(" + strings.Join(offs, " || ") + ")"
}

// shutdownMoved is the condition that px's shutdown endpoint may not be
// where its preset POSTs: the pod's annotations move it, or a container
// of px's sets the flag of its port, which the policy does not follow.
func (x *writer) shutdownMoved(px *proxies.Proxy) string {
	f := px.Shutdown.PortFlag
	if f == "" {
		return movedShutdown(px)
	}
	return fmt.Sprintf("(%s || variables.running.exists(c, %s && !%s))", movedShutdown(px), isProxy("c", px), x.flagOff(px, "c", f))
}

// movedShutdown is the condition that the pod's annotations move px's
// shutdown endpoint, which the policy does not follow.
func movedShutdown(px *proxies.Proxy) string {
	var keys []string
	for _, k := range []string{px.ShutdownPathKey, px.ShutdownPortKey, px.AdminPortKey} {
		if k != "" {
			keys = append(keys, q(k)+" in variables.annotations")
		}
	}
	if len(keys) == 0 {
		return "false"
	}
	return "(" + strings.Join(keys, " || ") + ")"
}

// readyOff is the condition that the sidecar that answers px's preset's
// readiness probe, at the preset's own port, never answers it: a retired
// image, or a container without the flag that turns the endpoint on.
func (x *writer) readyOff(px *proxies.Proxy) string { return x.unserved(px, false) }

// unserved is the condition that no sidecar container serves px's
// endpoint (readiness, or with shutdown the shutdown POST) at the
// preset's own port and path, and one is there that does not: as check's
// sidecar.Set.At decides, the one that serves it wins over the one that
// does not (two proxies of one kind: the one without the endpoint's flag
// binds no port). A container that may serve it (its port or flag set
// in a way the policy does not read, a native sidecar, for shutdown), an
// injected sidecar of another proxy whose endpoint may be there, or one
// that runs proxy-await in any word, leaves it not judged. "" for a proxy
// whose endpoint no flag of its own turns on and no retired image lacks.
func (x *writer) unserved(px *proxies.Proxy, shutdown bool) string {
	end := func(o *proxies.Proxy) proxies.Endpoint {
		if shutdown {
			return o.Shutdown
		}
		return o.Ready
	}
	e := end(px)
	if e.Flag == "" && len(px.Retired) == 0 {
		return ""
	}
	var at, serves, injected []string
	for _, o := range proxies.InPods {
		eo := end(o)
		if eo.Path != e.Path || o.PortInConfig {
			continue
		}
		// An annotation of the pod may move o's port there.
		var keys []string
		for _, k := range []string{o.AdminPortKey, map[bool]string{true: o.ShutdownPortKey}[shutdown]} {
			if k != "" {
				keys = append(keys, q(k)+" in variables.annotations")
			}
		}
		moved := or(keys...)
		if o.Inject.Key != "" && eo.Port == e.Port {
			injected = append(injected, injectIn(o, o.Inject.On))
		} else if o.Inject.Key != "" {
			injected = append(injected, fmt.Sprintf("(%s && %s)", injectIn(o, o.Inject.On), moved))
		}
		if len(o.Images) == 0 && len(o.Containers) == 0 {
			continue
		}
		var retired []string
		for _, r := range o.Retired {
			retired = append(retired, fmt.Sprintf("%s.endsWith(%s)", repository("c.image"), q(r.Image)))
		}
		old := or(retired...)
		// Where its endpoint is: at its own port unless a setting moves it.
		here := "false"
		if eo.Port == e.Port {
			here = "true"
			if eo.PortFlag != "" {
				here = fmt.Sprintf("(%s || %s)", old, x.flagOff(o, "c", eo.PortFlag))
			}
			here = fmt.Sprintf("(%s && !%s)", here, moved)
		}
		may := "true"
		if eo.Port != e.Port && eo.PortFlag == "" {
			may = moved
		}
		off := old
		if eo.Flag != "" {
			off = or(old, x.flagOff(o, "c", eo.Flag))
		}
		if shutdown {
			off = fmt.Sprintf("(%s && !(has(c.restartPolicy) && c.restartPolicy == 'Always'))", off)
		}
		sidecar := fmt.Sprintf("(%s && !%s.exists(w, w.contains('proxy-await')))", isProxy("c", o), argv("c"))
		at = append(at, fmt.Sprintf("(%s && %s && %s)", sidecar, here, off))
		serves = append(serves, fmt.Sprintf("(%s && %s && !%s)", isProxy("c", o), may, off))
	}
	cond := fmt.Sprintf("(variables.running.exists(c, %s) && !variables.running.exists(c, %s))", or(at...), or(serves...))
	if len(injected) > 0 {
		cond = fmt.Sprintf("(%s && !%s)", cond, or(injected...))
	}
	return cond
}

// flagOff: the sidecar container c was not started with its flag --f, as
// far as the object says for sure: no word of its command line names it,
// none comes from elsewhere, no variable or configuration file sets it.
func (x *writer) flagOff(px *proxies.Proxy, c, f string) string {
	w := argv(c)
	cond := fmt.Sprintf("!%[1]s.exists(v, v.startsWith('--%[2]s') || v.contains('$(') || v.startsWith('-%[2]s'))", w, f)
	if s := px.Settings; s.EnvPrefix != "" {
		cond += fmt.Sprintf(" && !has(%[1]s.envFrom) && (!has(%[1]s.env) || !%[1]s.env.exists(e, e.name.startsWith(%[2]s)))", c, q(s.EnvPrefix))
	}
	if s := px.Settings; s.ConfigFile != "" {
		cond += fmt.Sprintf(" && !%[1]s.exists(v, v.startsWith('--%[2]s') || v.startsWith('-%[2]s'))", w, s.ConfigFile)
	}
	return "(" + cond + ")"
}

// absent is the condition that the pod says it has no px sidecar: its own
// injection annotation keeps it out, or, for an injector that reads only
// the pod's, does not ask for it; and no sidecar the pod shows answers
// where px's would.
func (x *writer) absent(px *proxies.Proxy) string {
	in := px.Inject
	if in.Key == "" || len(px.Reaches) > 0 {
		return ""
	}
	var conds []string
	if len(in.Off) > 0 {
		conds = append(conds, injectIn(px, in.Off))
	}
	if in.PodOnly {
		conds = append(conds, "!"+injectIn(px, in.On))
	}
	if m := in.Sidecarless; m.Key != "" {
		conds = append(conds, fmt.Sprintf("(!%s && %s)", injectIn(px, in.On), podKeyIn(m.Key, []string{m.Value})))
	}
	// A sidecar whose port is in its own configuration answers anywhere.
	var others []string
	for _, o := range proxies.InPods {
		if o != px && o.PortInConfig && o.Ready.Path == px.Ready.Path {
			others = append(others, shown(o))
		}
	}
	cond := fmt.Sprintf("(!%s && (%s))", shown(px), strings.Join(conds, " || "))
	if len(others) > 0 {
		cond = fmt.Sprintf("(%s && !(%s))", cond, strings.Join(others, " || "))
	}
	return cond
}
