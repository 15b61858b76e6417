// plan.go: inject's plan for a pod template whose containers are to run
// proxy-await: the flags that check's rules want for the sidecars the pod
// shows and the kind of pod it is, and the settings those sidecars need for
// the flags to work. The rules say what is wrong; the plan says, from the
// same model (rules.Pod), what is right, so that check of an adopted pod
// finds no error.

package inject

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/proxies"
)

// plan is how a pod template comes to run proxy-await.
type plan struct {
	// Containers are those of spec.containers that adopt it, each with the
	// flags it runs proxy-await with.
	Containers []adoptedContainer
	// Skipped are those chosen that cannot adopt it, and why.
	Skipped []Line
	// Refused says why no container of the pod can adopt it, "" when they
	// can: a sidecar that nothing in the pod can make answer.
	Refused string
	// Annotations are the pod's annotations the sidecars need, to add or
	// to set.
	Annotations []annotation
	// Sidecars are the flags that sidecar containers of the manifest need
	// added to their args.
	Sidecars []sidecarArgs
}

// adoptedContainer is a container that adopts proxy-await.
type adoptedContainer struct {
	Index int // in spec.containers
	Name  string
	Line  int // where the container is
	// Flags are proxy-await's, which go before "--" and the container's
	// command.
	Flags []string
	// Probes are the container's probes that move to --probe-port.
	Probes []probeMove
	// Image is what its image runs, for a container that sets no command:
	// its command is then written, proxy-await and the image's
	// ENTRYPOINT, and its args too when it has none (the image's CMD,
	// which a command makes the runtime ignore). Nil when it has one.
	Image *imageCommand
}

// imageCommand is the command that a container without one gets, as its
// image says.
type imageCommand struct {
	Entrypoint []string // written after proxy-await's "--"
	Args       []string // the image's CMD, written as args; nil when the container has its own, or the image none
	Digest     string   // of the image's manifest; "" when the entrypoints file said
}

// entrypointKey is the pod annotation that records, for a container whose
// command inject wrote from its image, the digest of the image it was read
// from, so that a later inject can tell a changed image.
const entrypointKey = "proxy-await.io/entrypoint."

// fromFile is entrypointKey's value when the entrypoints file said what
// the image runs: the file has no digest.
const fromFile = "from --entrypoints"

// probeMove is a probe that moves to proxy-await's --probe-port.
type probeMove struct {
	Kind    string // readinessProbe, livenessProbe or startupProbe
	Handler string // httpGet or tcpSocket, as it was
	Port    int    // --probe-port
	Path    string // what proxy-await serves it on: /ready, /live, /startup
}

// annotation is a pod annotation and its value.
type annotation struct{ Key, Value string }

// sidecarArgs are flags to add to a sidecar container's args.
type sidecarArgs struct {
	Index int  // in initContainers or containers
	Init  bool // an init container (a native sidecar)
	Name  string
	Args  []string
}

// servingKinds are the kinds whose pods serve, behind a Service or a
// load balancer, until they are deleted; any other pod serves when one of
// its containers declares a port.
var servingKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}

// The values inject gives the drain. The hold is half the grace period
// left after the preStop (and -S's shutdown), so that the application has
// the other half to stop in, and at most maxTermDelay, the preStop sleep
// that the drain replaces (15 s, as teams write it): --drain-quiet ends
// a busy service's hold as soon as its traffic stops, but a quiet
// service's quiet period is learnt long, and its hold then runs to
// --term-delay; at the sleep's value it is never slower than the sleep.
// drainQuiet is the quiet period docs/graceful-termination.md advises
// when in doubt.
const (
	maxTermDelay       = 15 * time.Second
	minTermDelay       = 2 * time.Second
	drainQuiet         = time.Second
	defaultShutdownMax = 5 * time.Second // --shutdown-timeout's default
	// proxyLost is the --proxy-lost a Job's pod gets where a classic
	// sidecar that dies would leave it hanging (proxy-loss-hangs): the one
	// check suggests, longer than a live proxy's readiness fails while it
	// reloads its configuration, short beside a Job that hangs.
	proxyLost = 10 * time.Second
)

