// Package sidecar is the sidecar model: which proxies a pod runs beside
// its containers, whether each is a native sidecar, where it answers, and
// how long it keeps taking connections once the pod is deleted; from the
// proxy table (package proxies), the pod's annotations and labels, its
// Namespace when the input has it, the sidecar's own command line and
// variables, and the cluster's releases as --versions states them. It
// names no proxy: each fact it applies is a field of the table, applied to
// every proxy alike.
package sidecar

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/proxies"
)

// Nativeness is whether a sidecar is native; depends when the manifest
// leaves it to the release of the proxy or of Kubernetes, which --versions
// did not state.
type Nativeness int

const (
	Classic Nativeness = iota
	Native
	Depends
)

// Sidecar is a proxy a pod runs.
type Sidecar struct {
	*proxies.Proxy
	From        string // how it was recognised, for messages
	Nativeness  Nativeness
	NativeWhy   string // what makes it native
	ClassicWhen string // when it depends: the releases with which it is classic, and why
	Flip        string // when it depends: the --versions that would settle it
	Ignored     string // a spelling that the stated release does not read, for messages
	Container   *manifest.Container
	ReadyAt     Endpoint
	ShutdownAt  Endpoint
	StopAfter   time.Duration     // how long it takes new connections once the pod is deleted
	StopWhy     string            // what sets stop, for messages; "" when not known
	StopFix     string            // what to raise to lengthen it
	StopBesides time.Duration     // the part of stop that stopFix does not set: a preStop, Dapr's block
	StopInt     bool              // stopFix takes whole seconds, not a duration
	StopLine    int               // the line of the pod's setting that sets stop, 0 if none
	StopUnknown *manifest.Unknown // a setting of stop that the input does not hold
}

// StopValue is what stopFix must be for s to stop after hold, as stopFix
// takes it.
func (s *Sidecar) StopValue(hold time.Duration) string {
	d := hold - s.StopBesides
	if s.StopInt {
		return strconv.Itoa(int((d + time.Second - 1) / time.Second))
	}
	return d.String()
}

// WhenClassic qualifies a finding about a classic sidecar whose nativeness
// depends on releases --versions did not state, or that is classic because
// the stated release does not read the pod's spelling.
func (s *Sidecar) WhenClassic() string {
	switch {
	case s.Nativeness == Depends:
		return fmt.Sprintf(" (%s: state the releases with --versions %s)", s.ClassicWhen, s.Flip)
	case s.Nativeness == Classic && s.Ignored != "":
		return " (" + s.Ignored + ")"
	}
	return ""
}

// Endpoint is where a sidecar answers: port 0 is any (not in the manifest);
// off says why it does not answer there, "" when it does.
type Endpoint struct {
	Port    int
	Path    string
	Off     string
	OffLine int               // the line of the pod's annotation that turns it off, 0 if none
	Moved   string            // what moved its port, for messages
	Unknown *manifest.Unknown // a setting that decides it is not in the input
	Fix     *Fix              // what turns it on where it is off, nil when nothing in the pod can
}

// Fix is what turns a sidecar's endpoint on: a pod annotation and its
// value, or a flag of the sidecar container's own command line.
type Fix struct {
	Annotation, Value string
	Flag              string
}

// Absence is a proxy the pod is known not to have, and why.
type Absence struct {
	Proxy *proxies.Proxy
	Why   string
}

// Set is what a pod runs beside its containers.
type Set struct {
	Sidecars []*Sidecar
	Absent   []Absence
}

// Cluster is what --versions states of the cluster: the releases, by name
// (proxies.ReleaseNames), and the settings of whole meshes that turn
// native sidecars on (true) or off (false), by preset (proxies.MeshNames).
type Cluster struct {
	Versions map[string]proxies.Version
	Native   map[string]bool
}

