// sidecars.go: what proxy-await needs of a pod's sidecars, and what they
// need for its flags to work: the presets, where each answers (a
// standalone Envoy's admin port from its own configuration), -S for a
// Job's classic sidecar, and the settings that turn an endpoint on or keep
// a classic sidecar up for the hold, in the form its release reads; and
// the pods that are a proxy's own, which inject leaves alone.

package inject

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/sidecar"
	"github.com/proxy-await/proxy-await/proxies"
)

// sidecars reads what proxy-await needs of the pod's sidecars: the presets,
// where each answers, whether -S is needed, and what each must be given to
// answer; a reason when nothing in the pod can make one answer.
func (ad *adopter) sidecars() string {
	m, p := ad.a.Sidecars, ad.a.Pod
	for _, s := range m.Sidecars {
		if !slices.Contains(ad.presets, s.Preset) {
			ad.presets = append(ad.presets, s.Preset)
		}
		if s.Nativeness != sidecar.Native && p.Job {
			ad.shutdown = true
		}
	}
	admin := map[*sidecar.Sidecar]int{}
	for _, s := range m.Sidecars {
		if s.PortInConfig && s.Container != nil {
			port, why := ad.adminPort(s.Container)
			if port == 0 {
				return why
			}
			admin[s] = port
		}
		if why := ad.turnOn(s, s.ReadyAt, "the "+s.Name+" sidecar never answers proxy-await's readiness probe"); why != "" {
			return why
		}
		if ad.shutdown && s.Nativeness != sidecar.Native {
			if why := ad.turnOn(s, s.ShutdownAt, "the "+s.Name+" sidecar would not take -S's shutdown"); why != "" {
				return why
			}
		}
	}
	ad.movedEndpoints(admin)
	return ""
}

// turnOn sets what turns a sidecar's endpoint on where it is off; a reason
// when nothing in the pod can.
func (ad *adopter) turnOn(s *sidecar.Sidecar, e sidecar.Endpoint, what string) string {
	if e.Unknown != nil || e.Off == "" {
		return ""
	}
	switch f := e.Fix; {
	case f == nil:
		return what + ": " + e.Off + "; nothing in the pod can turn it on: fix the sidecar, then inject again"
	case f.Annotation != "":
		ad.annotate(f.Annotation, f.Value)
	case s.Container != nil:
		if why := flagMissing(s, strings.TrimPrefix(f.Flag, "--")); why != "" {
			return what + ": " + e.Off + ", and " + why
		}
		ad.sidecarArgs(s.Container, f.Flag)
	}
	return ""
}

// flagMissing says why the sidecar container of s may not have its flag,
// by its image's release: "" when it has it. A release before the one
// that added the flag exits on it; so may an image whose tag does not
// name its release.
func flagMissing(s *sidecar.Sidecar, flag string) string {
	since, late := s.Since(flag)
	if !late {
		return ""
	}
	rel, ok := release(s.Container.Image)
	switch {
	case !ok:
		return fmt.Sprintf("its image %s does not say its release, and releases before %s have no --%s (they exit on it): pin the image to a release's tag, %s or later, and inject again",
			s.Container.Image, since, flag, since)
	case !rel.AtLeast(since):
		return fmt.Sprintf("its image is release %s, which has no --%s (it came in %s, and earlier releases exit on it): use %s or later",
			rel, flag, since, since)
	}
	return ""
}

// release is the release an image's tag names: 2.14.0, v2.14.0,
// 2.14.0-alpine; false for a tag that names none (latest, a digest alone).
func release(image string) (proxies.Version, bool) {
	ref, _, _ := strings.Cut(image, "@")
	i := strings.LastIndexByte(ref, ':')
	if i < 0 || i < strings.LastIndexByte(ref, '/') {
		return proxies.Version{}, false
	}
	tag := strings.TrimPrefix(ref[i+1:], "v")
	parts := strings.SplitN(tag, ".", 3)
	if len(parts) < 2 {
		return proxies.Version{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return proxies.Version{}, false
	}
	return proxies.Version{Major: major, Minor: minor}, true
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
// elsewhere than its preset says (admin: a standalone Envoy's, from its
// configuration): --port for the one preset that has an admin port, else
// each URL.
func (ad *adopter) movedEndpoints(admin map[*sidecar.Sidecar]int) {
	sidecars := ad.a.Sidecars.Sidecars
	readyAt := func(s *sidecar.Sidecar) int { return cmp.Or(admin[s], s.ReadyAt.Port) }
	shutdownAt := func(s *sidecar.Sidecar) int { return cmp.Or(admin[s], s.ShutdownAt.Port) }
	moved := false
	for _, s := range sidecars {
		moved = moved || readyAt(s) != 0 && readyAt(s) != s.Ready.Port ||
			ad.shutdown && shutdownAt(s) != 0 && shutdownAt(s) != s.Shutdown.Port
	}
	if !moved {
		return
	}
	if s := sidecars[0]; len(sidecars) == 1 && s.AdminPort && readyAt(s) == shutdownAt(s) {
		ad.urls = []string{"--port", strconv.Itoa(readyAt(s))}
		return
	}
	for _, s := range sidecars {
		ad.urls = append(ad.urls, "--ready-url", s.Ready.URL(cmp.Or(readyAt(s), s.Ready.Port)))
	}
	if ad.shutdown {
		for _, s := range sidecars {
			ad.urls = append(ad.urls, "--shutdown-url", s.Shutdown.URL(cmp.Or(shutdownAt(s), s.Shutdown.Port)))
		}
	}
}

// stopAfter gives each classic sidecar that would stop taking connections
// before the hold ends (proxy-stops-first) the setting that keeps it up
// long enough: an annotation of seconds, a field of its proxy
// configuration when the pod has none, a flag of its own that its release
// has. Where the pod asks some release for a native sidecar, a classic
// sidecar's setting is left out: Linkerd 2.15 to 2.19 refuse its wait with
// a native proxy.
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
			if why := flagMissing(s, st.Flag); why != "" {
				ad.out.warn(p.Pod, s.Container.Line, fmt.Sprintf("container %s gets no --%s, so the %s stops taking connections at the kubelet's SIGTERM, %s before the hold ends: %s",
					s.Container.Name, st.Flag, s.Name, ad.hold-s.StopAfter, why))
				continue
			}
			ad.sidecarArgs(s.Container, "--"+st.Flag+"="+s.StopValue(ad.hold))
		}
	}
}

