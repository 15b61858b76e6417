package policy

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/proxies"
)

// The differential test: objects generated from a stream of choices, each
// judged by the policy's CEL (cel-go, as the API server runs it) and by
// check, with the same --versions. The policy never refuses what check
// passes: every rule it refuses an object for is an error check finds in
// that object alone, unless check finds flags that proxy-await would
// refuse at start (which the policy leaves to check), and then judges
// nothing else of that container.

// chooser makes a generator's choices from bytes: a fuzzer's input, or a
// seeded random source's. Past its bytes every choice is the first.
type chooser struct{ data []byte }

// pick is a choice of n.
func (c *chooser) pick(n int) int {
	if len(c.data) == 0 || n <= 1 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % n
}

// maybe is true one time in n.
func (c *chooser) maybe(n int) bool { return c.pick(n) == 0 }

// one is one of items.
func one[T any](c *chooser, items ...T) T { return items[c.pick(len(items))] }

// releasesOf are the --versions the objects are judged with: none, classic
// and native releases, and the settings of whole meshes.
var releasesOf = []string{
	"",
	"linkerd=2.19,istio=1.26,kubernetes=1.32",
	"linkerd=2.20,istio=1.27,kubernetes=1.33",
	"linkerd=2.20+classic,istio=1.26+native,kubernetes=1.33,dapr=native,consul=native",
	"istio=1.27+classic,kubernetes=1.33,consul=classic",
}

// spellings are ways a value may be written: as it is, in other cases,
// with space around it.
func spellings(c *chooser, v string) string {
	switch c.pick(6) {
	case 1:
		return strings.ToUpper(v)
	case 2:
		if v == "" {
			return v
		}
		return strings.ToUpper(v[:1]) + v[1:]
	case 3:
		return " " + v
	}
	return v
}

// meta are the labels and annotations of a pod template: each proxy's
// switch and native-sidecar annotations, its shutdown switch and ports, in
// the values its injector reads and others, as a label or an annotation.
func meta(c *chooser) (labels, annotations map[string]any) {
	labels, annotations = map[string]any{"app": "x"}, map[string]any{}
	put := func(key, value string) {
		if c.maybe(4) {
			labels[key] = value
		} else {
			annotations[key] = value
		}
	}
	for _, px := range proxies.InPods {
		if in := px.Inject; in.Key != "" && c.maybe(3) {
			values := append(append(slices.Clone(in.On), in.Off...), "enabled", "yes", "no", "on", "")
			put(in.Key, spellings(c, one(c, values...)))
		}
		for _, k := range px.Native.Keys {
			if c.maybe(5) {
				annotations[k.Key] = spellings(c, one(c, "true", "false", "1", "0", "yes", "y", "maybe"))
			}
		}
		if sw := px.ShutdownSwitch; sw.Key != "" && c.maybe(4) {
			annotations[sw.Key] = one(c, "true", "false", "enabled", "disabled", "0")
		}
		for _, k := range []string{px.AdminPortKey, px.ShutdownPortKey, px.ShutdownPathKey} {
			if k != "" && c.maybe(8) {
				annotations[k] = one(c, "4191", "15030", "20600", "9091", "/stop")
			}
		}
		if m := px.Inject.Sidecarless; m.Key != "" && c.maybe(8) {
			labels[m.Key] = m.Value
		}
	}
	return labels, annotations
}

// sidecar is a proxy's container, as a manifest shows it: by image, with
// the flags of its own command line and the variables it reads, or none;
// and the proxy's preset.
func sidecar(c *chooser, init bool) (map[string]any, string) {
	px := one(c, proxies.InPods...)
	img := "registry.example.com/" + strings.TrimPrefix(one(c, px.Images...), "/") + ":1"
	if len(px.Retired) > 0 && c.maybe(4) {
		img = "gcr.io/" + px.Retired[0].Image + ":1"
	}
	name := fmt.Sprintf("%s-%d", px.Preset, c.pick(3))
	if len(px.Containers) > 0 && c.maybe(2) {
		name = px.Containers[0]
	}
	if setUp := px.SetUp(); init && len(setUp) > 0 && c.maybe(2) {
		name = one(c, setUp...) // as its injector adds it: no sidecar
	}
	ctr := map[string]any{"name": name, "image": img}
	var args []any
	for _, e := range []proxies.Endpoint{px.Ready, px.Shutdown} {
		if e.Flag != "" && c.maybe(2) {
			args = append(args, one(c, "--"+e.Flag, "--"+e.Flag+"=true", "--"+e.Flag+"=false", "-"+e.Flag))
		}
		if e.PortFlag != "" && c.maybe(4) {
			args = append(args, fmt.Sprintf("--%s=%d", e.PortFlag, one(c, e.Port, e.Port+100)))
		}
	}
	if px.Settings.ConfigFile != "" && c.maybe(10) {
		args = append(args, "--"+px.Settings.ConfigFile+"=/etc/proxy.yaml")
	}
	if len(args) > 0 || c.maybe(2) {
		ctr["args"] = append(args, "project:region:db")
	}
	if px.Settings.EnvPrefix != "" && c.maybe(6) {
		ctr["env"] = []any{map[string]any{"name": px.Settings.EnvPrefix + one(c, "HEALTH_CHECK", "QUITQUITQUIT", "HTTP_PORT"), "value": one(c, "true", "9190")}}
	}
	if init && c.maybe(2) {
		ctr["restartPolicy"] = "Always"
	}
	return ctr, px.Preset
}

