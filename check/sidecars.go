// sidecars.go: which proxies a pod runs beside its containers, whether each
// is a native sidecar, where it answers, and how long it keeps taking
// connections once the pod is deleted; from the facts tables, the pod's
// annotations and labels, its namespace when the input has it, and the
// cluster's releases as --versions states them.

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
	from      string // how it was recognised, for messages
	native    nativeness
	nativeWhy string // what makes it native, or the release that would
	flip      string // when it depends: the --versions that would settle it
	container *container
	ready     endpoint
	shutdown  endpoint
	stop      time.Duration // how long it takes new connections once the pod is deleted
	stopWhy   string        // what sets stop, for messages; "" when not known
	stopFix   string        // what to raise to lengthen it
	stopInt   bool          // stopFix takes whole seconds, not a duration
}

// stopValue is d as stopFix takes it.
func (s *sidecar) stopValue(d time.Duration) string {
	if s.stopInt {
		return strconv.Itoa(int((d + time.Second - 1) / time.Second))
	}
	return dur(d)
}

// endpoint is where a sidecar answers: port 0 is any (not in the manifest);
// off says why it does not answer there, "" when it does.
type endpoint struct {
	port int
	path string
	off  string
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
			s.native, s.nativeWhy, s.flip = nativeOf(p, px, versions)
			m.sidecars = append(m.sidecars, s)
		case why != "":
			m.absent = append(m.absent, absence{px, why})
		}
	}
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

// injected says whether px's injector adds its sidecar to p, and from what
// ("annotation linkerd.io/inject: enabled"); or, if the pod is known to have
// none, why.
func injected(p *pod, px *proxy) (from, why string) {
	if v, ok := p.label(px.inject); ok {
		switch {
		case slices.Contains(px.injectOn, v):
			return fmt.Sprintf("%s: %q", px.inject, v), ""
		case slices.Contains(px.injectOff, v):
			return "", fmt.Sprintf("%s: %q", px.inject, v)
		}
	}
	if px == &istio {
		if v, ok := p.label(istioAmbient); ok && v == "ambient" {
			return "", fmt.Sprintf("%s: ambient, Istio's mode without sidecars", istioAmbient)
		}
		if v, ok := p.nsMeta(istioAmbient); ok && v == "ambient" {
			return "", fmt.Sprintf("namespace %s has %s: ambient, Istio's mode without sidecars", p.ns.name, istioAmbient)
		}
		switch v, ok := p.nsMeta(istioNamespaceInject); {
		case ok && v == "enabled":
			return fmt.Sprintf("namespace %s has %s: enabled", p.ns.name, istioNamespaceInject), ""
		case ok && v == "disabled":
			return "", fmt.Sprintf("namespace %s has %s: disabled", p.ns.name, istioNamespaceInject)
		}
		if _, ok := p.nsMeta(istioRevision); ok {
			return fmt.Sprintf("namespace %s has %s", p.ns.name, istioRevision), ""
		}
		return "", ""
	}
	if px.podOnly {
		return "", fmt.Sprintf("no %s: %q on the pod, which its injector needs", px.inject, px.injectOn[0])
	}
	if v, ok := p.nsMeta(px.inject); ok && slices.Contains(px.injectOn, v) {
		return fmt.Sprintf("namespace %s has %s: %s", p.ns.name, px.inject, v), ""
	}
	return "", ""
}

