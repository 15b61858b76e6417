package examples_test

// The Kubernetes examples in examples/ must work as written: every manifest
// decodes strictly into the Kubernetes API types (an unknown or misspelt
// field is an error, as under the API server's strict field validation),
// every pod passes the Pod Security Standards' "restricted" level as
// Kubernetes' own admission library judges it and has memory limits, every
// proxy-await command line in them is one proxy-await accepts, with
// timings that fit the pod's grace period, and proxy-awaitctl check finds
// no error in them.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/internal/manifesttest"
	"github.com/proxy-await/proxy-await/proxies"
)

// TestMain runs the tests from the repository's root, where the paths they
// name start.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// graceMargin is what the examples leave between term-delay + kill-after and
// terminationGracePeriodSeconds, for proxy-await's own exit
// (docs/graceful-termination.md, "Choosing the values").
const graceMargin = 5 * time.Second

// restricted evaluates a pod against the latest "restricted" Pod Security
// Standard with the checks Kubernetes' admission plugin runs.
func restricted(meta *corev1.PodTemplateSpec) (policy.AggregateCheckResult, error) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return policy.AggregateCheckResult{}, err
	}
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	return policy.AggregateCheckResults(eval.EvaluatePod(lv, &meta.ObjectMeta, &meta.Spec)), nil
}

// entrypointOf reads the exec-form ENTRYPOINT of a Dockerfile: what a
// container that sets args but no command runs.
func entrypointOf(dockerfile string) ([]string, error) {
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		return nil, err
	}
	var entry []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ENTRYPOINT "); ok {
			if err := json.Unmarshal([]byte(rest), &entry); err != nil {
				return nil, fmt.Errorf("%s: ENTRYPOINT is not in exec form: %w", dockerfile, err)
			}
		}
	}
	return entry, nil
}

// checkPod checks one pod of an example; entrypoint is the image's when a
// Dockerfile beside the manifest builds it. It returns how many containers
// run proxy-await.
func checkPod(t require.TestingT, tpl *corev1.PodTemplateSpec, entrypoint []string) int {
	res, err := restricted(tpl)
	require.NoError(t, err)
	assert.True(t, res.Allowed, "not allowed under Pod Security \"restricted\": %s: %s", res.ForbiddenReason(), res.ForbiddenDetail())

	grace := 30 * time.Second // the Kubernetes default
	if s := tpl.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	for _, c := range append(slices.Clone(tpl.Spec.InitContainers), tpl.Spec.Containers...) {
		assert.False(t, c.Resources.Limits.Memory().IsZero(), "container %q has no memory limit", c.Name)
	}
	runs := manifesttest.Runs(tpl, entrypoint)
	for _, r := range runs {
		cfg, ok := manifesttest.CheckRun(t, tpl, r)
		if ok && cfg.TermDelay > 0 {
			need := cfg.TermDelay + cfg.KillAfter + graceMargin
			assert.Less(t, need, grace, "container %q: terminationGracePeriodSeconds must be more than "+
				"--term-delay %s + --kill-after %s + margin %s", r.Container.Name, cfg.TermDelay, cfg.KillAfter, graceMargin)
			assert.NotZero(t, cfg.KillAfter, "container %q: --term-delay without --kill-after leaves the stop unbounded", r.Container.Name)
		}
	}
	return len(runs)
}

func exampleManifests(t *testing.T) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir("examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	return files
}

// examplePods is the pod templates of one file of examples/, with the
// entrypoint of the image that a Dockerfile beside it builds.
func examplePods(t *testing.T, file string) (tpls []*corev1.PodTemplateSpec, entrypoint []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	objs, err := manifesttest.Decode(data)
	require.NoError(t, err, file)
	if df := filepath.Join(filepath.Dir(file), "Dockerfile"); fileExists(df) {
		entrypoint, err = entrypointOf(df)
		require.NoError(t, err)
	}
	for _, obj := range objs {
		if tpl, ok := manifesttest.PodTemplate(obj); ok {
			tpls = append(tpls, tpl)
		}
	}
	return tpls, entrypoint
}

// examplePod is a pod template of examples/, with its file and the
// entrypoint of its image when a Dockerfile builds it.
type examplePod struct {
	file       string
	tpl        *corev1.PodTemplateSpec
	entrypoint []string
}

// allExamplePods is every pod template of examples/.
func allExamplePods(t *testing.T) []examplePod {
	var pods []examplePod
	for _, f := range exampleManifests(t) {
		tpls, entrypoint := examplePods(t, f)
		for _, tpl := range tpls {
			pods = append(pods, examplePod{f, tpl, entrypoint})
		}
	}
	return pods
}