// flags are proxy-await's flags in the spellings its parser takes, and
// some it refuses, each as words; shown are the presets of the sidecars
// the pod shows, which --proxy names more often than others, and -S
// comes more often with them.
func flags(c *chooser, shown []string) []string {
	presets := []string{"none", "linkerd,dapr", "istio,cloudsql"}
	for _, px := range proxies.All {
		presets = append(presets, px.Preset)
	}
	var out []string
	if len(shown) > 0 && c.maybe(2) {
		out = append(out, "--proxy", strings.Join(shown, ","))
		if c.maybe(2) {
			out = append(out, one(c, "-S", "--shutdown", "--shutdown=false"))
		}
	}
	for range c.pick(6) {
		switch c.pick(20) {
		case 0, 1:
			p := one(c, presets...)
			out = append(out, one(c, "--proxy", "--proxy="+p), p)
			if strings.HasPrefix(out[len(out)-2], "--proxy=") {
				out = out[:len(out)-1]
			}
		case 2:
			out = append(out, one(c, "-S", "--shutdown", "--shutdown=true", "--shutdown=false", "--shutdown=False", "--shutdown=0", "-gS", "-Sg", "--shutdown=yes"))
		case 3:
			out = append(out, one(c, "--keep-proxy-on-failure", "--keep-proxy-on-failure=false", "--keep-proxy-on-failure=1"))
		case 4, 5:
			d := one(c, "0", "5s", "20s", "25", "40s", "1m", "2d", "1m30s", "$(DELAY)")
			out = append(out, one(c, "--term-delay", "--term-delay="+d), d)
			if strings.HasPrefix(out[len(out)-2], "--term-delay=") {
				out = out[:len(out)-1]
			}
		case 6:
			out = append(out, "--kill-after", one(c, "5s", "10s", "30s"))
		case 7:
			out = append(out, "--shutdown-timeout", one(c, "1s", "20s", "1m"))
		case 8:
			out = append(out, one(c, "--port", "-p", "--port=4191", "-p19000"), one(c, "4191", "15000", "19000", "4192"))
		case 9:
			out = append(out, "--ready-url", one(c, "http://127.0.0.1:4191/ready", "http://127.0.0.1:9090/startup", "http://127.0.0.1:7000/up"))
		case 10:
			out = append(out, "--shutdown-url", one(c, "http://127.0.0.1:4191/shutdown", "http://127.0.0.1:9091/quitquitquit"))
		case 11:
			out = append(out, "--proxy-lost", "10s")
		case 12:
			out = append(out, "--drain-quiet", "3s")
		case 13:
			out = append(out, "--probe-port", "8081")
		case 14:
			out = append(out, one(c, "-t", "--timeout", "-t30s", "--timeout=30s", "-St", "-Sb"), "30s")
		case 15:
			out = append(out, one(c, "-v", "-q", "-g", "--timeout-fatal=false", "--bogus"))
		case 16:
			out = append(out, one(c, "--install", "--version", "-h"))
		default:
			out = append(out, "--proxy", one(c, presets...))
		}
	}
	return out
}