// gatewayOf says whose proxy the pod runs as its workload, a gateway's,
// and which proxy: a container of an image that runs the proxy itself, or
// one of a gateway's images beside a container of the proxy's own image;
// "" when the pod is none.
func gatewayOf(p *manifest.Pod) (string, string) {
	for _, px := range proxies.All {
		runs := slices.ContainsFunc(p.Containers, func(c *manifest.Container) bool { return !c.Init && sidecar.ProxyOf(c) == px })
		for _, gw := range px.Gateways {
			for _, c := range p.Containers {
				if !c.Init && imageIs(c.Image, gw.Images) && (gw.Proxy || runs) {
					return gw.Name, px.Name
				}
			}
		}
	}
	return "", ""
}

// imageIs says whether image is of one of the repositories, matched by
// the end of its path.
func imageIs(image string, repos []string) bool {
	repo := manifest.Repository(image)
	return slices.ContainsFunc(repos, func(r string) bool { return repo == r || strings.HasSuffix(repo, "/"+r) })
}

// adminPort is the port of a standalone Envoy's admin API, from the
// configuration its command line gives: --config-yaml, or the file of -c
// (--config-path) where a ConfigMap of the input is mounted; 0 and why
// when the input does not say.
func (ad *adopter) adminPort(c *manifest.Container) (int, string) {
	words := append(c.Words(c.Command), c.Words(c.Args)...)
	var config, file string
	for i, w := range words {
		flag, value, joined := strings.Cut(w.Text, "=")
		if !joined {
			flag, value, joined = strings.Cut(w.Text, " ") // one word: "--config-yaml admin: ..."
		}
		if !joined && i+1 < len(words) {
			value = words[i+1].Text
		}
		switch flag {
		case "--config-yaml":
			config = value
		case "-c", "--config-path":
			file = value
		}
	}
	var tried []string
	for _, text := range []string{config, ad.configFile(c, file)} {
		if text == "" {
			continue
		}
		port, ok := envoyAdminPort(text)
		if ok {
			return port, ""
		}
		tried = append(tried, "its configuration has no admin port on an address the pod can reach")
	}
	why := "its configuration is not in the input"
	switch {
	case len(tried) > 0:
		why = tried[0]
	case file != "":
		why = "its configuration, " + file + ", is not in a ConfigMap of the input mounted there"
	}
	return 0, fmt.Sprintf("the Envoy sidecar (container %s) answers on the admin port of its own configuration, and %s: put the ConfigMap of its configuration in the input, or give proxy-await --port ADMIN_PORT by hand", c.Name, why)
}

// configFile is the text of the file at name in container c, when a
// ConfigMap of the input is mounted there; "" when not.
func (ad *adopter) configFile(c *manifest.Container, name string) string {
	if name == "" {
		return ""
	}
	p := ad.a.Pod
	for _, m := range c.Mounts {
		var key string
		switch rel, ok := strings.CutPrefix(name, strings.TrimSuffix(m.Path, "/")+"/"); {
		case m.SubPath != "" && name == m.Path:
			key = m.SubPath
		case m.SubPath == "" && ok:
			key = rel
		default:
			continue
		}
		i := slices.IndexFunc(p.Volumes, func(v manifest.Volume) bool { return v.Name == m.Name })
		if i < 0 || p.Volumes[i].ConfigMap == "" {
			continue
		}
		v := p.Volumes[i]
		if len(v.Items) > 0 {
			j := slices.IndexFunc(v.Items, func(it manifest.KeyPath) bool { return path.Clean(it.Path) == path.Clean(key) })
			if j < 0 {
				continue
			}
			key = v.Items[j].Key
		}
		if text, ok := ad.pl.in.ConfigMap(p.Namespace, v.ConfigMap, key); ok {
			return text
		}
	}
	return ""
}

// envoyAdminPort reads an Envoy bootstrap (YAML or JSON) for its admin
// API's port: admin.address.socket_address.port_value, on an address that
// 127.0.0.1 reaches.
func envoyAdminPort(text string) (int, bool) {
	var bootstrap struct {
		Admin struct {
			Address struct {
				SocketAddress struct {
					Address   string `yaml:"address"`
					PortValue int    `yaml:"port_value"`
				} `yaml:"socket_address"`
			} `yaml:"address"`
		} `yaml:"admin"`
	}
	if len(text) > 1<<20 || yaml.Unmarshal([]byte(text), &bootstrap) != nil {
		return 0, false
	}
	sa := bootstrap.Admin.Address.SocketAddress
	switch sa.Address {
	case "127.0.0.1", "0.0.0.0", "::":
	default:
		return 0, false
	}
	return sa.PortValue, sa.PortValue > 0 && sa.PortValue < 65536
}