// nativeOf says whether px's injected sidecar is native in p: the pod's
// annotation decides, else the proxy's default in the releases stated.
func nativeOf(p *pod, px *proxy, versions map[string]config.Version) (nativeness, string, string) {
	for _, key := range px.nativeKeys {
		if v, ok := p.annotations[key]; ok {
			if b, err := strconv.ParseBool(v); err == nil {
				if b {
					return native, fmt.Sprintf("%s: %q", key, v), ""
				}
				return classic, "", ""
			}
		}
	}
	if px.nativeSince == (config.Version{}) {
		return classic, "", ""
	}
	release := fmt.Sprintf("%s %s", px.name, px.nativeSince)
	if px.nativeKubeSince != (config.Version{}) {
		release += " on Kubernetes " + px.nativeKubeSince.String()
	}
	why := "the default from " + release
	v, ok := versions[px.preset]
	switch {
	case !ok:
		flip := fmt.Sprintf("%s=%s", px.preset, px.nativeSince)
		if px.nativeKubeSince != (config.Version{}) {
			flip += ",kubernetes=" + px.nativeKubeSince.String()
		}
		return depends, release, flip
	case !v.AtLeast(px.nativeSince):
		return classic, "", ""
	case px.nativeKubeSince == (config.Version{}):
		return native, why, ""
	}
	switch k, ok := versions["kubernetes"]; {
	case !ok:
		return depends, release, "kubernetes=" + px.nativeKubeSince.String()
	case !k.AtLeast(px.nativeKubeSince):
		return classic, "", ""
	}
	return native, why, ""
}

// endpoints fills in where s answers, as the pod's annotations or the
// sidecar's own flags move it.
func endpoints(p *pod, s *sidecar, versions map[string]config.Version) {
	s.ready = endpoint{port: s.readyPort, path: s.readyPath}
	s.shutdown = endpoint{port: s.shutdownPort, path: s.shutdownPath}
	if s.adminPortKey != "" {
		if n, ok := portAnnotation(p, s.adminPortKey); ok {
			s.ready.port, s.shutdown.port = n, n
		}
	}
	if s.shutdownPorts != "" {
		if n, ok := portAnnotation(p, s.shutdownPorts); ok {
			s.shutdown.port = n
		}
	}
	switch s.proxy {
	case &linkerd:
		v, set := p.annotations[s.shutdownKey]
		switch {
		case set && v == s.shutdownOn:
		case set:
			s.shutdown.off = fmt.Sprintf("the pod has %s: %q", s.shutdownKey, v)
		case versions["linkerd"] != (config.Version{}) && !versions["linkerd"].AtLeast(s.shutdownOffSince):
		default:
			s.shutdown.off = fmt.Sprintf("Linkerd answers it with 404 unless the pod has %s: %s (off by default since Linkerd %s)",
				s.shutdownKey, s.shutdownOn, s.shutdownOffSince)
		}
	case &consul:
		if v := p.annotations[consulShutdownPathKey]; v != "" {
			s.shutdown.path = v
		}
		if v, ok := p.annotations[s.shutdownKey]; ok {
			if b, err := strconv.ParseBool(v); err == nil && !b {
				s.shutdown.off = fmt.Sprintf("the pod has %s: %q, which turns consul-dataplane's lifecycle endpoints off", s.shutdownKey, v)
			}
		}
	case &cloudsql:
		cloudsqlEndpoints(s)
	}
}

func portAnnotation(p *pod, key string) (int, bool) {
	n, err := strconv.Atoi(p.annotations[key])
	return n, err == nil && n > 0 && n < 65536
}

// cloudsqlEndpoints reads the Cloud SQL Auth Proxy's flags, from its args
// and CSQL_PROXY_* variables: /startup answers only with --health-check,
// /quitquitquit only with --quitquitquit, on --http-port and --admin-port.
func cloudsqlEndpoints(s *sidecar) {
	c := s.container
	if strings.Contains(c.image, cloudsqlV1) {
		s.ready.off = "version 1 of the Cloud SQL proxy (" + cloudsqlV1 + ") has no /startup on 9090 and no /quitquitquit: use v2, gcr.io/cloud-sql-connectors/cloud-sql-proxy, with --health-check --quitquitquit"
		s.shutdown.off = s.ready.off
		return
	}
	if !cloudsqlBool(c, "health-check") {
		s.ready.off = "the proxy serves /startup only when started with --health-check (add it to its args)"
	}
	if !cloudsqlBool(c, "quitquitquit") {
		s.shutdown.off = "the proxy serves /quitquitquit only when started with --quitquitquit (add it to its args)"
	}
	if v, ok := cloudsqlFlag(c, "http-port"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			s.ready.port = n
		}
	}
	if v, ok := cloudsqlFlag(c, "admin-port"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			s.shutdown.port = n
		}
	}
}

