// presets.go: --proxy, a list of presets, each a proxy of the proxy table
// (package proxies) or none; what the help says of them.

package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/proxies"
)

// none is the preset without a proxy: no readiness wait, no shutdown.
const none = "none"

// defaultPreset is --proxy's default, read when it is needed: a package
// variable would be set at every start.
func defaultPreset() string { return proxies.Default.Preset }

// presetNames are the presets in the order help and hints list them: the
// proxy table's, then none.
func presetNames() []string {
	names := make([]string, 0, len(proxies.All)+1)
	for _, p := range proxies.All {
		names = append(names, p.Preset)
	}
	return append(names, none)
}

// presetHint is the hint for a --proxy that names no preset.
func presetHint() string {
	var together []string
	for _, p := range proxies.Together {
		together = append(together, p.Preset)
	}
	return "choose " + orList(presetNames()) + "; several with commas, as in " + strings.Join(together, ",")
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
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
	if isASCII(name) { // an ASCII capital folds; a dotless ı is no i
		name = strings.ToLower(name)
	}
	if proxies.Lookup(name) == nil && name != none {
		return hint.New(fmt.Errorf("unknown proxy %s", shown(name)), presetHint())
	}
	if !slices.Contains(*p.names, name) {
		*p.names = append(*p.names, name)
	}
	if len(*p.names) > 1 && slices.Contains(*p.names, none) {
		return hint.New(errors.New("none cannot be combined with other proxies"), "give none alone, or only the proxies to await")
	}
	return nil
}

// fixedPorts says where a preset that takes no --port listens: "readiness
// on 15021, shutdown on 15020".
func fixedPorts(p *proxies.Proxy) string {
	ready, shut := strconv.Itoa(p.Ready.Port), strconv.Itoa(p.Shutdown.Port)
	if ready == shut {
		return "readiness and shutdown on " + ready
	}
	return "readiness on " + ready + ", shutdown on " + shut
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
	p := proxies.Lookup(name)
	if p == nil {
		return Preset{}, name == none
	}
	ready, shutdown := p.URLs(0)
	return Preset{Port: p.DefaultPort(), Ready: ready, Shutdown: shutdown}, true
}

// portUsage is --port's help: the presets it applies to, with their
// default ports.
func portUsage() string {
	var presets []string
	for _, p := range proxies.All {
		if p.AdminPort {
			presets = append(presets, fmt.Sprintf("%s (default %d)", p.Preset, p.DefaultPort()))
		}
	}
	return "admin `port` of the " + andList(presets) + " presets"
}

// andList is "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
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
	if len(c.Proxies) == 1 && c.Proxies[0] != none {
		return c.Proxies[0]
	}
	return ""
}
