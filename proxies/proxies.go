// Package proxies is what proxy-await knows of each proxy it waits for and
// shuts down, one file per proxy: its preset (where it answers the
// readiness probe and takes the shutdown POST, and what --port moves), the
// hints its errors get, and the facts check judges a manifest by, per
// release, each beside the upstream file it was read from. config,
// readiness, shutdown and check read this table; none of them keeps a port,
// a path or a rule of a proxy of its own. A proxy's next release that
// changes a default is a change of one line here.
//
// The table is composite literals of constants: nothing here runs when
// proxy-await starts.
package proxies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// All is every proxy, in the order that --help, --proxy's usage and the
// presets' hint list them.
var All = []*Proxy{&linkerd, &istio, &envoy, &cloudsql, &alloydb, &dapr, &consul}

// InPods is every proxy, in the order that check names the sidecars of a
// pod and suggests their presets.
var InPods = []*Proxy{&linkerd, &istio, &dapr, &consul, &cloudsql, &alloydb, &envoy}

// Default is --proxy's default: Linkerd, the proxy linkerd-await waits for.
var Default = &linkerd

// Together is the presets that --proxy's hint gives as an example of
// several in one pod: a mesh and a database's proxy.
var Together = []*Proxy{&istio, &cloudsql}

// Scuttle is the proxies that scuttle's variables name: ENVOY_ADMIN_API an
// Envoy's admin API, ISTIO_QUIT_API Istio's pilot-agent, which runs beside
// its Envoy.
var Scuttle = struct{ Envoy, Istio *Proxy }{&envoy, &istio}

// Lookup is the proxy whose preset is called name, nil for none.
func Lookup(name string) *Proxy {
	for _, p := range All {
		if p.Preset == name {
			return p
		}
	}
	return nil
}

// Host is the host of every preset's URLs: the literal 127.0.0.1, since
// localhost may resolve to ::1 while a proxy listens on IPv4 only: Linkerd's
// injector puts the proxy's admin server on 0.0.0.0:4191 unless IPv6 is
// turned on (linkerd/linkerd2#12495 moved it to [::] for that; IPv6 is off
// by default, linkerd/website#1820, the 2.16 docs).
const Host = "127.0.0.1"

// Proxy is what proxy-await knows of one proxy. A zero field is a fact
// that does not apply to it.
type Proxy struct {
	Name   string // as messages name it
	Preset string // its --proxy preset, and its name in --versions

	// The preset: where the proxy answers, as its injector (or its own
	// defaults) sets it up.
	Ready    Endpoint // GET: 2xx once ready
	Shutdown Endpoint // POST: the proxy exits
	// AdminPort says that Ready and Shutdown share one admin port, the one
	// that --port replaces; the other presets' ports are fixed.
	AdminPort bool
	// PortInConfig says that the admin port is in the proxy's own
	// configuration, which a manifest does not show: check takes it to
	// answer on any port.
	PortInConfig bool

	// The hints its errors get, beside what any proxy's get.
	RefusedHint string // readiness refused for long: why this proxy may not answer
	MissingHint string // the shutdown URL refuses while readiness answers: why, and the fix
	Off         Answer // how it answers a shutdown POST while that endpoint is switched off

	// How check recognises the proxy in a pod.
	Images     []string  // image repositories, matched by the end of their path
	Retired    []Retired // images of releases that serve neither endpoint
	Containers []string  // the container names its injector gives it
	Inject     Injection // what asks its injector for the sidecar
	Mesh       bool      // a service mesh: a pod has one at most
	// NamespaceKeys are the prefixes of its pod annotations that its
	// injector also reads from the pod's Namespace, as the pod's defaults.
	NamespaceKeys []string
	Native        Native   // what makes it a native sidecar
	Settings      Settings // how it reads the settings of its own command line

	// What moves or switches off its endpoints, in the pod's annotations.
	AdminPortKey    string // moves the port of Ready and Shutdown
	ShutdownPortKey string // moves Shutdown's port alone
	ShutdownPathKey string // moves Shutdown's path
	ShutdownSwitch  Switch // turns Shutdown on or off

	// Stop is how long it keeps taking new connections once the pod is
	// deleted (a classic sidecar gets the kubelet's SIGTERM then).
	Stop Stop
	// StoppedBy are the commands of an application that stop it, besides
	// an HTTP client that POSTs its Shutdown path.
	StoppedBy []Command
	// AppStops is how an application stops the sidecar from its own code,
	// the way the proxy documents for a Job: a Job that nothing in its
	// manifest stops may well be stopped so. "" when it documents none.
	AppStops string
	// Processes are the names of its sidecar's processes that stop it
	// when killed (as killall and pkill match them), which a container
	// sees in a pod with shareProcessNamespace.
	Processes []string
	// Reaches are the proxies whose sidecars its preset waits for and
	// shuts down as well, at the port where each serves its admin API:
	// their admin API is its own, on a port their manifest does not show.
	Reaches []Reach

	// FlagsSince are the flags of its own command line that its earlier
	// releases do not have, and refuse at start, with the release that
	// added each: a container of the manifest whose image's tag names an
	// earlier release, or none, is given none of them.
	FlagsSince []FlagSince
	// Gateways are the controllers whose pods run the proxy as the
	// workload itself, an ingress or a gateway, not as a sidecar of an
	// application.
	Gateways []Gateway

	// Injected is what its injector adds to a pod, as Pod Security
	// "restricted" judges it; zero for a proxy that no injector adds.
	Injected Injected
}