func TestExamples(t *testing.T) {
	for _, f := range exampleManifests(t) {
		t.Run(f, func(t *testing.T) {
			tpls, entrypoint := examplePods(t, f)
			runs := 0
			for _, tpl := range tpls {
				runs += checkPod(t, tpl, entrypoint)
			}
			assert.NotZero(t, runs, "no container of %s runs proxy-await", f)

			// --check sees every container that runs proxy-await (the
			// Dockerfile says which image's entrypoint is proxy-await) and
			// finds no error.
			findings, sum := check.Paths([]string{f}, check.Options{Images: dockerfileImage(t, f)})
			// It also knows that proxy-await's own image runs proxy-await.
			assert.GreaterOrEqual(t, sum.Containers, runs, "containers that --check sees run proxy-await")
			for _, finding := range findings {
				assert.NotEqual(t, rules.Error, finding.Level, "%s", finding)
			}
		})
	}
}

// dockerfileImage is what the image that a Dockerfile beside file builds
// runs, by the reference its "docker build -t" line gives it; nil without
// a Dockerfile.
func dockerfileImage(t *testing.T, file string) invocation.Images {
	df := filepath.Join(filepath.Dir(file), "Dockerfile")
	if !fileExists(df) {
		return nil
	}
	data, err := os.ReadFile(df)
	require.NoError(t, err)
	var ref string
	var img invocation.Image
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if _, rest, ok := strings.Cut(line, "docker build -t "); ok {
			ref, _, _ = strings.Cut(rest, " ")
		}
		for prefix, list := range map[string]*[]string{"ENTRYPOINT ": &img.Entrypoint, "CMD ": &img.Cmd} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				require.NoError(t, json.Unmarshal([]byte(rest), list), "%s: %s is not in exec form", df, line)
			}
		}
	}
	require.NotEmpty(t, ref, "%s says not which image it builds (docker build -t IMAGE)", df)
	return invocation.ImageTable{ref: img}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// The checks above must be able to fail: each broken pod is refused for the