// Find finds the sidecars of p in the cluster c. runsProxyAwait tells the
// containers that run proxy-await, which are not sidecars whatever their
// image.
func Find(p *manifest.Pod, c Cluster, runsProxyAwait func(*manifest.Container) bool) Set {
	versions := c.Versions
	var m Set
	for _, c := range p.Containers {
		if runsProxyAwait(c) {
			continue
		}
		if px := ProxyOf(c); px != nil {
			s := &Sidecar{Proxy: px, From: "container " + c.Name, Container: c}
			if c.Init && c.RestartAlways {
				s.Nativeness, s.NativeWhy = Native, "an init container with restartPolicy: Always"
			}
			m.Sidecars = append(m.Sidecars, s)
		}
	}
	for _, px := range proxies.InPods {
		if px.Inject.Key == "" || slices.ContainsFunc(m.Sidecars, func(s *Sidecar) bool { return s.Proxy == px }) {
			continue
		}
		from, why := injected(p, px)
		switch {
		case from != "":
			s := &Sidecar{Proxy: px, From: from}
			nativeOf(p, s, c)
			m.Sidecars = append(m.Sidecars, s)
		case why != "":
			m.Absent = append(m.Absent, Absence{px, why})
		}
	}
	// In the table's order for pods, which suggestions follow.
	var ordered []*Sidecar
	for _, px := range proxies.InPods {
		for _, s := range m.Sidecars {
			if s.Proxy == px {
				ordered = append(ordered, s)
			}
		}
	}
	m.Sidecars = ordered
	for _, s := range m.Sidecars {
		endpoints(p, s, versions)
		stopTime(p, s)
	}
	return m
}

// ProxyOf is the proxy a container of the manifest is, by its
// image (a retired release's first) or its injector's name for it; nil for
// an init container that is no native sidecar: it runs to its end before
// the next one starts, and the application after all of them, so it runs
// beside nothing, whatever its image (the init container an injector adds
// to set up the pod's network, Envoy validating a configuration).
func ProxyOf(c *manifest.Container) *proxies.Proxy {
	if c.Init && !c.RestartAlways {
		return nil
	}
	return imageOrName(c)
}

// imageOrName is the proxy whose image or container name c has.
func imageOrName(c *manifest.Container) *proxies.Proxy {
	repo := manifest.Repository(c.Image)
	for _, px := range proxies.InPods {
		for _, r := range px.Retired {
			if strings.HasSuffix(repo, r.Image) {
				return px
			}
		}
	}
	for _, px := range proxies.InPods {
		for _, img := range px.Images {
			if strings.HasSuffix(repo, img) {
				return px
			}
		}
		if slices.Contains(px.Containers, c.Name) {
			return px
		}
	}
	return nil
}

