// presets.go: the admin endpoints of each proxy that --proxy names, and the
// --proxy value itself, a list of them.

package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/internal/hint"
)

// preset is a proxy's admin endpoints. consul's shutdown port is the graceful
// port that consul-k8s gives consul-dataplane (its
// connectInject.sidecarProxy.lifecycle.defaultGracefulPort); consul-dataplane
// run by hand defaults to 20300.
type preset struct {
	port     int    // default admin port; 0 when --port does not apply
	ready    string // readiness URL, with %d for the port
	shutdown string // shutdown URL, with %d for the port
}

var presets = map[string]preset{
	"linkerd":  {port: 4191, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/shutdown"},
	"istio":    {ready: "http://127.0.0.1:15021/healthz/ready", shutdown: "http://127.0.0.1:15020/quitquitquit"},
	"envoy":    {port: 15000, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/quitquitquit"},
	"cloudsql": {ready: "http://127.0.0.1:9090/startup", shutdown: "http://127.0.0.1:9091/quitquitquit"},
	"dapr":     {ready: "http://127.0.0.1:3500/v1.0/healthz/outbound", shutdown: "http://127.0.0.1:3500/v1.0/shutdown"},
	"consul":   {ready: "http://127.0.0.1:19000/ready", shutdown: "http://127.0.0.1:20600/graceful_shutdown"},
	"none":     {},
}

// presetNames is the presets in the order help and hints list them.
var presetNames = []string{"linkerd", "istio", "envoy", "cloudsql", "dapr", "consul", "none"}

const presetHint = "choose linkerd, istio, envoy, cloudsql, dapr, consul or none; several with commas, as in istio,cloudsql"

func presetURL(format string, port int) string {
	if strings.Contains(format, "%d") {
		return fmt.Sprintf(format, port)
	}
	return format
}

// proxyList is the --proxy flag: preset names, comma-separated on the
// command line too. The first name given replaces the default; a name given
// twice counts once, so that no proxy is awaited or shut down twice; "none"
// stands alone.
type proxyList struct {
	names *[]string
	set   bool
}

func (p *proxyList) String() string            { return strings.Join(*p.names, ",") }
func (p *proxyList) Type() string              { return "NAME[,NAME]" }
func (p *proxyList) Set(s string) error        { return addItems(p, s, p.splitsOnCommandLine()) }
func (p *proxyList) splitsOnCommandLine() bool { return true }
func (p *proxyList) add(name string) error {
	if !p.set {
		*p.names, p.set = nil, true
	}
	if isASCII(name) { // "Istio" is istio; "ıstio" is not
		name = strings.ToLower(name)
	}
	if _, ok := presets[name]; !ok {
		return hint.New(fmt.Errorf("unknown proxy %s", shown(name)), presetHint)
	}
	if !slices.Contains(*p.names, name) {
		*p.names = append(*p.names, name)
	}
	if len(*p.names) > 1 && slices.Contains(*p.names, "none") {
		return hint.New(errors.New("none cannot be combined with other proxies"), "give none alone, or only the proxies to await")
	}
	return nil
}

// fixedPorts says where a preset that takes no --port listens: "readiness
// on 15021, shutdown on 15020".
func fixedPorts(p preset) string {
	ready, _ := url.Parse(p.ready)
	shut, _ := url.Parse(p.shutdown)
	if ready.Port() == shut.Port() {
		return "readiness and shutdown on " + ready.Port()
	}
	return "readiness on " + ready.Port() + ", shutdown on " + shut.Port()
}

// Preset is a proxy's admin endpoints as --proxy NAME sets them, with the
// default port.
type Preset struct {
	Port     int    // the admin port that --port replaces; 0 when it does not apply
	Ready    string // readiness URL; "" for none
	Shutdown string // shutdown URL; "" for none
}

// LookupPreset is the preset called name.
func LookupPreset(name string) (Preset, bool) {
	p, ok := presets[name]
	return Preset{Port: p.port, Ready: presetURL(p.ready, p.port), Shutdown: presetURL(p.shutdown, p.port)}, ok
}

// ProxyURL is one of the readiness or shutdown URLs with what the
// configuration says of the proxy behind it, for the shutdown to pair each
// shutdown URL with its proxy's readiness URLs.
type ProxyURL struct {
	URL    string
	Proxy  string // the proxy that serves it (a preset, or scuttle's Envoy); "" when the configuration does not say
	Preset string // that proxy's preset, whose hints name its likely causes; "" when none
	ByHand bool   // given by --ready-url, --shutdown-url or their variables, not by a preset or scuttle's Envoy
}

// ProxyURLs says what the configuration knows of the proxy behind each of
// urls, its readiness or shutdown URLs.
func (c *Config) ProxyURLs(urls []string) []ProxyURL {
	out := make([]ProxyURL, len(urls))
	for i, u := range urls {
		_, owned := c.owner[u]
		out[i] = ProxyURL{URL: u, Proxy: c.proxyOf(u), Preset: c.PresetOf(u), ByHand: !owned}
	}
	return out
}

// proxyOf names the proxy that serves rawURL, one of the readiness or
// shutdown URLs, as the owner map does: the preset or scuttle's variable
// that supplied it, or, for a URL given by hand, the only preset given;
// "" when the configuration does not say.
func (c *Config) proxyOf(rawURL string) string {
	if p, ok := c.owner[rawURL]; ok {
		return p
	}
	return c.PresetOf(rawURL)
}

// FromPreset is the preset that supplied rawURL, one of the readiness or
// shutdown URLs; "" when --ready-url, --shutdown-url or a variable did.
func (c *Config) FromPreset(rawURL string) string { return c.fromPreset[rawURL] }

// PresetOf is the preset whose proxy serves rawURL, one of the readiness or
// shutdown URLs: the preset that supplied it, or the only preset given;
// "" when the configuration does not say.
func (c *Config) PresetOf(rawURL string) string {
	if p, ok := c.fromPreset[rawURL]; ok {
		return p
	}
	if len(c.Proxies) == 1 && c.Proxies[0] != "none" {
		return c.Proxies[0]
	}
	return ""
}