// reason given.
func TestExamplesCheckerRejects(t *testing.T) {
	const good = `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    metadata: {annotations: {config.linkerd.io/proxy-admin-shutdown: enabled}}
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: app
          image: app
          command: [/proxy-await, -S, --, /app]
          resources: {limits: {memory: 64Mi}}
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`
	objs, err := manifesttest.Decode([]byte(good))
	require.NoError(t, err)
	tpl, _ := manifesttest.PodTemplate(objs[0])
	var rec recorder
	checkPod(&rec, tpl, nil)
	require.False(t, rec.failed, "the good pod must pass, for each broken one to fail for its own reason")
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", "restartPolicy: Never", "restartPolicy: Never\n      restartPolcy: Never", "unknown field"},
		{"duplicate key", "image: app", "image: app\n          image: app", "already set"},
		{"unknown kind", "kind: Job", "kind: Jobb", "unknown kind"},
	} {
		_, err := manifesttest.Decode([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"runs as root", "runAsNonRoot: true, ", ""},
		{"no seccomp profile", ", seccompProfile: {type: RuntimeDefault}", ""},
		{"privilege escalation", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"},
		{"capabilities kept", "drop: [ALL]", "drop: [NET_RAW]"},
	} {
		objs, err := manifesttest.Decode([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		require.NoError(t, err, tc.name)
		tpl, _ := manifesttest.PodTemplate(objs[0])
		res, err := restricted(tpl)
		require.NoError(t, err)
		assert.False(t, res.Allowed, "%s should not pass \"restricted\"", tc.name)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"no memory limit", "limits: {memory: 64Mi}", "requests: {memory: 64Mi}"},
		{"a bad proxy-await flag", "-S, --", "--term-delay, soon, --"},
		{"term-delay past the grace period", "-S, --", "--term-delay, 40s, --kill-after, 5s, --"},
		{"term-delay without kill-after", "-S, --", "--term-delay, 5s, --"},
		{"linkerd shutdown endpoint left off", "config.linkerd.io/proxy-admin-shutdown: enabled", "linkerd.io/inject: enabled"},
	} {
		objs, err := manifesttest.Decode([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		require.NoError(t, err, tc.name)
		tpl, _ := manifesttest.PodTemplate(objs[0])
		var rec recorder
		checkPod(&rec, tpl, nil)
		assert.True(t, rec.failed, "%s should fail the example check", tc.name)
	}
}

// recorder is a require.TestingT that only notes a failure.
type recorder struct{ failed bool }

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true }

// presetNames is every --proxy preset, as --help lists them.
func presetNames(t *testing.T) []string {
	t.Helper()
	var help strings.Builder
	config.PrintHelp(&help)
	_, list, ok := strings.Cut(help.String(), "\npresets:\n")
	require.True(t, ok, "--help has no presets section")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		m := regexp.MustCompile(`^  ([a-z]+) `).FindStringSubmatch(line)
		if m == nil {
			if strings.TrimSpace(line) == "" || !strings.HasPrefix(line, " ") {
				break
			}
			continue
		}
		if _, ok := config.LookupPreset(m[1]); ok {
			names = append(names, m[1])
		}
	}
	require.NotEmpty(t, names)
	return names
}

// The docs say that every preset has an example: some container in
// examples/ runs proxy-await with each --proxy preset.
func TestEveryPresetHasAnExample(t *testing.T) {
	used := map[string]bool{}
	for _, pod := range allExamplePods(t) {
		for _, r := range manifesttest.Runs(pod.tpl, pod.entrypoint) {
			cfg, err := config.Parse("proxy-await", r.Argv[1:], manifesttest.ContainerEnv(r.Container))
			require.NoError(t, err, pod.file)
			for _, p := range cfg.Proxies {
				used[p] = true
			}
		}
	}
	for _, p := range presetNames(t) {
		assert.True(t, used[p], "no example runs proxy-await --proxy %s", p)
	}
}

// injectedContainer is a container of the proxy table's Injected facts,
// with its security context in the terms injectors use.
func injectedContainer(c *proxies.Container) *corev1.Container {
	if c == nil {
		return nil
	}
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: new(false),
		Privileged:               new(false),
		ReadOnlyRootFilesystem:   new(true),
		RunAsUser:                new(c.User),
		RunAsNonRoot:             new(c.NonRoot),
		Capabilities:             &corev1.Capabilities{},
	}
	for _, a := range c.Add {
		sc.Capabilities.Add = append(sc.Capabilities.Add, corev1.Capability(a))
	}
	if c.DropAll {
		sc.Capabilities.Drop = []corev1.Capability{"ALL"}
	}
	return &corev1.Container{Name: c.Name, SecurityContext: sc}
}

// injects says whether px's injector adds its sidecar to a pod: the pod's
// label or annotation asks for it.
func injects(px *proxies.Proxy, tpl *corev1.PodTemplateSpec) bool {
	in := px.Inject
	return slices.Contains(in.On, tpl.Labels[in.Key]) || slices.Contains(in.On, tpl.Annotations[in.Key])
}

// inject adds what px's injector adds to a copy of a pod: by default, or
// with its remedy.
func inject(px *proxies.Proxy, tpl *corev1.PodTemplateSpec, remedied bool) *corev1.PodTemplateSpec {
	inj := px.Injected
	pod := tpl.DeepCopy()
	init, sidecar := inj.Init, inj.Sidecar
	if remedied && inj.FixedInit != nil {
		init = inj.FixedInit
	}
	if remedied && inj.FixedSidecar != nil {
		sidecar = inj.FixedSidecar
	}
	if c := injectedContainer(init); c != nil {
		pod.Spec.InitContainers = append([]corev1.Container{*c}, pod.Spec.InitContainers...)
	}
	if c := injectedContainer(sidecar); c != nil {
		if first := pod.Spec.Containers[0].SecurityContext; inj.CopiesCapabilities && first != nil {
			c.SecurityContext.Capabilities = first.Capabilities.DeepCopy()
		}
		pod.Spec.Containers = append(pod.Spec.Containers, *c)
	}
	return pod
}

// The examples pass "restricted" as written (TestExamples); the pods a mesh
// makes of them pass only with the remedy docs/sidecars.md names: without a
// CNI plugin the mesh's init container needs NET_ADMIN (and runs as root, for
// Istio and Consul), and daprd keeps its capabilities unless told to drop
// them.
func TestExamplesInjectedRestricted(t *testing.T) {
	seen := map[string]bool{}
	for _, pod := range allExamplePods(t) {
		for _, px := range proxies.InPods {
			inj := px.Injected
			if inj.Release == "" || !injects(px, pod.tpl) {
				continue
			}
			seen[px.Preset] = true
			for _, remedied := range []bool{false, true} {
				res, err := restricted(inject(px, pod.tpl, remedied))
				require.NoError(t, err)
				if remedied {
					assert.True(t, res.Allowed, "%s under %s with %s: not \"restricted\": %s: %s",
						pod.file, inj.Release, inj.Remedy, res.ForbiddenReason(), res.ForbiddenDetail())
				} else {
					assert.False(t, res.Allowed, "%s under %s without %s passes \"restricted\": the docs say it does not",
						pod.file, inj.Release, inj.Remedy)
				}
			}
		}
	}
	for _, px := range proxies.InPods {
		if px.Injected.Release != "" {
			assert.True(t, seen[px.Preset], "no example is injected by %s", px.Injected.Release)
		}
	}
}