// setting is an annotation of the pod that px reads, or, for those that its
// injector reads from the Namespace too (px.NamespaceKeys), of the pod's
// Namespace: its value, how messages name where it is (`KEY: "V"`, or
// `namespace NS has KEY: "V"`), and its line when that is in the pod's
// file.
func setting(p *manifest.Pod, px *proxies.Proxy, key string) (manifest.Scalar, string, bool) {
	if v, ok := p.Annotations.Get(key); ok {
		return v, fmt.Sprintf("%s: %q", key, v.Text), true
	}
	if p.NS != nil && px.ReadsFromNamespace(key) {
		if v, ok := p.NS.Annotations.Get(key); ok {
			if p.NS.File != p.File {
				v.Line = 0
			}
			return v, fmt.Sprintf("namespace %s has %s: %q", p.NS.Name, key, v.Text), true
		}
	}
	return manifest.Scalar{}, "", false
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
func injected(p *manifest.Pod, px *proxies.Proxy) (from, why string) {
	in := px.Inject
	v, set := p.Annotations.Get(in.Key)
	if l, ok := p.Labels.Get(in.Key); in.Labels && ok {
		v, set = l, true // the label wins over the annotation
	}
	if set {
		switch on, off := in.Value(v.Text); {
		case on:
			return fmt.Sprintf("%s: %q", in.Key, v.Text), ""
		case off:
			return "", fmt.Sprintf("%s: %q", in.Key, v.Text)
		case in.PodOnly:
			return "", fmt.Sprintf("%s: %q, which its injector reads as false", in.Key, v.Text)
		}
	}
	mode := in.Sidecarless
	if v, ok := p.Label(mode.Key); mode.Key != "" && ok && v.Text == mode.Value {
		return "", fmt.Sprintf("%s: %s, %s", mode.Key, mode.Value, mode.Why)
	}
	if in.PodOnly {
		why := fmt.Sprintf("no %s: %q on the pod, which its injector needs", in.Key, in.On[0])
		if near := nearMiss(p, in.Key); near != "" {
			why += fmt.Sprintf("; the pod has %s, which is not it", near)
		}
		return "", why
	}
	if p.NS == nil {
		return "", ""
	}
	if v, ok := p.NS.Meta(mode.Key); mode.Key != "" && ok && v.Text == mode.Value {
		return "", fmt.Sprintf("namespace %s has %s: %s, %s", p.NS.Name, mode.Key, mode.Value, mode.Why)
	}
	for _, l := range in.Namespace {
		switch v, ok := p.NS.Meta(l.Key); {
		case ok && l.On == "":
			return fmt.Sprintf("namespace %s has %s", p.NS.Name, l.Key), ""
		case ok && v.Text == l.On:
			return fmt.Sprintf("namespace %s has %s: %s", p.NS.Name, l.Key, v.Text), ""
		case ok && l.Off != "" && v.Text == l.Off:
			return "", fmt.Sprintf("namespace %s has %s: %s", p.NS.Name, l.Key, v.Text)
		}
	}
	v, set = p.NS.Annotations.Get(in.Key)
	if l, ok := p.NS.Labels.Get(in.Key); in.Labels && ok {
		v, set = l, true
	}
	if on, _ := in.Value(v.Text); in.FromNamespace && set && on {
		return fmt.Sprintf("namespace %s has %s: %s", p.NS.Name, in.Key, v.Text), ""
	}
	return "", ""
}

// nativeOf decides whether s, injected into p, is native: the annotations
// that the release reads decide, else the proxy's default in the releases
// stated. Without the proxy's release, it is native or classic if every
// release agrees, and depends otherwise.
func nativeOf(p *manifest.Pod, s *Sidecar, c Cluster) {
	px := s.Proxy
	rel, stated := c.Versions[px.Preset]
	// Annotations that every release reads decide alone.
	if b, why, ok := annotated(p, px, proxies.Version{}, true); ok {
		s.decided(b, why)
		return
	}
	// The stated release reads the spellings of its own: one that it reads
	// decides; one that it does not is worth a word in messages.
	if stated && slices.ContainsFunc(px.Native.Keys, func(k proxies.NativeKey) bool { return len(k.Reads) > 0 }) {
		if b, why, ok := annotated(p, px, rel, false); ok {
			s.decided(b, why)
			return
		}
		s.Ignored = unread(p, px, rel)
	}
	// Without the release, a spelling that some releases read decides if
	// every release agrees.
	if !stated && slices.ContainsFunc(px.Native.Keys, func(k proxies.NativeKey) bool { _, _, ok := setting(p, px, k.Key); return len(k.Reads) > 0 && ok }) {
		releasesDecide(p, s, c)
		return
	}
	// Else the setting of the whole mesh, where --versions states it.
	if on, ok := c.Native[px.Preset]; ok {
		s.decided(on, meshWhy(px, on))
		return
	}
	nativeByDefault(s, c.Versions)
}

// meshWhy is why a sidecar is native, or classic, by the setting of the
// whole mesh that --versions states.
func meshWhy(px *proxies.Proxy, on bool) string {
	setting := map[bool]string{true: "native", false: "classic"}[on]
	return fmt.Sprintf("%s, which --versions %s=%s states, makes it %s for the whole mesh", px.Native.Mesh, px.Preset, setting, setting)
}

// annotated is what the annotations of p that release r reads say about
// px's sidecar (the first that holds a boolean, the most binding first),
// and where; or, with every, what those that every release reads say.
func annotated(p *manifest.Pod, px *proxies.Proxy, r proxies.Version, every bool) (bool, string, bool) {
	for _, k := range px.Native.Keys {
		v, where, ok := setting(p, px, k.Key)
		if !ok || !every && !k.ReadBy(r) || every && len(k.Reads) > 0 {
			continue
		}
		if b, ok := px.Native.Reads.Read(v.Text); ok {
			return b, where, true
		}
	}
	return false, "", false
}

// decided makes s native when an annotation or default says so, with why;
// classic, the zero value, stays as it is.
func (s *Sidecar) decided(b bool, why string) {
	if b {
		s.Nativeness, s.NativeWhy = Native, why
	}
}

// nativeByDefault decides s, which no annotation settles, by its proxy's
// default: native from Native.Since (on Kubernetes Native.KubeSince or
// later when the facts name one), classic before; it depends when
// --versions does not state a release that decides.
func nativeByDefault(s *Sidecar, versions map[string]proxies.Version) {
	px, n := s.Proxy, s.Native
	if n.Since == (proxies.Version{}) {
		return // classic by default in every release
	}
	why := "the default from " + nativeDefault(px)
	switch rel, stated := versions[px.Preset]; {
	case !stated:
		flip := fmt.Sprintf("%s=%s", px.Preset, n.Since)
		if n.KubeSince != (proxies.Version{}) {
			flip += "," + proxies.Kubernetes + "=" + n.KubeSince.String()
		}
		s.dependsOnDefault(flip)
		return
	case !rel.AtLeast(n.Since):
		return
	case n.KubeSince == (proxies.Version{}):
		s.decided(true, why)
		return
	}
	switch k, ok := versions[proxies.Kubernetes]; {
	case !ok:
		s.dependsOnDefault(proxies.Kubernetes + "=" + n.KubeSince.String())
	case k.AtLeast(n.KubeSince):
		s.decided(true, why)
	}
}

// nativeDefault names the release from which px's sidecar is native by
// default: "Istio 1.27 on Kubernetes 1.33".
func nativeDefault(px *proxies.Proxy) string {
	release := fmt.Sprintf("%s %s", px.Name, px.Native.Since)
	if px.Native.KubeSince != (proxies.Version{}) {
		release += " on Kubernetes " + px.Native.KubeSince.String()
	}
	return release
}

// dependsOnDefault says that s is classic before the release from which it
// is native by default, which --versions flip would settle.
func (s *Sidecar) dependsOnDefault(flip string) {
	release := nativeDefault(s.Proxy)
	s.Nativeness, s.Flip = Depends, flip
	s.ClassicWhen = fmt.Sprintf("with a release before %s; from %s the sidecar is native by default", release, release)
}

// unread says which of the pod's spellings release rel does not read, and
// which it reads instead.
func unread(p *manifest.Pod, px *proxies.Proxy, rel proxies.Version) string {
	var present, reads []string
	for _, k := range px.Native.Keys {
		if v, _, ok := setting(p, px, k.Key); ok && !k.ReadBy(rel) {
			if b, _ := px.Native.Reads.Read(v.Text); b {
				present = append(present, k.Key) // it would make the sidecar native
			}
		}
		if k.ReadBy(rel) {
			reads = append(reads, k.Key)
		}
	}
	if len(present) == 0 {
		return ""
	}
	if len(reads) == 0 {
		return fmt.Sprintf("%s %s has no native sidecars: it reads no %s", px.Name, rel, strings.Join(present, " or "))
	}
	return fmt.Sprintf("%s %s does not read %s: it reads %s", px.Name, rel, strings.Join(present, " or "), strings.Join(reads, " or "))
}

// releasesDecide settles a sidecar whose annotations some releases read
// and others do not: it is native or classic if every release agrees, and
// depends otherwise, classic with the releases it names.
func releasesDecide(p *manifest.Pod, s *Sidecar, c Cluster) {
	px := s.Proxy
	v := verdictsAt(p, px, releaseBounds(px), c)
	switch {
	case !slices.Contains(v.native, false):
		s.Nativeness, s.NativeWhy = Native, v.why
		return
	case !slices.Contains(v.native, true):
		return
	}
	s.Nativeness, s.Flip = Depends, fmt.Sprintf("%s=%s", px.Preset, v.lastNative())
	s.ClassicWhen = "classic with " + v.classicWith(strings.Join(NativeKeysOn(p, px), " or "))
}

// releaseBounds are the releases at which whether px's sidecar is native
// can change, in order, each once: the first that is native by default,
// and where each spelling starts or stops being read. Releases before the
// first that reads any spelling are not among them: a pod that asks for a
// native sidecar is not meant for a release without them.
func releaseBounds(px *proxies.Proxy) []proxies.Version {
	var bounds []proxies.Version
	add := func(r proxies.Version) {
		i := 0
		for i < len(bounds) && r.AtLeast(bounds[i]) {
			i++
		}
		if r != (proxies.Version{}) && !slices.Contains(bounds, r) {
			bounds = append(bounds, r)
			copy(bounds[i+1:], bounds[i:])
			bounds[i] = r
		}
	}
	add(px.Native.Since)
	for _, k := range px.Native.Keys {
		for _, sp := range k.Reads {
			add(sp.From)
			add(sp.To)
		}
	}
	return bounds
}

// verdicts is whether a sidecar is native with each of the releases at
// which the answer can change, and what makes it native, for messages.
type verdicts struct {
	px     *proxies.Proxy
	at     []proxies.Version // in order
	native []bool            // native[i] is the answer from at[i] up to at[i+1]
	why    string
	// refused[i] is the annotation that at[i] reads and that asks for a
	// classic sidecar; "" where it reads none of the pod's.
	refused []string
}

// verdictsAt decides px's sidecar in p with each release of at: the
// annotations that the release reads decide, else the proxy's default in
// it. The why is the last annotation that makes it native, else the
// default.
func verdictsAt(p *manifest.Pod, px *proxies.Proxy, at []proxies.Version, c Cluster) verdicts {
	v := verdicts{px: px, at: at, native: make([]bool, len(at)), refused: make([]string, len(at))}
	mesh, meshStated := c.Native[px.Preset]
	for i, r := range at {
		switch b, w, ok := annotated(p, px, r, false); {
		case ok:
			v.native[i] = b
			if b {
				v.why = w
			} else {
				v.refused[i] = w
			}
		case meshStated:
			v.native[i] = mesh
			if mesh && v.why == "" {
				v.why = meshWhy(px, mesh)
			}
		default:
			v.native[i] = r.AtLeast(px.Native.Since)
			if v.native[i] && v.why == "" {
				v.why = "the default from " + px.Name + " " + px.Native.Since.String()
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
		return fmt.Sprintf("a release before %s %s", px.Name, at[j+1])
	case j+1 == len(at):
		return fmt.Sprintf("%s %s or later", px.Name, at[i])
	case at[j+1] == proxies.Version{Major: at[i].Major, Minor: at[i].Minor + 1}:
		return fmt.Sprintf("%s %s", px.Name, at[i])
	}
	return fmt.Sprintf("%s %s to %d.%d", px.Name, at[i], at[j+1].Major, at[j+1].Minor-1)
}

// lastNative is the last release at which the sidecar turns native: the
// --versions that settles it as native. There is one when it depends.
func (v verdicts) lastNative() proxies.Version {
	last := len(v.at) - 1
	for !v.native[last] {
		last--
	}
	return v.at[last]
}

// NativeKeysOn are the spellings of px's native annotations that p has,
// which the releases that classicWith names do not read.
func NativeKeysOn(p *manifest.Pod, px *proxies.Proxy) []string {
	var present []string
	for _, k := range px.Native.Keys {
		if _, _, ok := setting(p, px, k.Key); ok {
			present = append(present, k.Key)
		}
	}
	return present
}

// endpoints fills in where s answers, as the pod's annotations or the
// sidecar's own settings move it or switch it off.
func endpoints(p *manifest.Pod, s *Sidecar, versions map[string]proxies.Version) {
	s.ReadyAt = Endpoint{Port: s.Ready.Port, Path: s.Ready.Path}
	s.ShutdownAt = Endpoint{Port: s.Shutdown.Port, Path: s.Shutdown.Path}
	if s.PortInConfig {
		s.ReadyAt.Port, s.ShutdownAt.Port = 0, 0
	}
	if s.AdminPortKey != "" {
		if n, where, ok := portSetting(p, s.Proxy, s.AdminPortKey); ok {
			s.ReadyAt.Port, s.ShutdownAt.Port = n, n
			s.ReadyAt.Moved, s.ShutdownAt.Moved = " ("+where+")", " ("+where+")"
		}
	}
	if s.ShutdownPortKey != "" {
		if n, where, ok := portSetting(p, s.Proxy, s.ShutdownPortKey); ok {
			s.ShutdownAt.Port, s.ShutdownAt.Moved = n, " ("+where+")"
		}
	}
	if s.ShutdownPathKey != "" {
		if v := p.Annotations.At(s.ShutdownPathKey); v.Text != "" {
			s.ShutdownAt.Path = v.Text
		}
	}
	if s.ShutdownSwitch.Key != "" {
		switchedOff(p, s, versions)
	}
	if s.Container != nil {
		ownEndpoints(s)
	}
}

// switchedOff fills in whether the pod's annotation, or the proxy's default
// in the release --versions states, switches s's shutdown endpoint off.
func switchedOff(p *manifest.Pod, s *Sidecar, versions map[string]proxies.Version) {
	sw := s.ShutdownSwitch
	v, where, set := setting(p, s.Proxy, sw.Key)
	if sw.On == "" { // a boolean, on unless false
		if b, err := strconv.ParseBool(v.Text); set && err == nil && !b {
			s.ShutdownAt.Off = fmt.Sprintf("%s, which turns %s off", onPod(where), sw.Turns)
			s.ShutdownAt.OffLine = v.Line
			s.ShutdownAt.Fix = &Fix{Annotation: sw.Key, Value: "true"}
		}
		return
	}
	defer func() {
		if s.ShutdownAt.Off != "" {
			s.ShutdownAt.Fix = &Fix{Annotation: sw.Key, Value: sw.On}
		}
	}()
	rel := versions[s.Preset] // a zero release is none stated
	switch {
	case set && v.Text == sw.On:
	case set:
		s.ShutdownAt.Off, s.ShutdownAt.OffLine = onPod(where), v.Line
	case sw.OffSince == (proxies.Version{}) || rel != (proxies.Version{}) && !rel.AtLeast(sw.OffSince):
	default:
		s.ShutdownAt.Off = fmt.Sprintf("%s answers it with %d unless the pod has %s: %s (off by default since %s %s)",
			s.Name, s.Off.Status, sw.Key, sw.On, s.Name, sw.OffSince)
	}
}

func portSetting(p *manifest.Pod, px *proxies.Proxy, key string) (int, string, bool) {
	v, where, ok := setting(p, px, key)
	n, err := strconv.Atoi(v.Text)
	return n, where, ok && err == nil && n > 0 && n < 65536
}

// ownSetting is one of a sidecar's settings of its own command line.
type ownSetting struct {
	text    string
	set     bool
	where   string            // how messages name it: --http-port=9190, CSQL_PROXY_HTTP_PORT: "9190"
	unknown *manifest.Unknown // when the input does not hold it
}

// settingOf reads a setting of the sidecar container c as the proxy does
// (how says where besides its flags): its flag in command or args
// (--name=V, --name V, a boolean's --name alone), else its variable, else
// its configuration file, which the input does not show.
func settingOf(c *manifest.Container, how proxies.Settings, name string, boolean bool) ownSetting {
	var out ownSetting
	words := append(c.Words(c.Command), c.Words(c.Args)...)
	for i, w := range words {
		switch {
		case !w.Known && strings.HasPrefix(w.Text, "--"+name):
			out = ownSetting{unknown: &manifest.Unknown{What: c.Name + "'s --" + name, From: w.From, Line: w.Line}}
		case !w.Known:
		case strings.HasPrefix(w.Text, "--"+name+"="):
			out = ownSetting{text: w.Text[len(name)+3:], set: true, where: manifest.Shown(w)}
		case w.Text == "--"+name && boolean:
			out = ownSetting{text: "true", set: true, where: manifest.Shown(w)}
		case w.Text == "--"+name && i+1 < len(words):
			next := words[i+1]
			out = ownSetting{text: next.Text, set: true, where: w.Text + " " + manifest.Shown(next)}
			if !next.Known {
				out = ownSetting{unknown: &manifest.Unknown{What: c.Name + "'s --" + name, From: next.From, Line: next.Line}}
			}
		}
	}
	if out.set || out.unknown != nil || how.EnvPrefix == "" {
		return out
	}
	env := how.EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	switch v, set := c.Vars.Get(env); {
	case !v.Known:
		return ownSetting{unknown: &manifest.Unknown{What: c.Name + "'s $" + env, From: v.From, Line: c.Vars.Line(env, c.Line), May: v.May}}
	case set:
		shown := redact.Word(v.Text)
		if v.Secret {
			shown = redact.Mask
		}
		return ownSetting{text: strings.TrimSpace(v.Text), set: true, where: fmt.Sprintf("%s: %q", env, shown)}
	}
	if how.ConfigFile != "" && name != how.ConfigFile {
		if f := settingOf(c, how, how.ConfigFile, false); f.set || f.unknown != nil {
			from := "its configuration file, which the input does not show"
			if f.unknown != nil {
				from = f.unknown.From
			}
			return ownSetting{unknown: &manifest.Unknown{What: c.Name + "'s --" + name, From: from, Line: c.Line}}
		}
	}
	return out
}

// on is a boolean setting's value.
func (s ownSetting) on() bool {
	b, err := strconv.ParseBool(s.text)
	return s.set && err == nil && b
}

// ownEndpoints reads what a sidecar container's own settings say of its
// endpoints: an image of a retired release serves neither, an endpoint
// with a flag of its own answers only when started with it, on the port
// its port flag gives.
func ownEndpoints(s *Sidecar) {
	c := s.Container
	for _, r := range s.Retired {
		if strings.Contains(c.Image, r.Image) {
			s.ReadyAt.Off, s.ShutdownAt.Off = r.Why, r.Why
			return
		}
	}
	for _, e := range []struct {
		ep  *Endpoint
		own proxies.Endpoint
	}{{&s.ReadyAt, s.Ready}, {&s.ShutdownAt, s.Shutdown}} {
		if e.own.Flag != "" {
			switch on := settingOf(c, s.Settings, e.own.Flag, true); {
			case on.unknown != nil:
				e.ep.Unknown = on.unknown
			case !on.on():
				e.ep.Off = fmt.Sprintf("the proxy serves %s only when started with --%s (add it to its args)", e.ep.Path, e.own.Flag)
				if !on.set {
					e.ep.Fix = &Fix{Flag: "--" + e.own.Flag}
				}
			}
		}
		if e.own.PortFlag != "" {
			switch port := settingOf(c, s.Settings, e.own.PortFlag, false); {
			case port.unknown != nil:
				e.ep.Unknown = port.unknown
			case port.set:
				if n, err := strconv.Atoi(port.text); err == nil {
					e.ep.Port, e.ep.Moved = n, " ("+port.where+")"
				}
			}
		}
	}
}

// stopTime fills in how long s keeps taking new connections after the pod
// is deleted, where the facts say: its preStop, then what its own setting
// adds.
func stopTime(p *manifest.Pod, s *Sidecar) {
	switch st := s.Stop; {
	case st.ByInjector && s.Container != nil:
		// The setting asks the injector for a preStop sleep: a sidecar
		// the manifest shows has its own preStop instead.
		preStop := s.preStop()
		s.StopAfter, s.StopWhy = preStop, fmt.Sprintf("its preStop, %s", preStop)
		s.StopFix = "its preStop sleep"
	case st.Seconds:
		secondsStop(p, s)
	case st.Field != "":
		proxyConfigStop(p, s)
	case st.Flag != "":
		flagStop(s)
	}
}

// preStop is the preStop of s's container, which the kubelet runs before
// its SIGTERM; 0 for an injected sidecar, whose preStop the manifest does
// not show.
func (s *Sidecar) preStop() time.Duration {
	if s.Container == nil {
		return 0
	}
	return invocation.PreStop(s.Container)
}

// secondsStop is the stop time that an annotation sets in whole seconds,
// else its default: after the preStop, and after the duration of the
// annotation that comes before it when the pod has one.
func secondsStop(p *manifest.Pod, s *Sidecar) {
	st := s.Stop
	grace := st.Default
	v, where, ok := setting(p, s.Proxy, st.Key)
	if n, err := strconv.Atoi(v.Text); ok && err == nil && n >= 0 {
		grace = time.Duration(n) * time.Second
		s.StopWhy, s.StopLine = where, v.Line
	} else {
		s.StopWhy = fmt.Sprintf("%s, default %d", st.Key, int(grace/time.Second))
	}
	s.StopBesides = s.preStop()
	if b := p.Annotations.At(st.After); st.After != "" && b.Text != "" {
		if d, err := time.ParseDuration(b.Text); err == nil && d > 0 {
			s.StopBesides += d
			s.StopWhy += fmt.Sprintf(", after %s: %q", st.After, b.Text)
		}
	}
	s.StopAfter, s.StopFix, s.StopInt = s.StopBesides+grace, st.Key, true
}

// proxyConfigStop is the stop time that a field of the pod's ProxyConfig
// annotation sets (a native sidecar's field of its own), else the field's
// default, after the preStop.
func proxyConfigStop(p *manifest.Pod, s *Sidecar) {
	st := s.Stop
	field, d := st.Field, st.Default
	if s.Nativeness == Native {
		field, d = st.NativeField, st.NativeDefault
	}
	a := p.Annotations.At(st.Key)
	switch v, ok, err := proxyConfigField(p, a.Text, field); {
	case manifest.ErrPastBound(err):
		s.StopUnknown = &manifest.Unknown{What: field, From: st.Key + ", which is " + err.Error(), Line: a.Line}
		s.StopWhy = field + " in " + st.Key
	case ok:
		d = v
		s.StopWhy, s.StopLine = fmt.Sprintf("%s %s in %s", field, v, st.Key), a.Line
	default:
		s.StopWhy = fmt.Sprintf("%s in %s, default %s", field, st.Key, d)
	}
	s.StopAfter, s.StopFix, s.StopBesides = s.preStop()+d, field+" in "+st.Key, s.preStop()
}

// flagStop is the stop time that a flag of the sidecar's own command line
// sets, after the preStop; not judged when its value comes from outside
// the input.
func flagStop(s *Sidecar) {
	flag := s.Stop.Flag
	var delay time.Duration
	switch v := settingOf(s.Container, s.Settings, flag, false); {
	case v.unknown != nil:
		s.StopUnknown = v.unknown
	case v.set:
		delay, _ = time.ParseDuration(v.text)
	}
	preStop := s.preStop()
	s.StopAfter = preStop + delay
	s.StopWhy = fmt.Sprintf("its preStop %s + --%s %s", preStop, flag, delay)
	s.StopFix, s.StopBesides = "its --"+flag, preStop
}

// proxyConfigField reads one duration field of p's annotation that holds
// YAML (or JSON) of Istio's ProxyConfig, within the bounds of a nested
// parse (an error that manifest.ErrPastBound tells past them).
func proxyConfigField(p *manifest.Pod, annotation, field string) (time.Duration, bool, error) {
	if annotation == "" {
		return 0, false, nil
	}
	text, _, err := p.Nested(annotation, field)
	if err != nil {
		return 0, false, err
	}
	d, err := time.ParseDuration(text)
	return d, err == nil, nil
}

// At is the sidecar whose endpoint e answers path on port: of those whose
// endpoint is there, one that serves it, before one whose settings the
// input does not hold, before one that does not serve it (two proxies of
// one kind in a pod: one started without the endpoint's flag binds no
// port, and the other answers); else one whose port is not in the
// manifest (0).
func (m Set) At(port int, path string, e func(*Sidecar) Endpoint) *Sidecar {
	var best *Sidecar
	rank := 4
	for _, s := range m.Sidecars {
		ep := e(s)
		if ep.Path != path || ep.Port != port && ep.Port != 0 {
			continue
		}
		r := 3 // anywhere
		switch {
		case ep.Port != port:
		case ep.Unknown != nil:
			r = 1
		case ep.Off != "":
			r = 2
		default:
			r = 0
		}
		if r < rank {
			best, rank = s, r
		}
	}
	return best
}

// Covers says whether preset, with --port port (0 for none), waits for and
// shuts down s: the proxy itself, or one that its proxy reaches on that
// port (the envoy preset, an Envoy-based proxy's, whose admin port is not
// in the manifest).
func Covers(preset string, port int, s *Sidecar) bool {
	if s.Preset == preset {
		return true
	}
	r, ok := reach(preset, s)
	return ok && r.Port == cmp.Or(port, proxies.Lookup(preset).DefaultPort())
}

// reach is how preset's proxy reaches s's, if it does.
func reach(preset string, s *Sidecar) (proxies.Reach, bool) {
	px := proxies.Lookup(preset)
	if px == nil {
		return proxies.Reach{}, false
	}
	i := slices.IndexFunc(px.Reaches, func(r proxies.Reach) bool { return r.Proxy == s.Proxy })
	if i < 0 {
		return proxies.Reach{}, false
	}
	return px.Reaches[i], true
}

// ForPreset is the pod's sidecar that preset, with --port port, waits for.
func (m Set) ForPreset(preset string, port int) *Sidecar {
	for _, s := range m.Sidecars {
		if Covers(preset, port, s) {
			return s
		}
	}
	return nil
}

// ReachedElsewhere is a sidecar of the pod that preset's proxy reaches,
// but on another port than port (0: the preset's), and that port.
func (m Set) ReachedElsewhere(preset string, port int) (*Sidecar, int) {
	for _, s := range m.Sidecars {
		if r, ok := reach(preset, s); ok && !Covers(preset, port, s) {
			return s, r.Port
		}
	}
	return nil, 0
}

// OtherMesh is the pod's service mesh when preset names another one: a pod
// has one mesh, so the preset's proxy is not there. Other sidecars (Dapr,
// the Cloud SQL Auth Proxy) say nothing of a mesh that a namespace may
// inject unseen.
func (m Set) OtherMesh(preset string) *Sidecar {
	px := proxies.Lookup(preset)
	if px == nil || !px.Mesh {
		return nil
	}
	for _, s := range m.Sidecars {
		if s.Mesh && s.Proxy != px {
			return s
		}
	}
	return nil
}

// NearMiss is the label or annotation that a proxy reads of which key is a
// near miss, "" when it is none: the same but for case, or in the same
// domain and one or two letters off.
func NearMiss(key string) string { return misspelt(key, knownKeys()) }

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
func nearMiss(p *manifest.Pod, key string) string {
	known := knownKeys()
	for _, m := range []manifest.Meta{p.Labels, p.Annotations} {
		for _, k := range m.Keys() {
			if misspelt(k, known) == key {
				return k
			}
		}
	}
	return ""
}
