// cel.go: the policy's CEL, written from the proxy table and proxy-await's
// flags. Each rule refuses only what it can judge exactly from the object
// alone: proxy-await as the first word of a container's command (or of its
// args, without a command), its flags written out before "--" in forms
// whose meaning the words alone give, no $(VAR), no envFrom and no
// PROXY_AWAIT_ variable beside them; the sidecars that the object shows by
// itself (a container of a proxy's image, or an injection annotation whose
// native-or-classic the pod and the stated releases decide without the
// Namespace). What it cannot judge so, it admits: check sees more.

package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/proxies"
)

// maxWords is how many words of a command line, and containers of a pod,
// the policy reads by position: CEL in Kubernetes 1.30 has no ranges, so
// the positions are a list. A flag past it is not judged.
const maxWords = 64

// flagSyntax is proxy-await's flags as regular expressions of words.
type flagSyntax struct {
	boolLong, valueLong   []string
	boolShort, valueShort string
}

func syntax() flagSyntax {
	var s flagSyntax
	for _, f := range config.Flags() {
		if f.Bool {
			s.boolLong = append(s.boolLong, regexp.QuoteMeta(f.Name))
			s.boolShort += f.Shorthand
		} else {
			s.valueLong = append(s.valueLong, regexp.QuoteMeta(f.Name))
			s.valueShort += f.Shorthand
		}
	}
	return s
}

// q is a CEL string literal.
func q(s string) string { return strconv.Quote(s) }

