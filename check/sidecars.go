// sidecars.go: which proxies a pod runs beside its containers, whether each
// is a native sidecar, where it answers, and how long it keeps taking
// connections once the pod is deleted; from the facts tables, the pod's
// annotations and labels, its namespace when the input has it, the
// sidecar's own command line and variables, and the cluster's releases as
// --versions states them.

package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
)

// nativeness is whether a sidecar is native; depends when the manifest
// leaves it to the release of the proxy or of Kubernetes, which --versions
// did not state.
type nativeness int

const (
	classic nativeness = iota
	native
	depends
)

// sidecar is a proxy a pod runs.
type sidecar struct {
	*proxy
	from        string // how it was recognised, for messages
	native      nativeness
	nativeWhy   string // what makes it native
	classicWhen string // when it depends: the releases with which it is classic, and why
	flip        string // when it depends: the --versions that would settle it
	ignored     string // a spelling that the stated release does not read, for messages
	container   *container
	ready       endpoint
	shutdown    endpoint
	stop        time.Duration // how long it takes new connections once the pod is deleted
	stopWhy     string        // what sets stop, for messages; "" when not known
	stopFix     string        // what to raise to lengthen it
	stopBesides time.Duration // the part of stop that stopFix does not set: a preStop, Dapr's block
	stopInt     bool          // stopFix takes whole seconds, not a duration
	stopLine    int           // the line of the pod's setting that sets stop, 0 if none
	stopUnknown *unknownValue // a setting of stop that the input does not hold
}

// stopValue is what stopFix must be for s to stop after hold, as stopFix
// takes it.
func (s *sidecar) stopValue(hold time.Duration) string {
	d := hold - s.stopBesides
	if s.stopInt {
		return strconv.Itoa(int((d + time.Second - 1) / time.Second))
	}
	return dur(d)
}

// whenClassic qualifies a finding about a classic sidecar whose nativeness
// depends on releases --versions did not state, or that is classic because
// the stated release does not read the pod's spelling.
func (s *sidecar) whenClassic() string {
	switch {
	case s.native == depends:
		return fmt.Sprintf(" (%s: state the releases with --versions %s)", s.classicWhen, s.flip)
	case s.native == classic && s.ignored != "":
		return " (" + s.ignored + ")"
	}
	return ""
}

// endpoint is where a sidecar answers: port 0 is any (not in the manifest);
// off says why it does not answer there, "" when it does.
type endpoint struct {
	port    int
	path    string
	off     string
	offLine int           // the line of the pod's annotation that turns it off, 0 if none
	moved   string        // what moved its port, for messages
	unknown *unknownValue // a setting that decides it is not in the input
}

// absence is a proxy the pod is known not to have, and why.
type absence struct {
	proxy *proxy
	why   string
}

// mesh is what a pod runs beside its containers.
type mesh struct {
	sidecars []*sidecar
	absent   []absence
}

// meshOf finds the sidecars of p. runsProxyAwait tells the containers that
// run proxy-await, which are not sidecars whatever their image.
func meshOf(p *pod, versions map[string]config.Version, runsProxyAwait func(*container) bool) mesh {
	var m mesh
	for _, c := range p.containers {
		if runsProxyAwait(c) {
			continue
		}
		if px := proxyOfContainer(c); px != nil {
			s := &sidecar{proxy: px, from: "container " + c.name, container: c}
			if c.init && c.restartAlways {
				s.native, s.nativeWhy = native, "an init container with restartPolicy: Always"
			}
			m.sidecars = append(m.sidecars, s)
		}
	}
	for _, px := range []*proxy{&linkerd, &istio, &dapr, &consul} {
		if slices.ContainsFunc(m.sidecars, func(s *sidecar) bool { return s.proxy == px }) {
			continue
		}
		from, why := injected(p, px)
		switch {
		case from != "":
			s := &sidecar{proxy: px, from: from}
			nativeOf(p, s, versions)
			m.sidecars = append(m.sidecars, s)
		case why != "":
			m.absent = append(m.absent, absence{px, why})
		}
	}
	// In the order of the facts' table, which suggestions follow.
	var ordered []*sidecar
	for _, px := range proxies {
		for _, s := range m.sidecars {
			if s.proxy == px {
				ordered = append(ordered, s)
			}
		}
	}
	m.sidecars = ordered
	for _, s := range m.sidecars {
		endpoints(p, s, versions)
		stopTime(p, s)
	}
	return m
}

