package proxies

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOrder(t *testing.T) {
	assert.True(t, Version{2, 20}.AtLeast(Version{2, 20}))
	assert.True(t, Version{3, 0}.AtLeast(Version{2, 20}))
	assert.False(t, Version{2, 19}.AtLeast(Version{2, 20}))
	assert.False(t, Version{1, 99}.AtLeast(Version{2, 0}))
	assert.Equal(t, "2.20", Version{2, 20}.String())
}

// Both orders hold every proxy once, and each preset names one proxy.
func TestOrdersHoldEveryProxy(t *testing.T) {
	assert.ElementsMatch(t, All, InPods)
	seen := map[string]bool{}
	for _, p := range All {
		assert.False(t, seen[p.Preset], "preset %s twice", p.Preset)
		seen[p.Preset] = true
		assert.Same(t, p, Lookup(p.Preset))
		assert.NotEqual(t, "none", p.Preset, "none is the preset without a proxy")
	}
	assert.Nil(t, Lookup("none"))
}

// --versions takes the releases whose facts differ: today Kubernetes,
// Linkerd and Istio.
func TestReleaseNames(t *testing.T) {
	assert.Equal(t, []string{"kubernetes", "linkerd", "istio"}, ReleaseNames())
}

func TestPresetURLs(t *testing.T) {
	ready, shutdown := linkerd.URLs(0)
	assert.Equal(t, "http://127.0.0.1:4191/ready", ready)
	assert.Equal(t, "http://127.0.0.1:4191/shutdown", shutdown)
	ready, shutdown = linkerd.URLs(4192)
	assert.Equal(t, "http://127.0.0.1:4192/ready", ready)
	assert.Equal(t, "http://127.0.0.1:4192/shutdown", shutdown)
	ready, shutdown = istio.URLs(4192) // fixed ports
	assert.Equal(t, "http://127.0.0.1:15021/healthz/ready", ready)
	assert.Equal(t, "http://127.0.0.1:15020/quitquitquit", shutdown)
	assert.Equal(t, 15000, envoy.DefaultPort())
	assert.Zero(t, consul.DefaultPort())
}

var (
	number  = regexp.MustCompile(`\b\d{4,5}\b`)
	urlPath = regexp.MustCompile(`(?:^|[ :(0-9T])(/[a-z_./0-9]+)`)
)

// A hint or message that names a port or a path of its proxy names one of
// the facts beside it: a port changed in the facts cannot leave an old one
// in a hint.
func TestHintsNameTheFacts(t *testing.T) {
	for _, p := range All {
		texts := []string{p.RefusedHint, p.MissingHint, p.Off.Hint}
		for _, r := range p.Retired {
			texts = append(texts, r.Why)
		}
		ports := []int{p.Ready.Port, p.Shutdown.Port, p.Ready.OwnPort, p.Shutdown.OwnPort}
		paths := []string{p.Ready.Path, p.Shutdown.Path}
		for _, text := range texts {
			for _, n := range number.FindAllString(text, -1) {
				port, _ := strconv.Atoi(n)
				assert.Contains(t, ports, port, "%s: %q", p.Name, text)
			}
			for _, m := range urlPath.FindAllStringSubmatch(text, -1) {
				if strings.Contains(m[1], ".") && !strings.HasPrefix(m[1], "/v1") {
					continue // an image, not a path
				}
				assert.True(t, slices.Contains(paths, m[1]), "%s: %q names %s", p.Name, text, m[1])
			}
		}
	}
}

// Each command that stops a sidecar is matched as the facts say.
func TestStoppedByCommand(t *testing.T) {
	assert.True(t, istio.StoppedByCommand("pilot-agent", []string{"request", "POST", "quitquitquit"}))
	assert.True(t, istio.StoppedByCommand("pilot-agent", []string{"request", "POST", "http://127.0.0.1:15020/quitquitquit"}))
	assert.False(t, istio.StoppedByCommand("pilot-agent", []string{"request", "POST", "drain"}))
	assert.True(t, istio.StoppedByCommand("scuttle", nil))
	assert.True(t, linkerd.StoppedByCommand("linkerd-await", []string{"-S", "--", "app"}))
	assert.False(t, linkerd.StoppedByCommand("linkerd-await", []string{"--", "app"}))
	assert.False(t, linkerd.StoppedByCommand("pilot-agent", []string{"quitquitquit"}))
	assert.False(t, dapr.StoppedByCommand("scuttle", nil))
}

// GoBool reads what strconv.ParseBool reads, and nothing else.
func TestGoBoolIsParseBool(t *testing.T) {
	for _, v := range append(append(slices.Clone(GoBool.True), GoBool.False...), "yes", "on", "TrUe", " true", "") {
		want, err := strconv.ParseBool(v)
		got, ok := GoBool.Read(v)
		assert.Equal(t, err == nil, ok, "%q", v)
		assert.Equal(t, want, got, "%q", v)
	}
}

// A switch that its injector folds is read trimmed and in any case; one
// it does not fold, exactly.
func TestFoldedSwitch(t *testing.T) {
	in := Injection{Key: "k", On: []string{"true", "yes"}, Off: []string{"false"}, Fold: true}
	for _, v := range []string{"true", "True", " YES\n", "yes"} {
		on, off := in.Value(v)
		assert.True(t, on && !off, "%q", v)
	}
	on, off := in.Value("FALSE")
	assert.True(t, off && !on)
	in.Fold = false
	on, _ = in.Value("True")
	assert.False(t, on)
	b := Boolean{True: []string{"on"}, Fold: true, Else: true}
	v, ok := b.Read(" On")
	assert.True(t, v && ok)
	v, ok = b.Read("nope")
	assert.True(t, !v && ok, "with Else, any other value is false")
}