// cloudsqlFlag is a flag of the Cloud SQL Auth Proxy that takes a value:
// --name V, --name=V, or its variable.
func cloudsqlFlag(c *container, name string) (string, bool) {
	for i, a := range c.args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(c.args) {
			return c.args[i+1], true
		}
	}
	return c.getenv(cloudsqlEnv + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
}

// cloudsqlBool is a boolean flag of the Cloud SQL Auth Proxy: --name alone,
// --name=BOOL, or its variable. The word after --name is not its value.
func cloudsqlBool(c *container, name string) bool {
	for _, a := range c.args {
		if a == "--"+name {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
	}
	v, _ := c.getenv(cloudsqlEnv + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// stopTime fills in how long s keeps taking new connections after the pod
// is deleted, where the facts say.
func stopTime(p *pod, s *sidecar) {
	var preStop time.Duration
	if s.container != nil {
		preStop = s.container.preStop
	}
	switch s.proxy {
	case &linkerd:
		if s.container != nil {
			s.stop, s.stopWhy = preStop, fmt.Sprintf("its preStop, %s", preStop)
			s.stopFix = "its preStop sleep"
			return
		}
		n, err := strconv.Atoi(p.annotations[s.stopKey])
		if err != nil || n < 0 {
			n = int(s.stopDefault / time.Second)
			s.stopWhy = fmt.Sprintf("%s, default %d", s.stopKey, n)
		} else {
			s.stopWhy = fmt.Sprintf("%s: %q", s.stopKey, p.annotations[s.stopKey])
		}
		s.stop, s.stopFix, s.stopInt = time.Duration(n)*time.Second, s.stopKey, true
	case &istio:
		field, d := "terminationDrainDuration", s.stopDefault
		if s.native == native {
			field, d = "drainDuration", istioNativeDrain
		}
		if v, ok := istioProxyConfig(p.annotations[s.stopKey], field); ok {
			d = v
			s.stopWhy = fmt.Sprintf("%s %s in %s", field, v, s.stopKey)
		} else {
			s.stopWhy = fmt.Sprintf("%s in %s, default %s", field, s.stopKey, d)
		}
		s.stop, s.stopFix = preStop+d, field+" in "+s.stopKey
	case &dapr:
		grace := s.stopDefault
		if n, err := strconv.Atoi(p.annotations[s.stopKey]); err == nil && n >= 0 {
			grace = time.Duration(n) * time.Second
			s.stopWhy = fmt.Sprintf("%s: %q", s.stopKey, p.annotations[s.stopKey])
		} else {
			s.stopWhy = fmt.Sprintf("%s, default %d", s.stopKey, int(grace/time.Second))
		}
		if d, err := time.ParseDuration(p.annotations[daprBlockShutdown]); err == nil && d > 0 {
			grace += d
			s.stopWhy += fmt.Sprintf(", after %s: %q", daprBlockShutdown, p.annotations[daprBlockShutdown])
		}
		s.stop, s.stopFix, s.stopInt = preStop+grace, s.stopKey, true
	case &cloudsql:
		// cmd/root.go: --min-sigterm-delay, "the number of seconds to
		// accept new connections after receiving a TERM signal", default 0.
		var delay time.Duration
		if v, ok := cloudsqlFlag(s.container, "min-sigterm-delay"); ok {
			delay, _ = time.ParseDuration(v)
		}
		s.stop = preStop + delay
		s.stopWhy = fmt.Sprintf("its preStop %s + --min-sigterm-delay %s", preStop, delay)
		s.stopFix = "its --min-sigterm-delay"
	}
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