// probePorts are where --probe-port is looked for, the first that no
// container of the pod and no proxy uses.
func probePorts() []int {
	var out []int
	for p := 8081; p < 8100; p++ {
		out = append(out, p)
	}
	for p := 18081; p < 18100; p++ {
		out = append(out, p)
	}
	return out
}

// planOf says how the pod's application containers adopt proxy-await: each
// of spec.containers that is not a known proxy and does not run proxy-await
// already, of those that choose picks by name (it is asked of every one).
func planOf(a *rules.Pod, choose func(name string) bool, im *images) plan {
	pd := a.Pod
	var out plan
	var apps []*manifest.Container
	commands := map[*manifest.Container]*imageCommand{}
	for _, c := range pd.Containers {
		skip := func(why string) {
			out.Skipped = append(out.Skipped, Line{Event: "skipped", File: pd.File, Line: c.Line, Kind: pd.Kind, Name: pd.Name, Container: c.Name, Message: why})
		}
		switch {
		case c.Init, sidecar.ProxyOf(c) != nil:
		case !choose(c.Name):
			skip("--container does not name it")
		case a.Runs(c):
			skip("it runs proxy-await already, which inject leaves as it is")
		case len(c.Command) == 0:
			cmd, why := imageCommandOf(c, im)
			if cmd == nil {
				out.Skipped = append(out.Skipped, Line{Event: "skipped", File: pd.File, Line: c.Line, Kind: pd.Kind, Name: pd.Name, Container: c.Name,
					Message: why, failure: true})
				continue
			}
			commands[c] = cmd
			apps = append(apps, c)
		default:
			apps = append(apps, c)
		}
	}
	if len(apps) == 0 {
		return out
	}
	ad := &adopter{a: a, out: &out, images: im}
	if ad.sidecars(); out.Refused != "" {
		for _, c := range apps {
			out.Skipped = append(out.Skipped, Line{Event: "skipped", File: pd.File, Line: c.Line, Kind: pd.Kind, Name: pd.Name, Container: c.Name,
				Message: out.Refused + "; nothing in the pod can turn it on: fix the sidecar, then inject again", failure: true})
		}
		out.Annotations, out.Sidecars = nil, nil
		return out
	}
	ad.used = ad.portsInUse()
	for _, c := range apps {
		if flags, probes, ok := ad.container(c); ok {
			out.Containers = append(out.Containers, adoptedContainer{Index: c.Index, Name: c.Name, Line: c.Line, Flags: flags, Probes: probes, Image: commands[c]})
			if cmd := commands[c]; cmd != nil {
				ad.annotate(entrypointKey+c.Name, cmp.Or(cmd.Digest, fromFile))
			}
		}
	}
	if len(out.Containers) > 0 {
		ad.stopAfter()
	}
	return out
}

// imageCommandOf is the command that c, which sets none, runs by its
// image, as Kubernetes' rule makes it of the image's ENTRYPOINT and CMD and
// the container's args; nil when it is not known, and why.
func imageCommandOf(c *manifest.Container, im *images) (*imageCommand, string) {
	cfg, ok := im.found[c.Image]
	if !ok {
		why := "it sets no command, so it runs its image's ENTRYPOINT, which inject was not given: let inject read it from the image's registry, or give it with --entrypoints"
		if err := im.err[c.Image]; err != nil {
			why = "it sets no command, and what its image runs was not found: " + err.Error()
		}
		return nil, why
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, a.Text)
	}
	entrypoint, cmdArgs, err := imageconfig.Command(cfg, args)
	if err != nil {
		return nil, "it sets no command: " + err.Error()
	}
	out := &imageCommand{Entrypoint: literal(entrypoint), Digest: cfg.Digest}
	if len(c.Args) == 0 {
		out.Args = literal(cmdArgs)
	}
	return out, ""
}

