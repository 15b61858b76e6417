package policy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/proxies"
)

// The releases the policy is written for in these tests: none stated,
// classic sidecars, native ones.
var releases = []string{"", "linkerd=2.19,istio=1.26,kubernetes=1.32", "linkerd=2.20,istio=1.27,kubernetes=1.33"}

// cluster is what --versions s states: the releases and the settings of
// whole meshes.
type cluster struct {
	versions map[string]proxies.Version
	native   map[string]bool
}

func versions(t testing.TB, s string) cluster {
	t.Helper()
	if s == "" {
		return cluster{}
	}
	cfg, err := config.ParseTool([]string{"check", "--versions", s, "x"}, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	return cluster{cfg.Check.Versions, cfg.Check.Native}
}

// istioJob is a Job whose pod Istio's injector gives a sidecar (classic
// unless the releases or the mesh make it native), its one container
// called name, restartPolicy restart, and command the words of its command.
func istioJob(name, restart, command string) string {
	return fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
metadata: {name: %[1]s}
spec:
  template:
    metadata: {labels: {sidecar.istio.io/inject: "true"}}
    spec:
      restartPolicy: %[2]s
      containers:
        - name: %[1]s
          image: registry.example.com/%[1]s:1
          command: [%[3]s]
`, name, restart, command)
}

// The kinds the policy is bound to.
var kinds = []string{"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}

// object is a Kubernetes object of a manifest, as the API server hands it
// to the policy, and where it is.
type object struct {
	file, kind, name string
	text             []byte
	value            map[string]any
}

// objects are the objects of the kinds the policy is bound to in data,
// the items of a List among them.
func objects(t testing.TB, file string, data []byte) []object {
	var out []object
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return out
		}
		if len(n.Content) == 0 {
			continue
		}
		var v any
		if n.Content[0].Decode(&v) != nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		var roots []map[string]any
		if items, ok := m["items"].([]any); ok {
			for _, it := range items {
				if o, ok := it.(map[string]any); ok {
					roots = append(roots, o)
				}
			}
		} else {
			roots = append(roots, m)
		}
		for _, o := range roots {
			kind, _ := o["kind"].(string)
			if !slices.Contains(kinds, kind) {
				continue
			}
			meta, _ := o["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			text, err := yaml.Marshal(o)
			require.NoError(t, err)
			out = append(out, object{file, kind, name, text, o})
		}
	}
}

// manifests are every archive of --check's golden files (its rules' true
// positives and near misses, its cases, its corpus) and examples/, each
// as a directory of its files, with the releases its want sections name.
type archive struct {
	name, dir string
	files     []string
}

func manifests(t *testing.T) []archive {
	t.Helper()
	var out []archive
	names, err := filepath.Glob("../check/testdata/*/*.txtar")
	require.NoError(t, err)
	rules, err := filepath.Glob("../rules/testdata/*.txtar")
	require.NoError(t, err)
	names = append(names, rules...)
	for _, name := range names {
		if strings.Contains(name, "nested-bounds") {
			continue // documents past the bounds, which the API server refuses itself
		}
		ar, err := txtar.ParseFile(name)
		require.NoError(t, err)
		a := archive{name: name, dir: t.TempDir()}
		for _, f := range ar.Files {
			if f.Name == "want" || strings.HasPrefix(f.Name, "want ") {
				continue
			}
			p := filepath.Join(a.dir, f.Name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, f.Data, 0o644))
			a.files = append(a.files, p)
		}
		out = append(out, a)
	}
	examples, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	out = append(out, archive{name: "examples", files: append(examples, "../../examples/distroless/deployment.yaml")})
	return out
}

// errorsOf are the rules of the error findings --check makes of each
// object of paths, by FILE KIND/NAME.
func errorsOf(paths []string, v cluster) map[string][]string {
	findings, _ := check.Paths(paths, check.Options{Versions: v.versions, Native: v.native})
	out := map[string][]string{}
	for _, f := range findings {
		if f.Level == rules.Error {
			key := f.File + " " + f.Kind + "/" + f.Name
			out[key] = append(out[key], f.Rule)
		}
	}
	return out
}

// The policy never refuses what --check passes, and what it refuses,
// --check refuses for the same rule from the object alone: over every
// object of --check's golden files and of examples/, with each set of
// releases. It does catch some (the rules' true positives), which the
// test counts, so that it cannot pass by admitting everything.
func TestAdmitsWhatCheckPasses(t *testing.T) {
	all := manifests(t)
	caught, judged := map[string]int{}, 0
	t.Cleanup(func() {
		t.Logf("%d objects, each with %d sets of releases, refused by rule: %v", judged/max(len(releases), 1), len(releases), caught)
		for _, r := range Covered() {
			rule := r.Name
			assert.NotZero(t, caught[rule], "no object of the golden files is refused for %s", rule)
		}
	})
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			v := versions(t, rel)
			c := compiledFor(t, rel, false)
			for _, a := range all {
				inContext := errorsOf(a.files, v)
				for _, f := range a.files {
					data, err := os.ReadFile(f)
					require.NoError(t, err)
					for _, o := range objects(t, f, data) {
						verdict := c.eval(t, o.value)
						judged++
						assert.Empty(t, verdict.errorsOf, "%s %s/%s: the policy's CEL fails", f, o.kind, o.name)
						if len(verdict.refused) == 0 {
							continue
						}
						key := f + " " + o.kind + "/" + o.name
						assert.NotEmpty(t, inContext[key], "%s: --check passes it, the policy refuses it:\n%s", key, verdict)
						// The object alone: --check finds each rule the
						// policy refuses it for.
						alone := filepath.Join(t.TempDir(), "object.yaml")
						require.NoError(t, os.WriteFile(alone, o.text, 0o644))
						var rules []string
						for _, r := range errorsOf([]string{alone}, v) {
							rules = append(rules, r...)
						}
						for i, rule := range verdict.rules {
							assert.Contains(t, rules, rule, "%s: refused for %s, which --check does not find in it alone:\n%s", key, rule, verdict.refused[i])
							assert.True(t, strings.HasPrefix(verdict.refused[i], rule+": "), "%s: a message starts with its rule: %s", key, verdict.refused[i])
							caught[rule]++
						}
					}
				}
			}
		})
	}
}

// One wrong manifest for each rule the policy covers: it is refused, with
// a message that starts with the rule's name, and --check finds that rule
// in it; right, it is admitted.
func TestRefusesEachRule(t *testing.T) {
	c := compiledFor(t, "", false)
	for _, tc := range []struct {
		rule, wrong, from, to string // to for from makes it right
	}{
		{"grace-period", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 20
      containers:
        - name: web
          image: registry.example.com/web:1
          command: [/proxy-await/proxy-await, --proxy, none, --term-delay, 15s, --kill-after, 10s, --, /web]
`, "terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds: 30"},
		{"job-never-completes", istioJob("export", "Never", "/proxy-await/proxy-await, --proxy, istio, --, /export"), "--proxy, istio, --,", "--proxy, istio, -S, --,"},
		{"retry-loses-proxy", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: sync}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        metadata: {annotations: {dapr.io/enabled: "true", dapr.io/app-id: sync}}
        spec:
          restartPolicy: OnFailure
          containers:
            - name: sync
              image: registry.example.com/sync:1
              command: [proxy-await, --proxy, dapr, -S, --, /sync]
`, "-S, --,", "-S, --keep-proxy-on-failure, --,"},
		{"shutdown-disabled", `
apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: registry.example.com/export:1
          command: [proxy-await, --proxy, cloudsql, -S, --, /export]
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
          args: [--health-check, --port=5432, "p:r:i"]
`, "args: [--health-check,", "args: [--health-check, --quitquitquit,"},
		{"preset-mismatch", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: orders}
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata: {labels: {app: orders}, annotations: {dapr.io/app-id: orders}}
    spec:
      containers:
        - name: orders
          image: registry.example.com/orders:1
          command: [proxy-await, --proxy, dapr, --, node, app.js]
`, "annotations: {dapr.io/app-id: orders}", "annotations: {dapr.io/enabled: \"true\", dapr.io/app-id: orders}"},
		{"shell-form", `
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
    - name: tool
      image: registry.example.com/tool:1
      command: [dash, -c, "proxy-await --proxy none -- /tool --all"]
`, `"proxy-await`, `"exec proxy-await`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			wrong := objects(t, "wrong.yaml", []byte(tc.wrong))
			require.Len(t, wrong, 1)
			v := c.eval(t, wrong[0].value)
			require.Empty(t, v.errorsOf)
			require.Equal(t, []string{tc.rule}, v.rules, "%s", v)
			assert.True(t, strings.HasPrefix(v.refused[0], tc.rule+": "), v.refused[0])
			t.Logf("%s", v.refused[0])

			p := filepath.Join(t.TempDir(), "wrong.yaml")
			require.NoError(t, os.WriteFile(p, []byte(tc.wrong), 0o644))
			var rules []string
			for _, r := range errorsOf([]string{p}, cluster{}) {
				rules = append(rules, r...)
			}
			assert.Contains(t, rules, tc.rule, "--check of the wrong manifest")

			require.Contains(t, tc.wrong, tc.from)
			right := objects(t, "right.yaml", []byte(strings.Replace(tc.wrong, tc.from, tc.to, 1)))
			require.Len(t, right, 1)
			v = c.eval(t, right[0].value)
			assert.Empty(t, v.refused, "the right manifest")
			assert.Empty(t, v.errorsOf)
		})
	}
}