// Reach is a proxy whose sidecar runs another's admin API (an Envoy inside
// it), and the port where it serves it.
type Reach struct {
	Proxy *Proxy
	Port  int
}

// Injected is what a proxy's injector adds to a pod at one release, by
// default and with Remedy, the setting that makes the pod pass Pod
// Security "restricted" (docs/sidecars.md says the same in prose).
type Injected struct {
	Release string // the injector's release, as messages name it: "Linkerd 2.20"
	// Init and Sidecar are the containers it adds by default (nil: none),
	// FixedInit and FixedSidecar those it adds with Remedy (nil: the same
	// as by default).
	Init, Sidecar           *Container
	FixedInit, FixedSidecar *Container
	// CopiesCapabilities: the sidecar gets the first container's
	// capabilities.
	CopiesCapabilities bool
	Remedy             string
}

// SetUp are the names of the init containers that p's injector adds
// beside the proxy, by default or with its Remedy: they may run the
// proxy's image, to set up the pod's network (or check that a CNI plugin
// did), and exit; they are no sidecar.
func (p *Proxy) SetUp() []string {
	var names []string
	for _, c := range []*Container{p.Injected.Init, p.Injected.FixedInit} {
		if c != nil && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// Container is an injected container, as far as Pod Security looks at it.
type Container struct {
	Name    string
	User    int64 // runAsUser
	NonRoot bool  // runAsNonRoot
	Add     []string
	DropAll bool
}

// Endpoint is where a proxy answers: a port and a path on Host.
type Endpoint struct {
	Port int
	Path string
	// Flag is the flag of the proxy's own command line without which it
	// serves nothing at Path; "" when it always does.
	Flag string
	// PortFlag is the flag of the proxy's own command line that moves Port.
	PortFlag string
	// OwnPort is the proxy's own default port, where its injector gives it
	// Port instead.
	OwnPort int

	// How the proxy answers at Path (the tests' fake proxy answers the
	// same): OK once ready, or when it takes the shutdown; NotReady, the
	// readiness endpoint's answer before.
	OK, NotReady Answer
	// Methods are the methods it takes at Path: none, GET (and HEAD) for
	// readiness and POST for shutdown; "*", any. To another it answers
	// WrongMethod.
	Methods     []string
	WrongMethod Answer
	// AnyClient: it takes the request from any client; otherwise from a
	// loopback client only.
	AnyClient bool
}

// Takes says whether the endpoint takes a request with method, as its
// shutdown endpoint (shutdown) or its readiness endpoint does.
func (e Endpoint) Takes(method string, shutdown bool) bool {
	switch {
	case slices.Contains(e.Methods, "*"), slices.Contains(e.Methods, method):
		return true
	case len(e.Methods) > 0:
		return false
	case shutdown:
		return method == "POST"
	}
	return method == "GET" || method == "HEAD"
}

// URL is the endpoint's URL on port.
func (e Endpoint) URL(port int) string {
	return "http://" + Host + ":" + strconv.Itoa(port) + e.Path
}

// URLs are the preset's readiness and shutdown URLs; port, when it is not
// 0, replaces the admin port of a preset that has one.
func (p *Proxy) URLs(port int) (ready, shutdown string) {
	readyPort, shutdownPort := p.Ready.Port, p.Shutdown.Port
	if p.AdminPort && port != 0 {
		readyPort, shutdownPort = port, port
	}
	return p.Ready.URL(readyPort), p.Shutdown.URL(shutdownPort)
}

// DefaultPort is the admin port that --port replaces; 0 when the preset's
// ports are fixed.
func (p *Proxy) DefaultPort() int {
	if p.AdminPort {
		return p.Ready.Port
	}
	return 0
}

// Answer is how a proxy answers a request whose endpoint it has switched
// off, and the hint that says how to switch it on.
type Answer struct {
	Status int
	Body   string // what the body holds
	Hint   string
}

// FlagSince is a flag of a proxy's own command line and the release that
// added it.
type FlagSince struct {
	Flag  string
	Since Version
}

// Since is the release that added flag to p's own command line, and
// whether p has releases without it.
func (p *Proxy) Since(flag string) (Version, bool) {
	for _, f := range p.FlagsSince {
		if f.Flag == flag {
			return f.Since, true
		}
	}
	return Version{}, false
}

// Gateway is a controller whose pods run the proxy as the workload: by
// the images of its containers beside the proxy's (a shutdown manager),
// or that run the proxy themselves (Proxy).
type Gateway struct {
	Name   string
	Images []string // image repositories, matched by the end of their path
	// Proxy says that the images run the proxy themselves: a pod with
	// one is the gateway's, with or without the proxy's own image.
	Proxy bool
}

// Retired is the image of a release that serves neither endpoint, and why
// as a message says it.
type Retired struct {
	Image string
	Why   string
}

// Injection is what asks a proxy's injector to add its sidecar to a pod.
type Injection struct {
	Key string   // the pod annotation (or label, with Labels) that asks for the sidecar
	On  []string // its values that inject
	Off []string // its values that keep the sidecar out
	// Labels says that its injector reads Key as a pod label too, before
	// the annotation; without it, it reads the annotation alone.
	Labels bool
	// Fold says that its injector trims Key's value and ignores its case.
	Fold bool
	// PodOnly says that only the pod's own Key injects: without it, the pod
	// has no sidecar.
	PodOnly bool
	// FromNamespace says that the pod's Namespace with Key at one of On
	// injects too.
	FromNamespace bool
	// Namespace are labels of the pod's Namespace that inject or keep the
	// sidecar out, in the order the injector reads them.
	Namespace []Label
	// Sidecarless is a label of the pod or its Namespace that serves the
	// pod without a sidecar.
	Sidecarless Mode
}

// Value says whether v, Key's value, injects the sidecar (on) or keeps it
// out (off), as the injector reads it; neither for another value.
func (in Injection) Value(v string) (on, off bool) {
	if in.Fold {
		v = strings.ToLower(strings.TrimSpace(v))
	}
	return slices.Contains(in.On, v), slices.Contains(in.Off, v)
}

// Label is a label (or annotation) whose value injects or keeps a sidecar
// out.
type Label struct {
	Key string
	On  string // the value that injects; "" when any value does
	Off string // the value that keeps the sidecar out; "" for none
}

// Mode is a label's value that serves a pod without a sidecar, and what
// messages say of it.
type Mode struct {
	Key, Value, Why string
}

// Native is what makes a proxy's sidecar native (an init container with
// restartPolicy: Always, which the kubelet stops after the application).
type Native struct {
	Keys      []NativeKey // pod annotations that choose it (true/false), the most binding first
	Reads     Boolean     // how its injector reads their values
	Since     Version     // the release from which it is native by default
	KubeSince Version     // ... when the cluster's Kubernetes is this release or later
	// Mesh is the setting of the whole mesh that makes it native, or
	// classic, for every pod whose annotations do not choose (--versions
	// NAME=native states it); "" when there is none.
	Mesh string
}

// NativeKey is an annotation that chooses a native sidecar, and the
// releases that read it; none listed: every release that has it.
type NativeKey struct {
	Key   string
	Reads []Span
}

// Span is the releases from one up to (not including) another; a zero To
// is every later release.
type Span struct{ From, To Version }

// ReadBy says whether release r reads the annotation.
func (k NativeKey) ReadBy(r Version) bool {
	if len(k.Reads) == 0 {
		return true
	}
	for _, s := range k.Reads {
		if r.AtLeast(s.From) && (s.To == (Version{}) || !r.AtLeast(s.To)) {
			return true
		}
	}
	return false
}

// Boolean is how an injector reads an annotation that is true or false.
type Boolean struct {
	True, False []string // the values it reads as true, and as false
	// Fold: it trims the value and ignores its case. Else: any other value
	// is false; without it, another value is neither, and the annotation
	// is not read.
	Fold, Else bool
}

// GoBool is Go's strconv.ParseBool, which most injectors read booleans
// with. A proxy's facts name its words, goTrue and goFalse, not GoBool:
// a copy of a variable is work at initialisation, a variable's words are
// static data.
var GoBool = Boolean{True: goTrue, False: goFalse}

var goTrue, goFalse = []string{"true", "True", "TRUE", "t", "T", "1"}, []string{"false", "False", "FALSE", "f", "F", "0"}

// Read is what the injector makes of v: true or false, and whether it
// reads it at all.
func (b Boolean) Read(v string) (value, ok bool) {
	if b.Fold {
		v = strings.ToLower(strings.TrimSpace(v))
	}
	switch {
	case slices.Contains(b.True, v):
		return true, true
	case slices.Contains(b.False, v):
		return false, true
	}
	return false, b.Else
}

// Settings is how a proxy reads the settings of its own command line
// besides its flags.
type Settings struct {
	EnvPrefix  string // the prefix of the variables that set its flags: the flag's name follows, upper case, - as _
	ConfigFile string // the flag that names its configuration file, which the manifest does not show
}

// Switch is a pod annotation that turns an endpoint on or off.
type Switch struct {
	Key string
	// On is the value that turns it on, any other turns it off; "" when
	// the value is a boolean that turns it off only when false.
	On string
	// OffSince is the release from which the endpoint is off unless Key
	// turns it on; zero: it is on by default.
	OffSince Version
	// Turns is what a false value turns off, as messages name it.
	Turns string
}

// Stop is how long a sidecar keeps taking new connections once the pod is
// deleted, and what sets it: its preStop, then the setting below. A zero
// Stop is not known.
type Stop struct {
	Key     string        // the pod annotation that sets it
	Seconds bool          // Key's value is whole seconds
	Default time.Duration // when Key does not set it
	// Field is the field of Key's YAML (a ProxyConfig) that sets it, and
	// NativeField the one that sets it for a native sidecar, which drains
	// from the pod's deletion on, with its NativeDefault.
	Field, NativeField string
	NativeDefault      time.Duration
	Flag               string // a flag of the sidecar's own command line that sets it, a duration
	After              string // a pod annotation whose duration comes before it
	// ByInjector says that Key is an instruction to the injector (a
	// preStop sleep it adds): a sidecar container the manifest shows
	// stops after its own preStop alone.
	ByInjector bool
}

// Command is a program that stops a sidecar when an application's command
// runs it with one of Words, or with Path: the sidecar's Shutdown path,
// with or without its slash, or a URL that ends with it. With neither, any
// words do.
type Command struct {
	Program string
	Words   []string
	Path    bool
}

// StoppedByCommand says whether running program with args stops p's
// sidecar, as p.StoppedBy says.
func (p *Proxy) StoppedByCommand(program string, args []string) bool {
	for _, c := range p.StoppedBy {
		if c.Program != program {
			continue
		}
		if len(c.Words) == 0 && !c.Path {
			return true
		}
		if slices.ContainsFunc(args, func(a string) bool {
			return slices.Contains(c.Words, a) ||
				c.Path && (a == strings.TrimPrefix(p.Shutdown.Path, "/") || strings.HasSuffix(a, p.Shutdown.Path))
		}) {
			return true
		}
	}
	return false
}

// Version is a release as --versions states it and the facts name it:
// MAJOR.MINOR.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast says whether v is o or a later release.
func (v Version) AtLeast(o Version) bool {
	return v.Major > o.Major || v.Major == o.Major && v.Minor >= o.Minor
}

// Kubernetes is the name of Kubernetes' release in --versions.
const Kubernetes = "kubernetes"

// ReleaseNames are what --versions can state: Kubernetes, when a proxy's
// default depends on its release, and each proxy whose facts differ by
// release.
func ReleaseNames() []string {
	var names []string
	if slices.ContainsFunc(All, func(p *Proxy) bool { return p.Native.KubeSince != (Version{}) }) {
		names = append(names, Kubernetes)
	}
	for _, p := range All {
		if p.byRelease() {
			names = append(names, p.Preset)
		}
	}
	return names
}

// MeshNames are the proxies whose native sidecars a setting of the whole
// mesh turns on or off, which --versions can state (NAME=native,
// NAME=V+classic).
func MeshNames() []string {
	var names []string
	for _, p := range All {
		if p.Native.Mesh != "" {
			names = append(names, p.Preset)
		}
	}
	return names
}

// byRelease says whether a fact of p differs between its releases.
func (p *Proxy) byRelease() bool {
	if p.Native.Since != (Version{}) || p.ShutdownSwitch.OffSince != (Version{}) {
		return true
	}
	for _, k := range p.Native.Keys {
		if len(k.Reads) > 0 {
			return true
		}
	}
	return false
}

// Keys are the pod and Namespace labels and annotations that the proxy
// reads.
func (p *Proxy) Keys() []string {
	keys := []string{p.Inject.Key, p.AdminPortKey, p.ShutdownSwitch.Key, p.ShutdownPortKey, p.Stop.Key}
	for _, k := range p.Native.Keys {
		keys = append(keys, k.Key)
	}
	keys = append(keys, p.Stop.After, p.ShutdownPathKey, p.Inject.Sidecarless.Key)
	for _, l := range p.Inject.Namespace {
		keys = append(keys, l.Key)
	}
	return slices.DeleteFunc(keys, func(k string) bool { return k == "" })
}

// ReadsFromNamespace says whether the proxy's injector reads the pod
// annotation key from the pod's Namespace too.
func (p *Proxy) ReadsFromNamespace(key string) bool {
	return slices.ContainsFunc(p.NamespaceKeys, func(prefix string) bool { return strings.HasPrefix(key, prefix) })
}