// list is a CEL list of string literals.
func list(items []string) string {
	var out []string
	for _, s := range items {
		out = append(out, q(s))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// The words of a command line, written for a container expression c.
func argv(c string) string {
	return fmt.Sprintf("((has(%[1]s.command) ? %[1]s.command : []) + (has(%[1]s.args) ? %[1]s.args : []))", c)
}

// writer writes the expressions, with what they share.
type writer struct {
	s        flagSyntax
	versions map[string]proxies.Version
	native   map[string]bool // the settings of whole meshes that turn native sidecars on or off, by preset
	defaults *config.Config  // proxy-await's settings where a command line gives none
}

// flagWord: w is one of proxy-await's flags as a word of its own.
func (x *writer) flagWord(w string) string {
	s := x.s
	long := fmt.Sprintf(`%s.matches('^--(%s)(=(%s))?$') || %s.matches('^--(%s)(=.+)?$')`,
		w, strings.Join(s.boolLong, "|"), strings.Join(append(slices.Clone(trueWords), falseWords...), "|"), w, strings.Join(s.valueLong, "|"))
	short := fmt.Sprintf(`%s.matches('^-([%s]+|[%s]*[%s].*)$')`, w, s.boolShort, s.boolShort, s.valueShort)
	return "(" + long + " || " + short + ")"
}

// bareValueFlag: w is a flag that takes the next word as its value.
func (x *writer) bareValueFlag(w string) string {
	s := x.s
	return fmt.Sprintf(`(%s.matches('^--(%s)$') || %s.matches('^-[%s]*[%s]$'))`,
		w, strings.Join(s.valueLong, "|"), w, s.boolShort, s.valueShort)
}

// Per container, in the variables: its words (argvs), where its "--" is
// (dds: the positions of "--", the first of which counts), the positions
// of its flags (pos: those before it), and whether it runs proxy-await
// plainly: the words before "--" are its flags and their values, nothing
// the object does not hold stands in for them, and no mode (--install)
// makes it something else than a run.
func (x *writer) plain(k, words, dds, pos, cs string) string {
	w := fmt.Sprintf("%s[%s]", words, k)
	d := fmt.Sprintf("%s[%s][0]", dds, k)
	p := fmt.Sprintf("%s[%s]", pos, k)
	c := fmt.Sprintf("%s[%s]", cs, k)
	isPA := fmt.Sprintf("(size(%[1]s) > 0 && (%[1]s[0] == 'proxy-await' || %[1]s[0].endsWith('/proxy-await')))", w)
	flags := fmt.Sprintf("%[2]s.all(i, (i > 1 && %[3]s) ? !%[1]s[i].startsWith('-') && %[1]s[i] != '' : %[4]s)",
		w, p, x.bareValueFlag(w+"[i-1]"), x.flagWord(w+"[i]"))
	last := fmt.Sprintf("!(%[2]s > 1 && %[3]s)", w, d, x.bareValueFlag(w+"["+d+"-1]"))
	modes := fmt.Sprintf(`!%[2]s.exists(i, %[1]s[i].matches('^--(check|inject|policy|install|help|version|image|container|versions)(=.*)?$') || %[1]s[i].matches('^-[^-]*[hV]'))`, w, p)
	env := fmt.Sprintf(`!has(%[1]s.envFrom) && (!has(%[1]s.env) || !%[1]s.env.exists(e, e.name.startsWith('PROXY_AWAIT_') || e.name in %[2]s))`, c, list(config.DisableVars()))
	noVars := fmt.Sprintf(`!%s.exists(v, v.contains('$('))`, w)
	return fmt.Sprintf("(%s && size(%s[%s]) > 0 && %s < %d && %s && %s && %s && %s && %s)",
		isPA, dds, k, d, maxWords, flags, last, modes, env, noVars)
}

// sets is the condition that the word at i sets the flag name (or its
// shorthand).
func (x *writer) sets(w, name, short string) string {
	cond := fmt.Sprintf("(%[1]s[i] == '--%[2]s' || %[1]s[i].startsWith('--%[2]s='))", w, name)
	if short != "" {
		cond = fmt.Sprintf("(%s || %s[i].matches('^-[%s]*%s'))", cond, w, x.s.boolShort, short)
	}
	return cond
}

// lastSet is the positions of pos (the flags' positions) at which the
// flag is set.
func (x *writer) lastSet(w, pos, name, short string) string {
	return fmt.Sprintf("%s.filter(i, %s)", pos, x.sets(w, name, short))
}

// durationPattern is a duration the policy reads: seconds, or Go's
// syntax. Days (2d) are not read: a flag that gives them is not judged.
const durationPattern = `^([0-9]{1,9}|([0-9]{1,9}(\\.[0-9]{1,9})?(h|m|s|ms|us|ns))+)$`

// repository is an image's repository: without its digest and tag.
func repository(img string) string {
	r := fmt.Sprintf("%s.split('@')[0]", img)
	return fmt.Sprintf("(%[1]s.lastIndexOf(':') > %[1]s.lastIndexOf('/') ? %[1]s.substring(0, %[1]s.lastIndexOf(':')) : %[1]s)", r)
}

// isProxy: the container c is px's, by its image or its injector's name
// for it (a retired image is its too). Of the init containers, only a
// native sidecar is read so (variables.running): any other runs to its
// end before the application starts, and is no sidecar whatever its image
// (the init container an injector adds to set up the pod's network, Envoy
// validating a configuration).
func isProxy(c string, px *proxies.Proxy) string {
	var conds []string
	repo := repository(c + ".image")
	for _, r := range px.Retired {
		conds = append(conds, fmt.Sprintf("%s.endsWith(%s)", repo, q(r.Image)))
	}
	for _, img := range px.Images {
		conds = append(conds, fmt.Sprintf("%s.endsWith(%s)", repo, q(img)))
	}
	for _, n := range px.Containers {
		conds = append(conds, fmt.Sprintf("%s.name == %s", c, q(n)))
	}
	return fmt.Sprintf("(has(%s.image) && (%s))", c, strings.Join(conds, " || "))
}

// runsPA: the container c has proxy-await as its first word.
func runsPA(c string) string {
	w := argv(c)
	return fmt.Sprintf("(size(%[1]s) > 0 && (%[1]s[0] == 'proxy-await' || %[1]s[0].endsWith('/proxy-await')))", w)
}

// shown: the pod shows px's sidecar as a container; classicShown: one that
// is not native.
func shown(px *proxies.Proxy) string {
	return fmt.Sprintf("variables.running.exists(c, %s && !%s)", isProxy("c", px), runsPA("c"))
}

// nativeShown: the pod shows px's sidecar as a native sidecar container.
func nativeShown(px *proxies.Proxy) string {
	return fmt.Sprintf("variables.inits.exists(c, %s && !%s && has(c.restartPolicy) && c.restartPolicy == 'Always')", isProxy("c", px), runsPA("c"))
}

func classicShown(px *proxies.Proxy) string {
	return fmt.Sprintf("variables.containers.exists(c, %s && !%s)", isProxy("c", px), runsPA("c"))
}

// podKeyIn is the condition that the pod's label key, else its annotation
// key, is one of values.
func podKeyIn(key string, values []string) string {
	return fmt.Sprintf("(%[1]s in variables.labels ? variables.labels[%[1]s] in %[2]s : (%[1]s in variables.annotations && variables.annotations[%[1]s] in %[2]s))",
		q(key), list(values))
}

// injectIn is the condition that the switch of px's injector is one of
// values, where and as that injector reads it: the annotation, or the
// label first; trimmed and in lower case for one that folds it.
func injectIn(px *proxies.Proxy, values []string) string {
	in := px.Inject
	in1 := func(m string) string {
		v := fmt.Sprintf("%s[%s]", m, q(in.Key))
		if in.Fold {
			v += ".trim().lowerAscii()"
		}
		return fmt.Sprintf("(%s in %s && %s in %s)", q(in.Key), m, v, list(values))
	}
	if in.Labels {
		return fmt.Sprintf("(%s in variables.labels ? %s : %s)", q(in.Key), in1("variables.labels"), in1("variables.annotations"))
	}
	return in1("variables.annotations")
}

// annotationReads is the condition that the pod's annotation key is one of
// values, as b reads it.
func annotationReads(key string, b proxies.Boolean, values []string) string {
	v := fmt.Sprintf("variables.annotations[%s]", q(key))
	if b.Fold {
		v += ".trim().lowerAscii()"
	}
	return fmt.Sprintf("(%s in variables.annotations && %s in %s)", q(key), v, list(values))
}

// trueWords and falseWords are what Go's strconv.ParseBool takes, as
// proxy-await's boolean flags do (--shutdown=False).
var trueWords, falseWords = proxies.GoBool.True, proxies.GoBool.False

// injectedClassic is the condition that the pod's own annotation injects
// px's sidecar and that it is not native, as the pod and the stated
// releases decide without its Namespace; "" when the object alone never
// decides (an injector that reads what decides from the Namespace too).
func (x *writer) injectedClassic(px *proxies.Proxy) string {
	if px.Inject.Key == "" {
		return ""
	}
	for _, k := range px.Native.Keys {
		if px.ReadsFromNamespace(k.Key) || len(k.Reads) > 0 {
			return "" // the Namespace, or which release reads which spelling, decides
		}
	}
	on := injectIn(px, px.Inject.On)
	// An annotation every release reads decides: the first that the
	// injector reads as true or false.
	var native []string
	for _, k := range px.Native.Keys {
		b := px.Native.Reads
		has := annotationReads(k.Key, b, append(slices.Clone(b.True), b.False...))
		if b.Else {
			has = fmt.Sprintf("(%s in variables.annotations)", q(k.Key))
		}
		isTrue := annotationReads(k.Key, b, b.True)
		native = append(native, fmt.Sprintf("(%s ? %s : ", has, isTrue))
	}
	byDefault := "true" // classic by default, or depends: not native
	if on, ok := x.native[px.Preset]; ok {
		byDefault = map[bool]string{true: "false", false: "true"}[on] // the whole mesh's setting
	} else if n := px.Native; n.Since != (proxies.Version{}) {
		rel, stated := x.versions[px.Preset]
		kube, kubeStated := x.versions[proxies.Kubernetes]
		if stated && rel.AtLeast(n.Since) && (n.KubeSince == (proxies.Version{}) || kubeStated && kube.AtLeast(n.KubeSince)) {
			byDefault = "false" // native by default in the stated releases
		}
	}
	cond := "!" + strings.Join(native, "") + "!" + byDefault + strings.Repeat(")", len(native))
	if len(native) == 0 {
		cond = byDefault
	}
	return fmt.Sprintf("(!%s && %s && %s)", shown(px), on, cond)
}

// notNative is the condition that the pod certainly has px's sidecar and
// that it is not native, from the object alone.
func (x *writer) notNative(px *proxies.Proxy) string {
	conds := []string{classicShown(px)}
	if inj := x.injectedClassic(px); inj != "" {
		conds = append(conds, inj)
	}
	return "(" + strings.Join(conds, " || ") + ")"
}