// adopter works out one pod's adoption.
type adopter struct {
	a        *rules.Pod
	images   *images
	out      *plan
	presets  []string
	urls     []string // --ready-url and --shutdown-url flags where a sidecar answers elsewhere
	shutdown bool     // -S: a Job's pod with a classic sidecar
	used     map[int]bool
	hold     time.Duration // the longest hold of the stop signal of an adopted container
}

// sidecars reads what proxy-await needs of the pod's sidecars: the presets,
// where each answers, whether -S is needed, and what each must be given to
// answer.
func (ad *adopter) sidecars() {
	m, p := ad.a.Sidecars, ad.a.Pod
	for _, s := range m.Sidecars {
		if !slices.Contains(ad.presets, s.Preset) {
			ad.presets = append(ad.presets, s.Preset)
		}
		if s.Nativeness != sidecar.Native && p.Job {
			ad.shutdown = true
		}
	}
	for _, s := range m.Sidecars {
		if !ad.turnOn(s, s.ReadyAt, "the "+s.Name+" sidecar never answers proxy-await's readiness probe") {
			return
		}
		if ad.shutdown && s.Nativeness != sidecar.Native && !ad.turnOn(s, s.ShutdownAt, "the "+s.Name+" sidecar would not take -S's shutdown") {
			return
		}
	}
	ad.movedEndpoints()
}

// turnOn sets what turns a sidecar's endpoint on where it is off, or
// refuses the pod when nothing in it can.
func (ad *adopter) turnOn(s *sidecar.Sidecar, e sidecar.Endpoint, what string) bool {
	if e.Unknown != nil || e.Off == "" {
		return true
	}
	switch f := e.Fix; {
	case f == nil:
		ad.out.Refused = what + ": " + e.Off
		return false
	case f.Annotation != "":
		ad.annotate(f.Annotation, f.Value)
	case s.Container != nil:
		ad.sidecarArgs(s.Container, f.Flag)
	}
	return true
}

// annotate sets a pod annotation, once.
func (ad *adopter) annotate(key, value string) {
	if v, ok := ad.a.Annotations.Get(key); ok && v.Text == value {
		return
	}
	for i, s := range ad.out.Annotations {
		if s.Key == key {
			ad.out.Annotations[i].Value = value
			return
		}
	}
	ad.out.Annotations = append(ad.out.Annotations, annotation{key, value})
}

// sidecarArgs adds a flag to a sidecar container's args, once.
func (ad *adopter) sidecarArgs(c *manifest.Container, flag string) {
	for i, s := range ad.out.Sidecars {
		if s.Index == c.Index && s.Init == c.Init {
			if !slices.Contains(s.Args, flag) {
				ad.out.Sidecars[i].Args = append(ad.out.Sidecars[i].Args, flag)
			}
			return
		}
	}
	ad.out.Sidecars = append(ad.out.Sidecars, sidecarArgs{Index: c.Index, Init: c.Init, Name: c.Name, Args: []string{flag}})
}

// movedEndpoints gives proxy-await the ports where a sidecar answers
// elsewhere than its preset says: --port for the one preset that has an
// admin port, else each URL.
func (ad *adopter) movedEndpoints() {
	sidecars := ad.a.Sidecars.Sidecars
	moved := false
	for _, s := range sidecars {
		moved = moved || s.ReadyAt.Port != 0 && s.ReadyAt.Port != s.Ready.Port ||
			ad.shutdown && s.ShutdownAt.Port != 0 && s.ShutdownAt.Port != s.Shutdown.Port
	}
	if !moved {
		return
	}
	if s := sidecars[0]; len(sidecars) == 1 && s.AdminPort && s.ReadyAt.Port == s.ShutdownAt.Port {
		ad.urls = []string{"--port", strconv.Itoa(s.ReadyAt.Port)}
		return
	}
	for _, s := range sidecars {
		ad.urls = append(ad.urls, "--ready-url", s.Ready.URL(cmp.Or(s.ReadyAt.Port, s.Ready.Port)))
	}
	if ad.shutdown {
		for _, s := range sidecars {
			ad.urls = append(ad.urls, "--shutdown-url", s.Shutdown.URL(cmp.Or(s.ShutdownAt.Port, s.Shutdown.Port)))
		}
	}
}

