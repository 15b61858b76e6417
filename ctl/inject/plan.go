// plan.go: inject's plan for a pod template whose containers are to run
// proxy-await: which containers are the application, the flags that
// check's rules want for the sidecars the pod shows and what each
// container does (serve, or complete), and the settings those sidecars
// need for the flags to work. The rules say what is wrong; the plan says,
// from the same model (rules.Pod), what is right, so that check of an
// adopted pod finds no error.

package inject

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
)

// plan is how a pod template comes to run proxy-await.
type plan struct {
	// Containers are those of spec.containers that adopt it, each with the
	// flags it runs proxy-await with.
	Containers []adoptedContainer
	// Lines say what else became of the pod and its containers: those
	// skipped, and why; warnings.
	Lines []Line
	// Annotations are the pod's annotations the sidecars need, to add or
	// to set.
	Annotations []annotation
	// Sidecars are the flags that sidecar containers of the manifest need
	// added to their args.
	Sidecars []sidecarArgs
	// Names are what inject adds to the pod under: the volume, its mount
	// path, the init container; another than the default where the pod
	// has that name or path already.
	Names names
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
	// ProbePort is the --probe-port to declare as a port of the container,
	// 0 for none: with hostNetwork, so that the scheduler keeps two pods
	// that use it off one node.
	ProbePort int
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
	Was        string   // the digest the last inject read, where it differs
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

// The annotations inject reads and writes.
const (
	// optOut, with the value disabled on a pod template or a Namespace of
	// the input, keeps inject out of its pods.
	optOut = "proxy-await.io/inject"
	// skipContainers names containers of the pod (a,b) that inject leaves
	// alone.
	skipContainers = "proxy-await.io/skip-containers"
	// entrypointKey records, for a container whose command inject wrote
	// from its image, the digest of the image it was read from, so that a
	// later inject can tell a changed image.
	entrypointKey = "proxy-await.io/entrypoint."
	// fromFile is entrypointKey's value when the entrypoints file said
	// what the image runs: the file has no digest.
	fromFile = "from --entrypoints"
)

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

// planner is what a plan needs of the whole run: which containers were
// chosen, what images run, the input's Services and ConfigMaps, and the
// ports that pods on the nodes' own network take.
type planner struct {
	choose    func(name string, before undonePod) bool // --container picks the name, or the last inject adopted it
	images    *images
	in        *manifest.Input
	hostPorts *hostPorts
}

// planOf says how the pod's application containers adopt proxy-await:
// each of spec.containers that is not a known proxy, does not run
// proxy-await already, is not left out (by the pod's or its Namespace's
// opt-out, by proxy-await.io/skip-containers, or by --container), in a pod
// that is not itself a proxy's, and needs it: it serves, or the pod has a
// sidecar.
func (pl *planner) planOf(a *rules.Pod, before undonePod) plan {
	pd := a.Pod
	out := plan{Names: defaultNames}
	if injected(pd) { // its record is still there: it could not be taken back
		why := "what the last inject changed cannot be taken back, so it is not worked out again"
		if err := before.err; err != nil {
			why += ": " + err.Error()
		}
		out.Lines = append(out.Lines, Line{Event: "skipped", File: pd.File, Line: pd.Line, Kind: pd.Kind, Name: pd.Name, Message: why, failure: true})
		return out
	}
	if why := leftOut(pd); why != "" {
		out.pass(pd, nil, why)
		return out
	}
	skip := skippedNames(pd)
	var apps []*manifest.Container
	commands := map[*manifest.Container]*imageCommand{}
	for _, c := range pd.Containers {
		switch {
		case c.Init, sidecar.ProxyOf(c) != nil:
		case slices.Contains(skip, c.Name):
			out.pass(pd, c, skipContainers+" names it")
		case !pl.choose(c.Name, before):
			out.pass(pd, c, "--container does not name it")
		case a.Runs(c):
			out.pass(pd, c, "it runs proxy-await already, which inject leaves as it is")
		case len(c.Command) == 0:
			cmd, why := imageCommandOf(c, pl.images)
			if cmd == nil {
				out.fail(pd, c, why)
				continue
			}
			if err := pl.images.stale[c.Image]; err != nil {
				out.warnContainer(pd, c, 0, "what its image runs could not be read again, so it runs what the last inject read: "+err.Error())
			}
			commands[c] = cmd
			apps = append(apps, c)
		default:
			apps = append(apps, c)
		}
	}
	if len(apps) == 0 {
		if len(out.Lines) == 0 {
			out.pass(pd, nil, "it has no application container: every container is a proxy or an init container")
		}
		return out
	}
	ad := &adopter{pl: pl, a: a, out: &out, serves: pl.serving(pd)}
	if len(a.Sidecars.Sidecars) == 0 && pd.NS == nil {
		out.warn(pd, pd.NamespaceLine, namespaceWarning(pd))
	}
	if why := ad.sidecars(); why != "" {
		for _, c := range apps {
			out.fail(pd, c, why)
		}
		out.Annotations, out.Sidecars = nil, nil
		return out
	}
	if why := out.Names.choose(pd); why != "" {
		for _, c := range apps {
			out.fail(pd, c, why)
		}
		out.Annotations, out.Sidecars = nil, nil
		return out
	}
	ad.used = ad.portsInUse()
	for _, c := range apps {
		if !ad.serves[c] && len(a.Sidecars.Sidecars) == 0 {
			out.pass(pd, c, "it needs nothing of proxy-await: it serves no port (it declares none, and no Service of the input sends to its pod), and the pod shows no sidecar")
			continue
		}
		if ac, ok := ad.container(c); ok {
			ac.Image = commands[c]
			if ac.Image != nil {
				ac.Image.Was = pl.images.was[c.Image]
			}
			out.Containers = append(out.Containers, ac)
			if cmd := commands[c]; cmd != nil {
				ad.annotate(entrypointKey+c.Name, cmp.Or(cmd.Digest, fromFile))
			}
		}
	}
	if len(out.Containers) > 0 {
		ad.stopAfter()
	} else {
		out.Annotations, out.Sidecars = nil, nil
	}
	return out
}

// pass says that a container, or the pod (c nil), is left as it is, and
// why: no failure, it needs nothing or is left out on purpose.
func (out *plan) pass(p *manifest.Pod, c *manifest.Container, why string) {
	l := Line{Event: "skipped", File: p.File, Line: p.Line, Kind: p.Kind, Name: p.Name, Message: why}
	if c != nil {
		l.Line, l.Container = c.Line, c.Name
	}
	out.Lines = append(out.Lines, l)
}

// fail says that a container that needs proxy-await is left without it,
// and why.
func (out *plan) fail(p *manifest.Pod, c *manifest.Container, why string) {
	out.Lines = append(out.Lines, Line{Event: "skipped", File: p.File, Line: c.Line, Kind: p.Kind, Name: p.Name, Container: c.Name, Message: why, failure: true})
}

// warn says what the pod gets, or does not get, that may not be what the
// cluster needs, at line (the pod's own when 0).
func (out *plan) warn(p *manifest.Pod, line int, msg string) {
	out.Lines = append(out.Lines, Line{Event: "warning", File: p.File, Line: cmp.Or(line, p.Line), Kind: p.Kind, Name: p.Name, Message: msg})
}

// warnContainer is warn, of a container.
func (out *plan) warnContainer(p *manifest.Pod, c *manifest.Container, line int, msg string) {
	out.Lines = append(out.Lines, Line{Event: "warning", File: p.File, Line: cmp.Or(line, c.Line), Kind: p.Kind, Name: p.Name, Container: c.Name, Message: msg})
}

// leftOut says why no container of the pod is touched: it opts out, its
// Namespace does, or it is itself a proxy (a gateway's); "" when none of
// these.
func leftOut(p *manifest.Pod) string {
	if v, ok := p.Annotations.Get(optOut); ok && v.Text == "disabled" {
		return fmt.Sprintf("the pod template opts out (%s: disabled)", optOut)
	}
	if p.NS != nil {
		if v, ok := p.NS.Annotations.Get(optOut); ok && v.Text == "disabled" {
			return fmt.Sprintf("namespace %s opts out (%s: disabled)", p.NS.Name, optOut)
		}
	}
	if gw, px := gatewayOf(p); gw != "" {
		return fmt.Sprintf("it is %s's %s, the workload itself, not an application beside a sidecar: its shutdown is its controller's to manage", gw, px)
	}
	return ""
}

// offered says whether c is a container that --container can name: an
// application container, whether or not inject then leaves it out (its
// line, or its pod's, says so).
func offered(c *manifest.Container) bool {
	return !c.Init && sidecar.ProxyOf(c) == nil
}

// skippedNames are the containers the pod's skipContainers annotation names.
func skippedNames(p *manifest.Pod) []string {
	var out []string
	for _, n := range strings.Split(p.Annotations.At(skipContainers).Text, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// namespaceWarning is what a pod that shows no sidecar is told when its
// Namespace is not in the input: a Namespace labelled for a mesh's
// injector adds a sidecar that the manifest does not show, and --proxy
// none then waits for nothing and shuts nothing down.
func namespaceWarning(p *manifest.Pod) string {
	ns, name := "namespace "+p.Namespace, p.Namespace
	if p.Namespace == "" {
		ns, name = "the namespace it is applied to (it names none)", "NAMESPACE"
	}
	return fmt.Sprintf("the pod shows no sidecar, and %s is not in the input, whose injector may add one that the manifest does not show; "+
		"if it injects a sidecar, add kubectl get ns %s -o yaml to the input", ns, name)
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

// serving says which application containers of p serve: each that
// declares a port a Service of the input sends to, or any port when no
// Service does; and when a Service sends to a port that no container
// declares, every one that declares none, since which it is cannot be
// told.
func (pl *planner) serving(p *manifest.Pod) map[*manifest.Container]bool {
	out := map[*manifest.Container]bool{}
	var apps []*manifest.Container
	for _, c := range p.Containers {
		if !c.Init && sidecar.ProxyOf(c) == nil {
			apps = append(apps, c)
			out[c] = len(c.PortNumbers) > 0
		}
	}
	for _, s := range pl.in.Services(p) {
		for _, target := range s.TargetPorts {
			declared := false
			for _, c := range apps {
				if declares(c, target) {
					out[c], declared = true, true
				}
			}
			if !declared {
				for _, c := range apps {
					out[c] = out[c] || len(c.PortNumbers) == 0
				}
			}
		}
	}
	return out
}

// declares says whether c declares the port target: its number, or its
// name.
func declares(c *manifest.Container, target string) bool {
	if slices.ContainsFunc(c.Ports, func(p manifest.NamedPort) bool { return p.Name == target }) {
		return true
	}
	return slices.ContainsFunc(c.PortNumbers, func(n int) bool { return fmt.Sprint(n) == target })
}

// adopter works out one pod's adoption.
type adopter struct {
	pl       *planner
	a        *rules.Pod
	out      *plan
	serves   map[*manifest.Container]bool
	presets  []string
	urls     []string // --port, or --ready-url and --shutdown-url flags, where a sidecar answers elsewhere
	shutdown bool     // -S: a Job's pod with a classic sidecar
	used     map[int]bool
	hold     time.Duration // the longest hold of the stop signal of an adopted container
}

// container is one application container's adoption; false when it
// cannot adopt proxy-await, which a line says.
func (ad *adopter) container(c *manifest.Container) (adoptedContainer, bool) {
	p := ad.a
	ac := adoptedContainer{Index: c.Index, Name: c.Name, Line: c.Line}
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
			ad.out.fail(p.Pod, c, fmt.Sprintf("%s %ds leaves no time after the preStop (%s) for -S to shut the sidecar down: raise %s",
				p.GraceField, int(p.Grace/time.Second), invocation.PreStop(c), p.GraceField))
			return ac, false
		case budget < defaultShutdownMax:
			d := budget.Truncate(time.Second)
			flags = append(flags, "--shutdown-timeout", d.String())
			budget -= d
		default:
			budget -= defaultShutdownMax
		}
	}
	switch {
	case !ad.serves[c]:
	case budget/2 < minTermDelay:
		ad.out.warnContainer(p.Pod, c, p.GraceLine, fmt.Sprintf("no hold of the stop signal: %s %ds leaves too little after the preStop for one; raise it to give the drain time",
			p.GraceField, int(p.Grace/time.Second)))
	default:
		delay := min(maxTermDelay, (budget / 2).Truncate(time.Second))
		flags = append(flags, "--term-delay", delay.String(), "--drain-quiet", drainQuiet.String())
		ad.hold = max(ad.hold, invocation.PreStop(c)+delay)
		var more []string
		more, ac.Probes, ac.ProbePort = ad.probes(c, delay)
		flags = append(flags, more...)
	}
	if argv := invocation.Argv(c, ad.pl.images); len(argv) > 0 {
		if _, shell := invocation.ShellScript(argv); shell {
			flags = append(flags, "-g") // the shell and what it starts: one group
		}
	}
	ac.Flags = flags
	return ac, true
}