// app is an application's container that may run proxy-await: in its
// command, its args, behind a shell, with its settings in its environment.
func app(c *chooser, i int, shown []string) map[string]any {
	ctr := map[string]any{"name": fmt.Sprintf("app-%d", i), "image": "registry.example.com/app:1"}
	pa := one(c, "proxy-await", "/proxy-await/proxy-await", "/usr/local/bin/proxy-await")
	words := append(append([]string{pa}, flags(c, shown)...), "--", "/app")
	if c.maybe(8) {
		words = words[:len(words)-2] // a wait without COMMAND
	}
	toAny := func(ws []string) []any {
		out := make([]any, len(ws))
		for i, w := range ws {
			out[i] = w
		}
		return out
	}
	switch c.pick(8) {
	case 0:
		ctr["command"] = toAny(words[:1])
		ctr["args"] = toAny(words[1:])
	case 1:
		ctr["args"] = toAny(words)
	case 2, 3:
		script := strings.Join(words, " ")
		switch c.pick(4) {
		case 1:
			script = "exec " + script
		case 2:
			script = "cd /srv && " + script
		case 3:
			script += "; echo done"
		}
		ctr["command"] = toAny([]string{one(c, "sh", "/bin/sh", "bash", "dash", "ash", "zsh"), "-c", script})
	case 4:
		ctr["command"] = toAny([]string{"/app"}) // no proxy-await
	default:
		ctr["command"] = toAny(words)
	}
	var env []any
	if c.maybe(4) {
		env = append(env, map[string]any{"name": one(c, "PROXY_AWAIT_SHUTDOWN", "PROXY_AWAIT_TERM_DELAY", "PROXY_AWAIT_PROXY", "PROXY_AWAIT_KEEP_PROXY_ON_FAILURE", "LINKERD_DISABLED"),
			"value": one(c, "true", "40s", "istio", "1", "false")})
	}
	if c.maybe(4) {
		env = append(env, map[string]any{"name": "DELAY", "value": one(c, "10s", "45s")})
	} else if c.maybe(4) {
		env = append(env, map[string]any{"name": "DELAY", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "timings", "key": "delay"}}})
	}
	if len(env) > 0 {
		ctr["env"] = env
	}
	if c.maybe(10) {
		ctr["envFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": "settings"}}}
	}
	switch c.pick(6) {
	case 1:
		ctr["lifecycle"] = map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": one(c, 5, 20)}}}
	case 2:
		ctr["lifecycle"] = map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": []any{"sleep", one(c, "5", "20")}}}}
	}
	if c.maybe(3) {
		ctr["readinessProbe"] = map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}, "periodSeconds": one(c, 1, 10)}
	}
	return ctr
}

// generate is an object of one of the kinds the policy is bound to, made
// from c's choices.
func generate(c *chooser) map[string]any {
	labels, annotations := meta(c)
	spec := map[string]any{}
	var inits, containers, sidecars []any
	var shown []string
	for range c.pick(3) {
		s, preset := sidecar(c, false)
		sidecars = append(sidecars, s)
		if !slices.Contains(shown, preset) {
			shown = append(shown, preset)
		}
	}
	for _, px := range proxies.InPods {
		if _, ok := annotations[px.Inject.Key]; ok && !slices.Contains(shown, px.Preset) {
			shown = append(shown, px.Preset)
		}
	}
	for range c.pick(4) {
		switch c.pick(3) {
		case 0:
			s, _ := sidecar(c, true)
			inits = append(inits, s)
		case 1:
			w := app(c, 10+len(inits), shown)
			w["name"] = fmt.Sprintf("wait-%d", len(inits))
			if c.maybe(3) {
				w["restartPolicy"] = "Always" // a native sidecar of the application's
			}
			inits = append(inits, w)
		default:
			px := one(c, proxies.InPods...)
			if setUp := px.SetUp(); len(setUp) > 0 && len(px.Images) > 0 {
				// as its injector adds it, on the proxy's image
				inits = append(inits, map[string]any{"name": one(c, setUp...), "image": "registry.example.com/" + strings.TrimPrefix(px.Images[0], "/") + ":1"})
			} else {
				s, _ := sidecar(c, true)
				inits = append(inits, s)
			}
		}
	}
	for i := range 1 + c.pick(2) {
		containers = append(containers, app(c, i, shown))
	}
	containers = append(containers, sidecars...)
	if len(inits) > 0 {
		spec["initContainers"] = inits
	}
	spec["containers"] = containers
	if c.maybe(2) {
		spec["terminationGracePeriodSeconds"] = one(c, 5, 20, 30, 60, 120)
	}
	if c.maybe(6) {
		spec["shareProcessNamespace"] = true
	}
	kind := one(c, "Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Job", "CronJob", "CronJob")
	if kind == "Job" || kind == "CronJob" || c.maybe(4) {
		spec["restartPolicy"] = one(c, "Never", "OnFailure")
	}
	if kind == "Job" && c.maybe(4) {
		spec["activeDeadlineSeconds"] = 600
	}
	podMeta := map[string]any{"labels": labels}
	if len(annotations) > 0 {
		podMeta["annotations"] = annotations
	}
	template := map[string]any{"metadata": podMeta, "spec": spec}
	obj := map[string]any{"kind": kind, "metadata": map[string]any{"name": "generated"}}
	switch kind {
	case "Pod":
		obj["apiVersion"] = "v1"
		obj["metadata"] = map[string]any{"name": "generated", "labels": labels, "annotations": annotations}
		obj["spec"] = spec
	case "Job":
		obj["apiVersion"] = "batch/v1"
		obj["spec"] = map[string]any{"template": template}
	case "CronJob":
		obj["apiVersion"] = "batch/v1"
		obj["spec"] = map[string]any{"schedule": "*/5 * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": template}}}
	default:
		obj["apiVersion"] = "apps/v1"
		obj["spec"] = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}}, "template": template}
	}
	return obj
}