// container is the flags of one application container, and its probes
// that move to --probe-port; false when it cannot adopt proxy-await, which
// a skipped line says.
func (ad *adopter) container(c *manifest.Container) ([]string, []probeMove, bool) {
	p := ad.a
	flags := []string{"--proxy", cmp.Or(strings.Join(ad.presets, ","), "none")}
	flags = append(flags, ad.urls...)
	budget := p.Grace - invocation.PreStop(c)
	if ad.shutdown {
		flags = append(flags, "-S")
		if p.RestartPolicy.Text == "OnFailure" {
			flags = append(flags, "--keep-proxy-on-failure")
		}
		if len(rules.ProxyLossHangs(p, 0)) > 0 {
			flags = append(flags, "--proxy-lost", proxyLost.String())
		}
		switch {
		case budget < time.Second:
			ad.out.Skipped = append(ad.out.Skipped, Line{Event: "skipped", File: p.File, Line: cmp.Or(p.GraceLine, c.Line), Kind: p.Kind, Name: p.Name, Container: c.Name, failure: true,
				Message: fmt.Sprintf("%s %ds leaves no time after the preStop (%s) for -S to shut the sidecar down: raise %s", p.GraceField, int(p.Grace/time.Second), (invocation.PreStop(c)).String(), p.GraceField)})
			return nil, nil, false
		case budget < defaultShutdownMax:
			d := budget.Truncate(time.Second)
			flags = append(flags, "--shutdown-timeout", d.String())
			budget -= d
		default:
			budget -= defaultShutdownMax
		}
	}
	var probes []probeMove
	if ad.serving() && budget/2 >= minTermDelay {
		delay := min(maxTermDelay, (budget / 2).Truncate(time.Second))
		flags = append(flags, "--term-delay", delay.String(), "--drain-quiet", drainQuiet.String())
		ad.hold = max(ad.hold, invocation.PreStop(c)+delay)
		var more []string
		more, probes = ad.probes(c)
		flags = append(flags, more...)
	}
	if argv := invocation.Argv(c, ad.images); len(argv) > 0 {
		if _, shell := invocation.ShellScript(argv); shell {
			flags = append(flags, "-g") // the shell and what it starts: one group
		}
	}
	return flags, probes, true
}

// serving says whether the pod serves: its kind's pods do, or one of its
// application containers declares a port.
func (ad *adopter) serving() bool {
	p := ad.a
	if slices.Contains(servingKinds, p.Kind) {
		return true
	}
	for _, c := range p.Containers {
		if !c.Init && sidecar.ProxyOf(c) == nil && len(c.PortNumbers) > 0 {
			return true
		}
	}
	return false
}

// probes moves c's probes of its own ports to --probe-port: the readiness
// probe's check (else the liveness or startup probe's) becomes
// --app-probe, and every probe that checks the same moves. A probe with a
// check of its own stays where it is: /live and /startup answer from
// --app-probe too, and a liveness probe that failed with the readiness
// check would restart a pod that is only not ready. Not a probe with a
// host (the kubelet's, not the pod's), HTTP headers (--app-probe sends
// none), gRPC or exec.
func (ad *adopter) probes(c *manifest.Container) ([]string, []probeMove) {
	check := map[string]string{}
	for _, pr := range c.Probes {
		if v := appCheck(c, pr); v != "" {
			if _, ok := check[pr.Kind]; !ok {
				check[pr.Kind] = v
			}
		}
	}
	app := ""
	for _, kind := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		if app = check[kind]; app != "" {
			break
		}
	}
	if app == "" {
		return nil, nil
	}
	port := ad.freePort()
	if port == 0 {
		return nil, nil
	}
	var moves []probeMove
	for _, pr := range c.Probes {
		if check[pr.Kind] == app && appCheck(c, pr) == app {
			path := map[string]string{"readinessProbe": "/ready", "livenessProbe": "/live", "startupProbe": "/startup"}[pr.Kind]
			moves = append(moves, probeMove{Kind: pr.Kind, Handler: pr.Handler, Port: port, Path: path})
		}
	}
	return []string{"--probe-port", strconv.Itoa(port), "--app-probe", app}, moves
}