// The policy stays within the API server's CEL budget for a large pod:
// 40 containers, each with 60 flags and words and a 10 KiB script, 20
// variables and probes, every word of which the rules read. Each
// expression costs less than the API server's limit for one call, and
// all of them together less than its budget for one admission (the
// runtime cost, as cel-go counts it the way the API server does).
func TestCostOfALargePod(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: batch/v1\nkind: Job\nmetadata: {name: large}\nspec:\n  template:\n    metadata:\n      labels: {sidecar.istio.io/inject: \"true\"}\n      annotations: {dapr.io/enabled: \"true\"}\n    spec:\n      restartPolicy: OnFailure\n      terminationGracePeriodSeconds: 20\n      initContainers:\n")
	container := func(i int, init bool) {
		fmt.Fprintf(&b, "        - name: c%d\n          image: registry.example.com/app:%d\n          command: [/proxy-await/proxy-await, --proxy, istio, -S, --term-delay, 10s, --kill-after, 5s", i, i)
		for j := 0; j < 25; j++ {
			fmt.Fprintf(&b, ", --rewrite, TERM:USR%d", 1+j%2)
		}
		b.WriteString(", --, sh, -c, \"" + strings.Repeat("echo all is well; ", 550) + "\"]\n          args: [")
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&b, "--arg%d, ", j)
		}
		b.WriteString("x]\n          env:\n")
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&b, "            - {name: VAR%d, value: \"%s\"}\n", j, strings.Repeat("v", 100))
		}
		b.WriteString("          readinessProbe: {httpGet: {path: /ready, port: 8080}}\n          lifecycle: {preStop: {exec: {command: [sleep, \"5\"]}}}\n")
	}
	for i := 0; i < 10; i++ {
		container(i, true)
	}
	b.WriteString("      containers:\n")
	for i := 10; i < 40; i++ {
		container(i, false)
	}
	objs := objects(t, "large.yaml", []byte(b.String()))
	require.Len(t, objs, 1)
	require.Greater(t, len(objs[0].text), 400_000, "the pod is large")
	// Without releases stated, the sidecars' nativeness is least decided
	// and the most of the CEL runs: the costliest set (the others cost
	// the same within a percent).
	for _, rel := range releases[:1] {
		v := compiledFor(t, rel, true).eval(t, objs[0].value)
		require.Empty(t, v.errorsOf, "%s", rel)
		assert.NotEmpty(t, v.refused, "the pod is wrong enough to be refused")
		assert.Less(t, v.maxCost, uint64(perCallLimit), "the most one expression costs, %s", rel)
		assert.Less(t, v.cost, uint64(runtimeCELCostBudget), "what all of them cost, %s", rel)
		t.Logf("releases %q: %d bytes of pod, CEL cost %d in all (budget %d), %d at most for one expression (limit %d); refused for %v",
			rel, len(objs[0].text), v.cost, runtimeCELCostBudget, v.maxCost, perCallLimit, v.rules)
	}
}
