// probes.go: the kubelet's probes of a serving container, moved to
// proxy-await's --probe-port so that the drain never counts them as
// traffic, or a line that says why one stays; the port they move to, free
// in the pod, and with hostNetwork free on the node; and the names inject
// adds to a pod under, none of them the pod's own.

package inject

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/proxies"
)

// probeMove is a probe that moves to proxy-await's --probe-port.
type probeMove struct {
	Kind    string // readinessProbe, livenessProbe or startupProbe
	Handler string // httpGet or tcpSocket, as it was
	Port    int    // --probe-port
	Path    string // what proxy-await serves it on: /ready, /live, /startup
}

// servedAt is the path proxy-await answers each kind of probe on.
var servedAt = map[string]string{"readinessProbe": "/ready", "livenessProbe": "/live", "startupProbe": "/startup"}

// probes moves c's probes of its own ports to --probe-port: the readiness
// probe's check (else the liveness or startup probe's) becomes
// --app-probe, and every probe that checks the same moves, a TCP check
// to the HTTP GET proxy-await answers. A readiness or liveness probe that
// stays keeps the drain busy, and a line says why it stays: a check of
// its own (/live answers from --app-probe, and a liveness probe that
// failed whenever the pod is not ready would restart a pod that is only
// busy), gRPC or HTTP headers (--app-probe has neither), a port it names
// that the container does not declare. A probe of another host is no
// traffic to the pod; a startup probe stops once it has succeeded. It
// gives the flags, the moves, and the port to declare (hostNetwork).
func (ad *adopter) probes(c *manifest.Container, delay time.Duration) ([]string, []probeMove, int) {
	check := map[string]string{}
	for _, pr := range c.Probes {
		if v, _ := appCheck(c, pr); v != "" {
			if _, ok := check[pr.Kind]; !ok {
				check[pr.Kind] = v
			}
		}
	}
	app := cmp.Or(check["readinessProbe"], check["livenessProbe"], check["startupProbe"])
	p := ad.a.Pod
	stays := func(pr manifest.Probe, why string) {
		if pr.Kind == "startupProbe" || pr.Host != "" {
			return
		}
		ad.out.warnContainer(p, c, pr.Port.Line, fmt.Sprintf("its %s (%s %s) stays where it is: %s; the kubelet's probes of it keep the drain from seeing quiet, and the hold then runs to --term-delay %s",
			pr.Kind, pr.Handler, cmp.Or(pr.Port.Text, "?"), why, delay))
	}
	var moving []manifest.Probe
	for _, pr := range c.Probes {
		v, why := appCheck(c, pr)
		switch {
		case v == "":
			stays(pr, why)
		case v != app:
			stays(pr, fmt.Sprintf("it checks %s, and proxy-await's %s answers from --app-probe %s, the readiness check, so that moved there it would restart the pod whenever it is not ready", v, servedAt[pr.Kind], app))
		default:
			moving = append(moving, pr)
		}
	}
	if app == "" {
		return nil, nil, 0
	}
	port, declare := 0, 0
	if p.HostNetwork {
		port = ad.pl.hostPorts.take(p, ad.used)
		declare = port
	} else {
		port = ad.freePort()
	}
	if port == 0 {
		for _, pr := range moving {
			stays(pr, "no port is free for --probe-port")
		}
		return nil, nil, 0
	}
	ad.used[port] = true
	var moves []probeMove
	for _, pr := range moving {
		moves = append(moves, probeMove{Kind: pr.Kind, Handler: pr.Handler, Port: port, Path: servedAt[pr.Kind]})
	}
	return []string{"--probe-port", strconv.Itoa(port), "--app-probe", app}, moves, declare
}

// appCheck is what a probe checks, as --app-probe takes it: the URL of an
// HTTP probe, tcp:PORT of a TCP one; "" for one that cannot move, and why.
func appCheck(c *manifest.Container, pr manifest.Probe) (string, string) {
	switch {
	case pr.Host != "":
		return "", "it probes host " + pr.Host + ", not the pod"
	case pr.Headers:
		return "", "it sends HTTP headers, and --app-probe sends none"
	case pr.Handler == "grpc":
		return "", "--app-probe has no gRPC check"
	}
	port, ok := c.PortNumber(pr)
	if !ok || port <= 0 || port > 65535 {
		return "", "its port " + pr.Port.Text + " is not one the container declares"
	}
	switch pr.Handler {
	case "httpGet":
		scheme := "http"
		if strings.EqualFold(pr.Scheme, "HTTPS") {
			scheme = "https"
		}
		return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, cmp.Or(pr.Path, "/")), ""
	case "tcpSocket":
		return fmt.Sprintf("tcp:%d", port), ""
	}
	return "", "it is a " + pr.Handler + " probe"
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
			if n, ok := c.PortNumber(pr); ok {
				used[n] = true
			}
		}
	}
	for _, px := range proxies.All {
		used[px.Ready.Port], used[px.Shutdown.Port], used[px.Shutdown.OwnPort] = true, true, true
	}
	return used
}