// appCheck is what a probe checks, as --app-probe takes it: the URL of an
// HTTP probe, tcp:PORT of a TCP one; "" for one that cannot move.
func appCheck(c *manifest.Container, pr manifest.Probe) string {
	if pr.Host != "" || pr.Headers {
		return ""
	}
	port, err := strconv.Atoi(pr.Port.Text)
	if i := slices.IndexFunc(c.Ports, func(p manifest.NamedPort) bool { return p.Name == pr.Port.Text }); err != nil && i >= 0 {
		port, err = c.Ports[i].Port, nil
	}
	if err != nil || port <= 0 || port > 65535 {
		return ""
	}
	switch pr.Handler {
	case "httpGet":
		scheme := "http"
		if strings.EqualFold(pr.Scheme, "HTTPS") {
			scheme = "https"
		}
		return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, cmp.Or(pr.Path, "/"))
	case "tcpSocket":
		return fmt.Sprintf("tcp:%d", port)
	}
	return ""
}

// portsInUse are the ports that --probe-port must not take: those the
// pod's containers declare or probe, and those of every proxy.
func (ad *adopter) portsInUse() map[int]bool {
	used := map[int]bool{}
	for _, c := range ad.a.Containers {
		for _, n := range c.PortNumbers {
			used[n] = true
		}
		for _, pr := range c.Probes {
			if n, err := strconv.Atoi(pr.Port.Text); err == nil {
				used[n] = true
			}
		}
	}
	for _, px := range proxies.All {
		used[px.Ready.Port], used[px.Shutdown.Port], used[px.Shutdown.OwnPort] = true, true, true
	}
	return used
}

// freePort is a port for --probe-port that nothing in the pod uses, 0
// when there is none.
func (ad *adopter) freePort() int {
	for _, p := range probePorts() {
		if !ad.used[p] {
			ad.used[p] = true
			return p
		}
	}
	return 0
}

// stopAfter gives each classic sidecar that would stop taking connections
// before the hold ends (proxy-stops-first) the setting that keeps it up
// long enough: an annotation of seconds, a field of its proxy
// configuration when the pod has none, a flag of its own. Where the pod
// asks some release for a native sidecar, a classic sidecar's setting is
// left out: Linkerd 2.15 to 2.19 refuse its wait with a native proxy.
func (ad *adopter) stopAfter() {
	p := ad.a
	if ad.hold == 0 {
		return
	}
	for _, s := range ad.a.Sidecars.Sidecars {
		st := s.Stop
		switch {
		case s.StopWhy == "" || s.StopUnknown != nil || s.StopAfter >= ad.hold:
		case s.Nativeness == sidecar.Native && st.NativeField == "":
		case s.Nativeness == sidecar.Depends && len(sidecar.NativeKeysOn(p.Pod, s.Proxy)) > 0:
		case st.ByInjector && s.Container != nil:
		case st.Seconds:
			ad.annotate(st.Key, s.StopValue(ad.hold))
		case st.Field != "":
			if _, ok := p.Annotations.Get(st.Key); !ok {
				field := st.Field
				if s.Nativeness == sidecar.Native {
					field = st.NativeField
				}
				ad.annotate(st.Key, field+": "+s.StopValue(ad.hold))
			}
		case st.Flag != "" && s.Container != nil:
			ad.sidecarArgs(s.Container, "--"+st.Flag+"="+s.StopValue(ad.hold))
		}
	}
}