// disagreement is what check and the policy say of the object made from
// data, when the policy refuses it for a rule that check does not find
// in it as an error; "" when they agree. It also returns the rules the
// policy refused it for.
func disagreement(t testing.TB, data []byte) (string, []string, string) {
	t.Helper()
	c := &chooser{data: data}
	rel := one(c, releasesOf...)
	obj := generate(c)
	text, err := yaml.Marshal(obj)
	require.NoError(t, err)
	v := compiledFor(t, rel, false).eval(t, obj)
	require.Empty(t, v.errorsOf, "the policy's CEL fails on:\n%s", text)
	if len(v.rules) == 0 {
		return "", nil, rel
	}
	cl := versions(t, rel)
	findings, _ := check.Paths([]string{"-"}, check.Options{Versions: cl.versions, Native: cl.native, Stdin: bytes.NewReader(text)})
	var errs []string
	for _, f := range findings {
		if f.Level == rules.Error {
			errs = append(errs, f.Rule)
		}
	}
	for i, r := range v.rules {
		// proxy-await would refuse flags that check finds wrong (a rule
		// the policy leaves to check), and check judges nothing else of
		// that container: the policy may refuse the object for another
		// rule that holds too.
		if !slices.Contains(errs, r) && !slices.Contains(errs, "flags") {
			return fmt.Sprintf("--versions %q: the policy refuses it for %s, check finds %v:\n%s\n%s", rel, r, errs, v.refused[i], text), v.rules, rel
		}
	}
	return "", v.rules, rel
}

// generated is how many objects the fixed seed set generates: 2000 in
// every run of the tests (make test), more for a longer look.
var generated = flag.Int("generated", 2000, "how many objects the differential test of the policy and check generates")

// The fixed seed set: the -generated objects from a seeded random source,
// each judged by both. Every rule the policy covers is refused for some of
// them, so that agreement is not the policy admitting everything.
func TestPolicyNeverRefusesWhatCheckPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(48, 2026))
	refused := map[string]int{}
	for i := range *generated {
		data := make([]byte, 160)
		for j := range data {
			data[j] = byte(r.UintN(256))
		}
		d, rules, _ := disagreement(t, data)
		require.Empty(t, d, "object %d", i)
		for _, rule := range rules {
			refused[rule]++
		}
	}
	t.Logf("%d objects, refused by rule: %v", *generated, refused)
	for _, r := range Covered() {
		require.NotZero(t, refused[r.Name], "no generated object is refused for %s", r.Name)
	}
}

// FuzzPolicyNeverRefusesWhatCheckPasses is the same with the fuzzer's
// choices.
func FuzzPolicyNeverRefusesWhatCheckPasses(f *testing.F) {
	r := rand.New(rand.NewPCG(46, 48))
	for range 20 {
		data := make([]byte, 160)
		for j := range data {
			data[j] = byte(r.UintN(256))
		}
		f.Add(data)
	}
	// Compiled before any input: compiling takes seconds, which the fuzzing
	// engine would take for an input that hangs.
	for _, rel := range releasesOf {
		compiledFor(f, rel, false)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			return
		}
		d, _, _ := disagreement(t, data)
		require.Empty(t, d)
	})
}