// proxyOfContainer is the proxy a container of the manifest is, by its
// image or its injector's name for it.
func proxyOfContainer(c *container) *proxy {
	repo := repository(c.image)
	if strings.HasSuffix(repo, cloudsqlV1) {
		return &cloudsql
	}
	for _, px := range proxies {
		for _, img := range px.images {
			if strings.HasSuffix(repo, img) {
				return px
			}
		}
		if slices.Contains(px.containers, c.name) {
			return px
		}
	}
	return nil
}

// setting is an annotation of the pod that a proxy reads, or, for
// Linkerd's config.* annotations, of the pod's Namespace, which Linkerd's
// injector reads too: its value, how messages name where it is
// (`KEY: "V"`, or `namespace NS has KEY: "V"`), and its line when that is
// in the pod's file.
func (p *pod) setting(key string) (scalar, string, bool) {
	if v, ok := p.annotations.get(key); ok {
		return v, fmt.Sprintf("%s: %q", key, v.s), true
	}
	if p.ns != nil && linkerdConfig(key) {
		if v, ok := p.ns.annotations.get(key); ok {
			if p.ns.file != p.file {
				v.line = 0
			}
			return v, fmt.Sprintf("namespace %s has %s: %q", p.ns.name, key, v.s), true
		}
	}
	return scalar{}, "", false
}

