package main

// The Kubernetes examples in examples/ must work as written: every manifest
// decodes strictly into the Kubernetes API types (an unknown or misspelt
// field is an error, as under the API server's strict field validation),
// every pod passes the Pod Security Standards' "restricted" level as
// Kubernetes' own admission library judges it and has memory limits, every
// proxy-await command line in them is one proxy-await accepts, with
// timings that fit the pod's grace period, and proxy-await --check finds
// no error in them.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/proxy-await/proxy-await/check"
	"github.com/proxy-await/proxy-await/config"
)

// graceMargin is what the examples leave between term-delay + kill-after and
// terminationGracePeriodSeconds, for proxy-await's own exit (README,
// "Choosing the values").
const graceMargin = 5 * time.Second

// k8sTypes maps "apiVersion kind" to a new value of its API type: the kinds
// the examples may use.
var k8sTypes = map[string]func() any{
	"batch/v1 Job":       func() any { return new(batchv1.Job) },
	"batch/v1 CronJob":   func() any { return new(batchv1.CronJob) },
	"apps/v1 Deployment": func() any { return new(appsv1.Deployment) },
	"v1 Pod":             func() any { return new(corev1.Pod) },
	"v1 Service":         func() any { return new(corev1.Service) },
	"v1 ConfigMap":       func() any { return new(corev1.ConfigMap) },
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// decodeManifest decodes every document of a YAML stream into its API type,
// strictly: unknown fields, fields in the wrong case and duplicate keys are
// errors, and so is a kind that is not in k8sTypes. Documents of comments
// only are left out.
func decodeManifest(data []byte) ([]any, error) {
	var objs []any
	for i, doc := range docSeparator.Split(string(data), -1) {
		j, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if string(j) == "null" {
			continue
		}
		var tm struct{ APIVersion, Kind string }
		if err := json.Unmarshal(j, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		newObj, ok := k8sTypes[tm.APIVersion+" "+tm.Kind]
		if !ok {
			return nil, fmt.Errorf("document %d: unknown kind %q in apiVersion %q", i+1, tm.Kind, tm.APIVersion)
		}
		obj := newObj()
		strict, err := k8sjson.UnmarshalStrict(j, obj, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
		if err == nil {
			err = errors.Join(strict...)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("no documents")
	}
	return objs, nil
}

// podTemplate is the pod an object runs, if any.
func podTemplate(obj any) (*corev1.PodTemplateSpec, bool) {
	switch v := obj.(type) {
	case *batchv1.Job:
		return &v.Spec.Template, true
	case *batchv1.CronJob:
		return &v.Spec.JobTemplate.Spec.Template, true
	case *appsv1.Deployment:
		return &v.Spec.Template, true
	case *corev1.Pod:
		return &corev1.PodTemplateSpec{ObjectMeta: v.ObjectMeta, Spec: v.Spec}, true
	}
	return nil, false
}

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

// containerEnv is a getenv for parseConfig that sees the container's literal
// environment variables.
func containerEnv(c corev1.Container) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value, true
			}
		}
		return "", false
	}
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
	runs := 0
	for _, c := range append(slices.Clone(tpl.Spec.InitContainers), tpl.Spec.Containers...) {
		assert.False(t, c.Resources.Limits.Memory().IsZero(), "container %q has no memory limit", c.Name)
		argv := append(slices.Clone(c.Command), c.Args...)
		if len(c.Command) == 0 && entrypoint != nil {
			argv = append(slices.Clone(entrypoint), c.Args...)
		}
		if len(argv) == 0 || path.Base(argv[0]) != "proxy-await" {
			continue
		}
		runs++
		cfg, err := config.Parse("proxy-await", argv[1:], containerEnv(c))
		if !assert.NoError(t, err, "container %q: proxy-await %s", c.Name, strings.Join(argv[1:], " ")) {
			continue
		}
		if cfg.TermDelay > 0 {
			need := cfg.TermDelay + cfg.KillAfter + graceMargin
			assert.Less(t, need, grace, "container %q: terminationGracePeriodSeconds must be more than "+
				"--term-delay %s + --kill-after %s + margin %s", c.Name, cfg.TermDelay, cfg.KillAfter, graceMargin)
			assert.NotZero(t, cfg.KillAfter, "container %q: --term-delay without --kill-after leaves the stop unbounded", c.Name)
		}
	}
	return runs
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

func TestExamples(t *testing.T) {
	for _, f := range exampleManifests(t) {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			objs, err := decodeManifest(data)
			require.NoError(t, err)
			var entrypoint []string
			if df := filepath.Join(filepath.Dir(f), "Dockerfile"); fileExists(df) {
				entrypoint, err = entrypointOf(df)
				require.NoError(t, err)
			}
			runs := 0
			for _, obj := range objs {
				if tpl, ok := podTemplate(obj); ok {
					runs += checkPod(t, tpl, entrypoint)
				}
			}
			assert.NotZero(t, runs, "no container of %s runs proxy-await", f)

			// --check sees every container that runs proxy-await (the
			// Dockerfile says which image's entrypoint is proxy-await) and
			// finds no error.
			findings, sum := check.Paths([]string{f}, check.Options{Entrypoint: func(string) []string { return entrypoint }})
			// It also knows that proxy-await's own image runs proxy-await.
			assert.GreaterOrEqual(t, sum.Containers, runs, "containers that --check sees run proxy-await")
			for _, finding := range findings {
				assert.NotEqual(t, check.Error, finding.Level, "%s", finding)
			}
		})
	}
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
	_, err := decodeManifest([]byte(good))
	require.NoError(t, err)
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", "restartPolicy: Never", "restartPolicy: Never\n      restartPolcy: Never", "unknown field"},
		{"duplicate key", "image: app", "image: app\n          image: app", "already set"},
		{"unknown kind", "kind: Job", "kind: Jobb", "unknown kind"},
	} {
		_, err := decodeManifest([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"runs as root", "runAsNonRoot: true, ", ""},
		{"no seccomp profile", ", seccompProfile: {type: RuntimeDefault}", ""},
		{"privilege escalation", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"},
		{"capabilities kept", "drop: [ALL]", "drop: [NET_RAW]"},
	} {
		objs, err := decodeManifest([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		require.NoError(t, err, tc.name)
		tpl, _ := podTemplate(objs[0])
		res, err := restricted(tpl)
		require.NoError(t, err)
		assert.False(t, res.Allowed, "%s should not pass \"restricted\"", tc.name)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"no memory limit", "limits: {memory: 64Mi}", "requests: {memory: 64Mi}"},
		{"a bad proxy-await flag", "-S, --", "--term-delay, soon, --"},
		{"term-delay past the grace period", "-S, --", "--term-delay, 40s, --kill-after, 5s, --"},
		{"term-delay without kill-after", "-S, --", "--term-delay, 5s, --"},
	} {
		objs, err := decodeManifest([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		require.NoError(t, err, tc.name)
		tpl, _ := podTemplate(objs[0])
		var rec recorder
		checkPod(&rec, tpl, nil)
		assert.True(t, rec.failed, "%s should fail the example check", tc.name)
	}
}

// recorder is a require.TestingT that only notes a failure.
type recorder struct{ failed bool }

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true }

// The README's minimal Job decodes strictly and its command line is one
// proxy-await accepts.
func TestReadmeMinimalJob(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "### A minimal Job\n")
	require.True(t, ok, "README.md has no minimal Job")
	_, after, ok = strings.Cut(after, "```yaml\n")
	require.True(t, ok)
	manifest, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	objs, err := decodeManifest([]byte(manifest))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	tpl, ok := podTemplate(objs[0])
	require.True(t, ok)
	c := tpl.Spec.Containers[0]
	argv := append(slices.Clone(c.Command), c.Args...)
	cfg, err := config.Parse("proxy-await", argv[1:], containerEnv(c))
	require.NoError(t, err)
	assert.True(t, cfg.Shutdown)
	assert.Equal(t, "enabled", tpl.Annotations["config.linkerd.io/proxy-admin-shutdown"])
}