// probePorts are where --probe-port is looked for in a pod of its own
// network, the first that nothing in the pod uses.
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

// freePort is a port for --probe-port that nothing in the pod uses, 0
// when there is none.
func (ad *adopter) freePort() int {
	for _, p := range probePorts() {
		if !ad.used[p] {
			return p
		}
	}
	return 0
}

// hostPorts are the ports of the nodes' own network that the input's
// hostNetwork pods take, and a --probe-port for each such pod that none of
// them takes. The port is chosen from the pod's name, so that each
// inject of it chooses the same, in a range that kube-proxy's NodePorts
// (30000 to 32767) and the ephemeral ports of outgoing connections (32768
// and up) stay out of; and it is declared as the container's port, which
// with hostNetwork is a host port: the scheduler never puts two pods that
// declare one port on one node, so one adopted elsewhere cannot collide
// with it either.
type hostPorts struct {
	taken map[int]bool
}

// The range a hostNetwork pod's --probe-port is chosen from.
const hostProbeFirst, hostProbePorts = 20000, 10000

// add takes the ports that p declares or probes, when it is a
// hostNetwork pod.
func (h *hostPorts) add(p *manifest.Pod) {
	if !p.HostNetwork {
		return
	}
	for _, c := range p.Containers {
		for _, n := range c.PortNumbers {
			h.taken[n] = true
		}
		for _, pr := range c.Probes {
			if n, ok := c.PortNumber(pr); ok {
				h.taken[n] = true
			}
		}
	}
}

// take is the --probe-port of the hostNetwork pod p, whose own ports are
// used; 0 when the range is full.
func (h *hostPorts) take(p *manifest.Pod, used map[int]bool) int {
	f := fnv.New32a()
	fmt.Fprintf(f, "%s/%s/%s", p.Namespace, p.Kind, p.Name)
	start := int(f.Sum32() % hostProbePorts)
	for i := range hostProbePorts {
		port := hostProbeFirst + (start+i)%hostProbePorts
		if !h.taken[port] && !used[port] {
			h.taken[port] = true
			return port
		}
	}
	return 0
}

// names are what inject adds to a pod under: the emptyDir volume, where
// the adopted containers mount it (the binary is proxy-await in it), the
// init container that installs it, and the name of a probe port it
// declares.
type names struct {
	Volume, Mount, Init, Port string
}

// binary is proxy-await's path in an adopted container.
func (n names) binary() string { return n.Mount + "/proxy-await" }

// defaultNames are the names a pod gets when it has none of them.
var defaultNames = names{Volume: "proxy-await", Mount: "/proxy-await", Init: "proxy-await-install", Port: "proxy-await"}

// choose gives each name the first of NAME, NAME-2, ... NAME-9 that the
// pod does not have: a volume, a container, a port of that name, a mount
// at, above or below that path. A pod that has them all is refused, and
// the reason says so.
func (n *names) choose(p *manifest.Pod) string {
	if slices.ContainsFunc(p.Containers, func(c *manifest.Container) bool {
		return c.Init && c.Name == n.Init && len(c.Args) > 0 && c.Args[0].Text == "--install"
	}) {
		return "" // inject's own, written before it kept a record of its changes
	}
	var volumes, containers, ports []string
	var mounts []string
	for _, v := range p.Volumes {
		volumes = append(volumes, v.Name)
	}
	for _, c := range p.Containers {
		containers = append(containers, c.Name)
		for _, port := range c.Ports {
			ports = append(ports, port.Name)
		}
		for _, m := range c.Mounts {
			mounts = append(mounts, m.Path)
		}
	}
	overlaps := func(path string) bool {
		return slices.ContainsFunc(mounts, func(m string) bool {
			m = strings.TrimSuffix(m, "/")
			return m == path || strings.HasPrefix(m, path+"/") || strings.HasPrefix(path, m+"/")
		})
	}
	for _, f := range []struct {
		what  string
		name  *string
		taken func(string) bool
	}{
		{"volume", &n.Volume, func(s string) bool { return slices.Contains(volumes, s) }},
		{"mount path", &n.Mount, overlaps},
		{"init container", &n.Init, func(s string) bool { return slices.Contains(containers, s) }},
		{"port", &n.Port, func(s string) bool { return slices.Contains(ports, s) }},
	} {
		base := *f.name
		for i := 1; f.taken(*f.name); i++ {
			if i == 9 {
				return fmt.Sprintf("the pod has a %s called %s and each of %s-2 to %s-9, which inject would add: it adds no second one, and changes nothing of the pod", f.what, base, base, base)
			}
			*f.name = fmt.Sprintf("%s-%d", base, i+1)
		}
	}
	return ""
}