// linkerdConfig says whether an annotation is one of Linkerd's config.*,
// which its injector also reads from the pod's Namespace
// (pkg/inject/inject.go, namespace annotations as the pod's defaults).
func linkerdConfig(key string) bool {
	for _, prefix := range []string{"config.linkerd.io/", "config.alpha.linkerd.io/", "config.beta.linkerd.io/"} {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// onPod is where a pod's own setting is, for messages.
func onPod(where string) string {
	if strings.HasPrefix(where, "namespace ") {
		return where
	}
	return "the pod has " + where
}

// injected says whether px's injector adds its sidecar to p, and from what
// ("linkerd.io/inject: enabled"); or, if the pod is known to have none,
// why.
func injected(p *pod, px *proxy) (from, why string) {
	if v, ok := p.label(px.inject); ok {
		switch {
		case slices.Contains(px.injectOn, v.s):
			return fmt.Sprintf("%s: %q", px.inject, v.s), ""
		case slices.Contains(px.injectOff, v.s):
			return "", fmt.Sprintf("%s: %q", px.inject, v.s)
		}
	}
	if px == &istio {
		if v, ok := p.label(istioAmbient); ok && v.s == "ambient" {
			return "", fmt.Sprintf("%s: ambient, Istio's mode without sidecars", istioAmbient)
		}
		if p.ns == nil {
			return "", ""
		}
		if v, ok := p.ns.meta(istioAmbient); ok && v.s == "ambient" {
			return "", fmt.Sprintf("namespace %s has %s: ambient, Istio's mode without sidecars", p.ns.name, istioAmbient)
		}
		switch v, ok := p.ns.meta(istioNamespaceInject); {
		case ok && v.s == "enabled":
			return fmt.Sprintf("namespace %s has %s: enabled", p.ns.name, istioNamespaceInject), ""
		case ok && v.s == "disabled":
			return "", fmt.Sprintf("namespace %s has %s: disabled", p.ns.name, istioNamespaceInject)
		}
		if _, ok := p.ns.meta(istioRevision); ok {
			return fmt.Sprintf("namespace %s has %s", p.ns.name, istioRevision), ""
		}
		return "", ""
	}
	if px.podOnly {
		why := fmt.Sprintf("no %s: %q on the pod, which its injector needs", px.inject, px.injectOn[0])
		if near := p.nearMiss(px.inject); near != "" {
			why += fmt.Sprintf("; the pod has %s, which is not it", near)
		}
		return "", why
	}
	if p.ns != nil {
		if v, ok := p.ns.meta(px.inject); ok && slices.Contains(px.injectOn, v.s) {
			return fmt.Sprintf("namespace %s has %s: %s", p.ns.name, px.inject, v.s), ""
		}
	}
	return "", ""
}

// nativeOf decides whether s, injected into p, is native: the annotations
// that the release reads decide, else the proxy's default in the releases
// stated. Without the proxy's release, it is native or classic if every
// release agrees, and depends otherwise.
func nativeOf(p *pod, s *sidecar, versions map[string]config.Version) {
	px := s.proxy
	rel, stated := versions[px.preset]
	// Annotations that every release reads decide alone.
	if b, why, ok := annotated(p, px, config.Version{}, true); ok {
		s.decided(b, why)
		return
	}
	// The stated release reads the spellings of its own: one that it reads
	// decides; one that it does not is worth a word in messages.
	if stated && slices.ContainsFunc(px.nativeKeys, func(k nativeKey) bool { return len(k.reads) > 0 }) {
		if b, why, ok := annotated(p, px, rel, false); ok {
			s.decided(b, why)
			return
		}
		s.ignored = unread(p, px, rel)
	}
	// Without the release, a spelling that some releases read decides if
	// every release agrees.
	if !stated && slices.ContainsFunc(px.nativeKeys, func(k nativeKey) bool { _, _, ok := p.setting(k.key); return len(k.reads) > 0 && ok }) {
		releasesDecide(p, s)
		return
	}
	nativeByDefault(s, versions)
}

// annotated is what the annotations of p that release r reads say about
// px's sidecar (the first that holds a boolean, the most binding first),
// and where; or, with every, what those that every release reads say.
func annotated(p *pod, px *proxy, r config.Version, every bool) (bool, string, bool) {
	for _, k := range px.nativeKeys {
		v, where, ok := p.setting(k.key)
		if !ok || !every && !k.readBy(r) || every && len(k.reads) > 0 {
			continue
		}
		if b, err := strconv.ParseBool(v.s); err == nil {
			return b, where, true
		}
	}
	return false, "", false
}

// decided makes s native when an annotation or default says so, with why;
// classic, the zero value, stays as it is.
func (s *sidecar) decided(b bool, why string) {
	if b {
		s.native, s.nativeWhy = native, why
	}
}

// nativeByDefault decides s, which no annotation settles, by its proxy's
// default: native from nativeSince (on Kubernetes nativeKubeSince or later
// when the facts name one), classic before; it depends when --versions
// does not state a release that decides.
func nativeByDefault(s *sidecar, versions map[string]config.Version) {
	px := s.proxy
	if px.nativeSince == (config.Version{}) {
		return // classic by default in every release
	}
	why := "the default from " + nativeDefault(px)
	switch rel, stated := versions[px.preset]; {
	case !stated:
		flip := fmt.Sprintf("%s=%s", px.preset, px.nativeSince)
		if px.nativeKubeSince != (config.Version{}) {
			flip += ",kubernetes=" + px.nativeKubeSince.String()
		}
		s.dependsOnDefault(flip)
		return
	case !rel.AtLeast(px.nativeSince):
		return
	case px.nativeKubeSince == (config.Version{}):
		s.decided(true, why)
		return
	}
	switch k, ok := versions["kubernetes"]; {
	case !ok:
		s.dependsOnDefault("kubernetes=" + px.nativeKubeSince.String())
	case k.AtLeast(px.nativeKubeSince):
		s.decided(true, why)
	}
}

// nativeDefault names the release from which px's sidecar is native by
// default: "Istio 1.27 on Kubernetes 1.33".
func nativeDefault(px *proxy) string {
	release := fmt.Sprintf("%s %s", px.name, px.nativeSince)
	if px.nativeKubeSince != (config.Version{}) {
		release += " on Kubernetes " + px.nativeKubeSince.String()
	}
	return release
}

// dependsOnDefault says that s is classic before the release from which it
// is native by default, which --versions flip would settle.
func (s *sidecar) dependsOnDefault(flip string) {
	release := nativeDefault(s.proxy)
	s.native, s.flip = depends, flip
	s.classicWhen = fmt.Sprintf("with a release before %s; from %s the sidecar is native by default", release, release)
}

// unread says which of the pod's spellings release rel does not read, and
// which it reads instead.
func unread(p *pod, px *proxy, rel config.Version) string {
	var present, reads []string
	for _, k := range px.nativeKeys {
		if v, _, ok := p.setting(k.key); ok && !k.readBy(rel) {
			if b, err := strconv.ParseBool(v.s); err == nil && b {
				present = append(present, k.key) // it would make the sidecar native
			}
		}
		if k.readBy(rel) {
			reads = append(reads, k.key)
		}
	}
	if len(present) == 0 {
		return ""
	}
	if len(reads) == 0 {
		return fmt.Sprintf("%s %s has no native sidecars: it reads no %s", px.name, rel, strings.Join(present, " or "))
	}
	return fmt.Sprintf("%s %s does not read %s: it reads %s", px.name, rel, strings.Join(present, " or "), strings.Join(reads, " or "))
}

// releasesDecide settles a sidecar whose annotations some releases read
// and others do not: it is native or classic if every release agrees, and
// depends otherwise, classic with the releases it names.
func releasesDecide(p *pod, s *sidecar) {
	px := s.proxy
	v := verdictsAt(p, px, releaseBounds(px))
	switch {
	case !slices.Contains(v.native, false):
		s.native, s.nativeWhy = native, v.why
		return
	case !slices.Contains(v.native, true):
		return
	}
	s.native, s.flip = depends, fmt.Sprintf("%s=%s", px.preset, v.lastNative())
	s.classicWhen = "classic with " + v.classicWith(strings.Join(nativeKeysOn(p, px), " or "))
}

// releaseBounds are the releases at which whether px's sidecar is native
// can change, in order, each once: the first that is native by default,
// and where each spelling starts or stops being read. Releases before the
// first that reads any spelling are not among them: a pod that asks for a
// native sidecar is not meant for a release without them.
func releaseBounds(px *proxy) []config.Version {
	var bounds []config.Version
	add := func(r config.Version) {
		i := 0
		for i < len(bounds) && r.AtLeast(bounds[i]) {
			i++
		}
		if r != (config.Version{}) && !slices.Contains(bounds, r) {
			bounds = append(bounds, r)
			copy(bounds[i+1:], bounds[i:])
			bounds[i] = r
		}
	}
	add(px.nativeSince)
	for _, k := range px.nativeKeys {
		for _, sp := range k.reads {
			add(sp.from)
			add(sp.to)
		}
	}
	return bounds
}

// verdicts is whether a sidecar is native with each of the releases at
// which the answer can change, and what makes it native, for messages.
type verdicts struct {
	px     *proxy
	at     []config.Version // in order
	native []bool           // native[i] is the answer from at[i] up to at[i+1]
	why    string
	// refused[i] is the annotation that at[i] reads and that asks for a
	// classic sidecar; "" where it reads none of the pod's.
	refused []string
}

// verdictsAt decides px's sidecar in p with each release of at: the
// annotations that the release reads decide, else the proxy's default in
// it. The why is the last annotation that makes it native, else the
// default.
func verdictsAt(p *pod, px *proxy, at []config.Version) verdicts {
	v := verdicts{px: px, at: at, native: make([]bool, len(at)), refused: make([]string, len(at))}
	for i, r := range at {
		if b, w, ok := annotated(p, px, r, false); ok {
			v.native[i] = b
			if b {
				v.why = w
			} else {
				v.refused[i] = w
			}
		} else {
			v.native[i] = r.AtLeast(px.nativeSince)
			if v.native[i] && v.why == "" {
				v.why = "the default from " + px.name + " " + px.nativeSince.String()
			}
		}
	}
	return v
}

// classicWith names each run of releases with which the sidecar is
// classic, as classicRun words it, and why: the injector of those releases
// reads none of the pod's annotations (unread names them), or reads one
// that asks for a classic sidecar. Runs next to each other for the same
// reason are named together, before it.
func (v verdicts) classicWith(unread string) string {
	type group struct {
		runs []string
		why  string
	}
	var groups []group
	for i := 0; i < len(v.at); i++ {
		if v.native[i] {
			continue
		}
		j := i
		for j+1 < len(v.at) && !v.native[j+1] && v.refused[j+1] == v.refused[i] {
			j++
		}
		why := "whose injector does not read " + unread
		if key, value, ok := strings.Cut(v.refused[i], ": "); ok {
			why = "whose injector reads " + key + " and its " + value
		}
		if n := len(groups); n > 0 && groups[n-1].why == why {
			groups[n-1].runs = append(groups[n-1].runs, v.classicRun(i, j))
		} else {
			groups = append(groups, group{[]string{v.classicRun(i, j)}, why})
		}
		i = j
	}
	var out []string
	for _, g := range groups {
		out = append(out, strings.Join(g.runs, " or with ")+", "+g.why)
	}
	return strings.Join(out, ", or with ")
}

// classicRun names the classic releases from at[i] up to at[j+1] (every
// later one when at[j] is the last): "a release before Linkerd 2.20" when
// the run is the first, "Linkerd 2.19" for one minor release, "Linkerd
// 2.19 to 2.21", "Linkerd 2.22 or later".
func (v verdicts) classicRun(i, j int) string {
	px, at := v.px, v.at
	switch {
	case i == 0 && j+1 < len(at):
		return fmt.Sprintf("a release before %s %s", px.name, at[j+1])
	case j+1 == len(at):
		return fmt.Sprintf("%s %s or later", px.name, at[i])
	case at[j+1] == config.Version{Major: at[i].Major, Minor: at[i].Minor + 1}:
		return fmt.Sprintf("%s %s", px.name, at[i])
	}
	return fmt.Sprintf("%s %s to %d.%d", px.name, at[i], at[j+1].Major, at[j+1].Minor-1)
}

// lastNative is the last release at which the sidecar turns native: the
// --versions that settles it as native. There is one when it depends.
func (v verdicts) lastNative() config.Version {
	last := len(v.at) - 1
	for !v.native[last] {
		last--
	}
	return v.at[last]
}

// nativeKeysOn are the spellings of px's native annotations that p has,
// which the releases that classicWith names do not read.
func nativeKeysOn(p *pod, px *proxy) []string {
	var present []string
	for _, k := range px.nativeKeys {
		if _, _, ok := p.setting(k.key); ok {
			present = append(present, k.key)
		}
	}
	return present
}

// endpoints fills in where s answers, as the pod's annotations or the
// sidecar's own settings move it.
func endpoints(p *pod, s *sidecar, versions map[string]config.Version) {
	s.ready = endpoint{port: s.readyPort, path: s.readyPath}
	s.shutdown = endpoint{port: s.shutdownPort, path: s.shutdownPath}
	if s.adminPortKey != "" {
		if n, where, ok := portSetting(p, s.adminPortKey); ok {
			s.ready.port, s.shutdown.port = n, n
			s.ready.moved, s.shutdown.moved = " ("+where+")", " ("+where+")"
		}
	}
	if s.shutdownPorts != "" {
		if n, where, ok := portSetting(p, s.shutdownPorts); ok {
			s.shutdown.port, s.shutdown.moved = n, " ("+where+")"
		}
	}
	switch s.proxy {
	case &linkerd:
		v, where, set := p.setting(s.shutdownKey)
		switch {
		case set && v.s == s.shutdownOn:
		case set:
			s.shutdown.off, s.shutdown.offLine = onPod(where), v.line
		case versions["linkerd"] != (config.Version{}) && !versions["linkerd"].AtLeast(s.shutdownOffSince):
		default:
			s.shutdown.off = fmt.Sprintf("Linkerd answers it with 404 unless the pod has %s: %s (off by default since Linkerd %s)",
				s.shutdownKey, s.shutdownOn, s.shutdownOffSince)
		}
	case &consul:
		if v := p.annotations.at(consulShutdownPathKey); v.s != "" {
			s.shutdown.path = v.s
		}
		if v, ok := p.annotations.get(s.shutdownKey); ok {
			if b, err := strconv.ParseBool(v.s); err == nil && !b {
				s.shutdown.off = fmt.Sprintf("the pod has %s: %q, which turns consul-dataplane's lifecycle endpoints off", s.shutdownKey, v.s)
				s.shutdown.offLine = v.line
			}
		}
	case &cloudsql:
		cloudsqlEndpoints(s)
	}
}

func portSetting(p *pod, key string) (int, string, bool) {
	v, where, ok := p.setting(key)
	n, err := strconv.Atoi(v.s)
	return n, where, ok && err == nil && n > 0 && n < 65536
}

// cloudSetting is one of the Cloud SQL Auth Proxy's settings.
type cloudSetting struct {
	text    string
	set     bool
	where   string        // how messages name it: --http-port=9190, CSQL_PROXY_HTTP_PORT: "9190"
	unknown *unknownValue // when the input does not hold it
}

// cloudsqlSetting reads a setting of the Cloud SQL Auth Proxy as it does
// (cmd/root.go): its flag in command or args (--name=V, --name V, a
// boolean's --name alone), else its CSQL_PROXY_ variable, else its
// --config-file, which the input does not show.
func cloudsqlSetting(c *container, name string, boolean bool) cloudSetting {
	var out cloudSetting
	words := append(c.words(c.command), c.words(c.args)...)
	for i, w := range words {
		switch {
		case !w.known && strings.HasPrefix(w.text, "--"+name):
			out = cloudSetting{unknown: &unknownValue{what: c.name + "'s --" + name, from: w.from, line: w.line}}
		case !w.known:
		case strings.HasPrefix(w.text, "--"+name+"="):
			out = cloudSetting{text: w.text[len(name)+3:], set: true, where: w.text}
		case w.text == "--"+name && boolean:
			out = cloudSetting{text: "true", set: true, where: w.text}
		case w.text == "--"+name && i+1 < len(words):
			next := words[i+1]
			out = cloudSetting{text: next.text, set: true, where: w.text + " " + next.text}
			if !next.known {
				out = cloudSetting{unknown: &unknownValue{what: c.name + "'s --" + name, from: next.from, line: next.line}}
			}
		}
	}
	if out.set || out.unknown != nil {
		return out
	}
	env := cloudsqlEnv + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	switch v, set := c.vars.get(env); {
	case !v.known:
		return cloudSetting{unknown: &unknownValue{what: c.name + "'s $" + env, from: v.from, line: c.varLine(env), may: v.may}}
	case set:
		return cloudSetting{text: strings.TrimSpace(v.text), set: true, where: fmt.Sprintf("%s: %q", env, v.text)}
	}
	if name != "config-file" {
		if f := cloudsqlSetting(c, "config-file", false); f.set || f.unknown != nil {
			from := "its configuration file, which the input does not show"
			if f.unknown != nil {
				from = f.unknown.from
			}
			return cloudSetting{unknown: &unknownValue{what: c.name + "'s --" + name, from: from, line: c.line}}
		}
	}
	return out
}

// on is a boolean setting's value.
func (s cloudSetting) on() bool {
	b, err := strconv.ParseBool(s.text)
	return s.set && err == nil && b
}

// varLine is the line of the env entry that sets a variable, else of the
// envFrom that may.
func (c *container) varLine(name string) int {
	if v, ok := c.vars.vars[name]; ok {
		return v.line
	}
	if c.vars.openLine > 0 {
		return c.vars.openLine
	}
	return c.line
}

// cloudsqlEndpoints reads the Cloud SQL Auth Proxy's settings:
// /startup answers only with --health-check, /quitquitquit only with
// --quitquitquit, on --http-port and --admin-port.
func cloudsqlEndpoints(s *sidecar) {
	c := s.container
	if strings.Contains(c.image, cloudsqlV1) {
		s.ready.off = "version 1 of the Cloud SQL proxy (" + cloudsqlV1 + ") has no /startup on 9090 and no /quitquitquit: use v2, gcr.io/cloud-sql-connectors/cloud-sql-proxy, with --health-check --quitquitquit"
		s.shutdown.off = s.ready.off
		return
	}
	for _, e := range []struct {
		ep   *endpoint
		flag string
		port string
	}{{&s.ready, "health-check", "http-port"}, {&s.shutdown, "quitquitquit", "admin-port"}} {
		switch on := cloudsqlSetting(c, e.flag, true); {
		case on.unknown != nil:
			e.ep.unknown = on.unknown
		case !on.on():
			e.ep.off = fmt.Sprintf("the proxy serves %s only when started with --%s (add it to its args)", e.ep.path, e.flag)
		}
		switch port := cloudsqlSetting(c, e.port, false); {
		case port.unknown != nil:
			e.ep.unknown = port.unknown
		case port.set:
			if n, err := strconv.Atoi(port.text); err == nil {
				e.ep.port, e.ep.moved = n, " ("+port.where+")"
			}
		}
	}
}

// stopTime fills in how long s keeps taking new connections after the pod
// is deleted, where the facts say.
func stopTime(p *pod, s *sidecar) {
	switch s.proxy {
	case &linkerd:
		linkerdStop(p, s)
	case &istio:
		istioStop(p, s)
	case &dapr:
		daprStop(p, s)
	case &cloudsql:
		cloudsqlStop(s)
	}
}

// preStop is the preStop of s's container, which the kubelet runs before
// its SIGTERM; 0 for an injected sidecar, whose preStop the manifest does
// not show.
func (s *sidecar) preStop() time.Duration {
	if s.container == nil {
		return 0
	}
	return s.container.preStop
}

// linkerdStop is Linkerd's stop time: its proxy waits before exit only
// through a preStop sleep, so a proxy container the manifest shows stops
// after its own preStop, and an injected one after the sleep the pod's
// annotation asks of the injector, in whole seconds, else its default.
func linkerdStop(p *pod, s *sidecar) {
	if s.container != nil {
		preStop := s.preStop()
		s.stop, s.stopWhy = preStop, fmt.Sprintf("its preStop, %s", preStop)
		s.stopFix = "its preStop sleep"
		return
	}
	v, where, ok := p.setting(s.stopKey)
	n, err := strconv.Atoi(v.s)
	if !ok || err != nil || n < 0 {
		n = int(s.stopDefault / time.Second)
		s.stopWhy = fmt.Sprintf("%s, default %d", s.stopKey, n)
	} else {
		s.stopWhy, s.stopLine = where, v.line
	}
	s.stop, s.stopFix, s.stopInt = time.Duration(n)*time.Second, s.stopKey, true
}

// istioStop is Istio's stop time: its preStop, then the drain its agent
// runs (a classic sidecar's terminationDrainDuration, a native one's
// drainDuration, as istioNativeDrain says), as the pod's ProxyConfig
// annotation sets it, else the field's default.
func istioStop(p *pod, s *sidecar) {
	field, d := "terminationDrainDuration", s.stopDefault
	if s.native == native {
		field, d = "drainDuration", istioNativeDrain
	}
	a := p.annotations.at(s.stopKey)
	if v, ok := istioProxyConfig(a.s, field); ok {
		d = v
		s.stopWhy, s.stopLine = fmt.Sprintf("%s %s in %s", field, v, s.stopKey), a.line
	} else {
		s.stopWhy = fmt.Sprintf("%s in %s, default %s", field, s.stopKey, d)
	}
	s.stop, s.stopFix, s.stopBesides = s.preStop()+d, field+" in "+s.stopKey, s.preStop()
}

// daprStop is Dapr's stop time: its preStop, then daprd's graceful
// period, in whole seconds as the pod's annotation sets it, else its
// default, after the pod's block-shutdown-duration when it has one.
func daprStop(p *pod, s *sidecar) {
	grace := s.stopDefault
	a := p.annotations.at(s.stopKey)
	if n, err := strconv.Atoi(a.s); err == nil && n >= 0 {
		grace = time.Duration(n) * time.Second
		s.stopWhy, s.stopLine = fmt.Sprintf("%s: %q", s.stopKey, a.s), a.line
	} else {
		s.stopWhy = fmt.Sprintf("%s, default %d", s.stopKey, int(grace/time.Second))
	}
	s.stopBesides = s.preStop()
	if b := p.annotations.at(daprBlockShutdown); b.s != "" {
		if d, err := time.ParseDuration(b.s); err == nil && d > 0 {
			s.stopBesides += d
			s.stopWhy += fmt.Sprintf(", after %s: %q", daprBlockShutdown, b.s)
		}
	}
	s.stop, s.stopFix, s.stopInt = s.stopBesides+grace, s.stopKey, true
}

// cloudsqlStop is the Cloud SQL Auth Proxy's stop time: its preStop, then
// its --min-sigterm-delay, which is not judged when its value comes from
// outside the input.
func cloudsqlStop(s *sidecar) {
	// cmd/root.go: --min-sigterm-delay, "the number of seconds to
	// accept new connections after receiving a TERM signal", default 0.
	var delay time.Duration
	switch v := cloudsqlSetting(s.container, "min-sigterm-delay", false); {
	case v.unknown != nil:
		s.stopUnknown = v.unknown
	case v.set:
		delay, _ = time.ParseDuration(v.text)
	}
	preStop := s.preStop()
	s.stop = preStop + delay
	s.stopWhy = fmt.Sprintf("its preStop %s + --min-sigterm-delay %s", preStop, delay)
	s.stopFix, s.stopBesides = "its --min-sigterm-delay", preStop
}

// istioProxyConfig reads one duration field of the proxy.istio.io/config
// annotation, which holds YAML (or JSON) of Istio's ProxyConfig.
func istioProxyConfig(annotation, field string) (time.Duration, bool) {
	if annotation == "" {
		return 0, false
	}
	var n yaml.Node
	if yaml.Unmarshal([]byte(annotation), &n) != nil || len(n.Content) == 0 || checkAliases(&n) != nil {
		return 0, false
	}
	d, err := time.ParseDuration(str(get(n.Content[0], field)))
	return d, err == nil
}
