package main

// The Kubernetes examples in examples/ and the Dockerfiles must work as
// written: every manifest decodes strictly into the Kubernetes API types (an
// unknown or misspelt field is an error, as the API server's strict field
// validation makes it), and every proxy-await command line in them is one
// that proxy-await accepts, with timing values that fit the pod's grace
// period.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const examplesDir = "examples"

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
	"v1 Service":         func() any { return new(corev1.Service) },
	"v1 ConfigMap":       func() any { return new(corev1.ConfigMap) },
}

// k8sObject is one document of a manifest, decoded.
type k8sObject struct {
	where string // file#document
	kind  string
	obj   any // *batchv1.Job, *appsv1.Deployment, ...
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// splitDocuments splits a YAML stream at its "---" lines, leaving out
// documents that hold nothing but comments.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(data), -1) {
		for _, line := range strings.Split(d, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, []byte(d))
				break
			}
		}
	}
	return docs
}

// decodeManifest decodes every document of a manifest into its API type, as
// strictly as the API server's strict field validation: unknown fields,
// fields in the wrong case and duplicate keys are errors, and so is a kind
// that is not in k8sTypes.
func decodeManifest(name string, data []byte) ([]k8sObject, error) {
	docs := splitDocuments(data)
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no documents", name)
	}
	var objs []k8sObject
	for i, doc := range docs {
		where := fmt.Sprintf("%s#%d", name, i+1)
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(j, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		newObj, ok := k8sTypes[tm.APIVersion+" "+tm.Kind]
		if !ok {
			return nil, fmt.Errorf("%s: unknown kind %q in apiVersion %q", where, tm.Kind, tm.APIVersion)
		}
		obj := newObj()
		strict, err := k8sjson.UnmarshalStrict(j, obj, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, tm.Kind, err)
		}
		if len(strict) > 0 {
			return nil, fmt.Errorf("%s: %s: %w", where, tm.Kind, errors.Join(strict...))
		}
		objs = append(objs, k8sObject{where: where, kind: tm.Kind, obj: obj})
	}
	return objs, nil
}

// dockerImage is what a Dockerfile gives a container that does not set
// command or args.
type dockerImage struct {
	entrypoint []string
	cmd        []string
}

// argv is the command line Kubernetes runs for c in image (nil when unknown).
func (img *dockerImage) argv(c corev1.Container) []string {
	switch {
	case len(c.Command) > 0:
		return append(slices.Clone(c.Command), c.Args...)
	case img == nil:
		return nil
	case len(c.Args) > 0:
		return append(slices.Clone(img.entrypoint), c.Args...)
	default:
		return append(slices.Clone(img.entrypoint), img.cmd...)
	}
}

// checkManifest checks what matters to proxy-await in the objects of one
// manifest: every container runs proxy-await with arguments it accepts, for
// the mesh its pod is injected with; Jobs shut the proxy down; a term-delay
// and its kill-after fit in the grace period; Services and volumes point at
// objects of the same manifest. img is the image built by the Dockerfile
// beside the manifest, or nil.
func checkManifest(objs []k8sObject, img *dockerImage) error {
	var errs []error
	fail := func(where, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{where}, args...)...))
	}
	configMaps := map[string]*corev1.ConfigMap{}
	for _, o := range objs {
		if cm, ok := o.obj.(*corev1.ConfigMap); ok {
			configMaps[cm.Name] = cm
		}
	}
	var deployments []*appsv1.Deployment
	for _, o := range objs {
		var (
			meta *corev1.PodTemplateSpec
			job  bool
		)
		switch v := o.obj.(type) {
		case *batchv1.Job:
			checkName(fail, o, v.Name)
			meta, job = &v.Spec.Template, true
		case *batchv1.CronJob:
			checkName(fail, o, v.Name)
			if v.Spec.Schedule == "" {
				fail(o.where, "CronJob %q has no schedule", v.Name)
			}
			meta, job = &v.Spec.JobTemplate.Spec.Template, true
		case *appsv1.Deployment:
			checkName(fail, o, v.Name)
			meta = &v.Spec.Template
			deployments = append(deployments, v)
			if v.Spec.Selector == nil || len(v.Spec.Selector.MatchLabels) == 0 {
				fail(o.where, "Deployment %q has no selector", v.Name)
			} else if !labelsMatch(v.Spec.Selector.MatchLabels, meta.Labels) {
				fail(o.where, "Deployment %q: selector %v does not match the pod labels %v", v.Name, v.Spec.Selector.MatchLabels, meta.Labels)
			}
		case *corev1.Service:
			checkName(fail, o, v.Name)
		case *corev1.ConfigMap:
			checkName(fail, o, v.Name)
			continue
		}
		if meta != nil {
			checkPod(fail, o, meta, job, img, configMaps)
		}
	}
	for _, o := range objs {
		if svc, ok := o.obj.(*corev1.Service); ok {
			checkService(fail, o, svc, deployments)
		}
	}
	return errors.Join(errs...)
}

type failFunc func(where, format string, args ...any)

func checkName(fail failFunc, o k8sObject, name string) {
	if name == "" {
		fail(o.where, "%s has no metadata.name", o.kind)
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkPod checks the pod template of a Job (job) or Deployment.
func checkPod(fail failFunc, o k8sObject, tpl *corev1.PodTemplateSpec, job bool, img *dockerImage, configMaps map[string]*corev1.ConfigMap) {
	spec := &tpl.Spec
	if len(spec.Containers) == 0 {
		fail(o.where, "%s has no containers", o.kind)
	}
	if job && spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		fail(o.where, "%s: restartPolicy must be Never or OnFailure, not %q", o.kind, spec.RestartPolicy)
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
			fail(o.where, "volume %q: no ConfigMap %q in the same manifest", v.Name, v.ConfigMap.Name)
		}
	}
	mesh := "none"
	switch {
	case tpl.Annotations["linkerd.io/inject"] == "enabled":
		mesh = "linkerd"
	case tpl.Labels["sidecar.istio.io/inject"] == "true" || tpl.Annotations["sidecar.istio.io/inject"] == "true":
		mesh = "istio"
	}
	grace := 30 * time.Second // the Kubernetes default
	if spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	}
	for _, c := range spec.Containers {
		where := fmt.Sprintf("%s: container %q", o.where, c.Name)
		if c.Name == "" {
			fail(o.where, "a container has no name")
		}
		if c.Image == "" {
			fail(where, "no image")
		}
		argv := img.argv(c)
		if len(argv) == 0 {
			fail(where, "no command, and no Dockerfile beside the manifest to say the image's")
			continue
		}
		if name := path.Base(argv[0]); name != "proxy-await" {
			fail(where, "runs %q, not proxy-await", argv[0])
			continue
		}
		cfg, err := parseConfig("proxy-await", argv[1:], containerEnv(c))
		if err != nil {
			fail(where, "proxy-await %s: %v", strings.Join(argv[1:], " "), err)
			continue
		}
		switch {
		case mesh == "none" && len(cfg.readyURLs) > 0:
			fail(where, "the pod is not meshed, but proxy-await waits for %v (use --proxy none)", cfg.readyURLs)
		case mesh != "none" && cfg.proxy != mesh:
			fail(where, "the pod is injected with %s, but proxy-await uses --proxy %s", mesh, cfg.proxy)
		}
		if job && !cfg.shutdown {
			fail(where, "a %s must use --shutdown, or its pod never completes", o.kind)
		}
		if job && cfg.termDelay > 0 {
			fail(where, "a %s has no endpoints to leave: drop --term-delay", o.kind)
		}
		if cfg.termDelay > 0 {
			if cfg.killAfter == 0 {
				fail(where, "--term-delay %s without --kill-after leaves the shutdown unbounded", cfg.termDelay)
			}
			if need := cfg.termDelay + cfg.killAfter + graceMargin; need >= grace {
				fail(where, "terminationGracePeriodSeconds %d must be more than term-delay %s + kill-after %s + margin %s = %s",
					int(grace.Seconds()), cfg.termDelay, cfg.killAfter, graceMargin, need)
			}
			if c.ReadinessProbe == nil {
				fail(where, "serves traffic (--term-delay) but has no readinessProbe")
			}
		}
		if cfg.drainQuiet > 0 && c.ReadinessProbe != nil {
			// Each probe is a new connection to the application.
			period := 10 * time.Second
			if c.ReadinessProbe.PeriodSeconds != 0 {
				period = time.Duration(c.ReadinessProbe.PeriodSeconds) * time.Second
			}
			if period <= cfg.drainQuiet {
				fail(where, "readinessProbe.periodSeconds %s must be more than --drain-quiet %s, or the probes keep the drain from going quiet", period, cfg.drainQuiet)
			}
		}
		if path.Base(cfg.command[0]) == "haproxy" {
			checkHAProxy(fail, where, cfg, c, spec.Volumes, configMaps)
		}
	}
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

// checkHAProxy checks proxy-await in front of HAProxy: a pod deletion must
// be HAProxy's soft stop, and hard-stop-after in its configuration must end
// the soft stop before --kill-after does.
func checkHAProxy(fail failFunc, where string, cfg *config, c corev1.Container, vols []corev1.Volume, configMaps map[string]*corev1.ConfigMap) {
	if cfg.rewrite[syscall.SIGTERM] != syscall.SIGUSR1 {
		fail(where, "HAProxy needs --rewrite TERM:USR1: SIGTERM is its hard stop")
	}
	i := slices.Index(cfg.command, "-f")
	if i < 0 || i+1 >= len(cfg.command) {
		fail(where, "haproxy without -f CONFIG")
		return
	}
	cfgFile := cfg.command[i+1]
	haproxyCfg, ok := mountedConfigMapKey(cfgFile, c.VolumeMounts, vols, configMaps)
	if !ok {
		fail(where, "%s is not a key of a ConfigMap mounted in the container", cfgFile)
		return
	}
	hardStop, err := hardStopAfter(haproxyCfg)
	switch {
	case err != nil:
		fail(where, "%s: %v", cfgFile, err)
	case hardStop == 0:
		fail(where, "%s has no hard-stop-after: the soft stop is bounded only by --kill-after", cfgFile)
	case cfg.killAfter <= hardStop:
		fail(where, "--kill-after %s must be more than hard-stop-after %s, so that HAProxy ends its own drain", cfg.killAfter, hardStop)
	}
}

// mountedConfigMapKey returns the content of the ConfigMap key mounted at file.
func mountedConfigMapKey(file string, mounts []corev1.VolumeMount, vols []corev1.Volume, configMaps map[string]*corev1.ConfigMap) (string, bool) {
	for _, m := range mounts {
		if path.Dir(file) != path.Clean(m.MountPath) {
			continue
		}
		for _, v := range vols {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			if cm := configMaps[v.ConfigMap.Name]; cm != nil {
				s, ok := cm.Data[path.Base(file)]
				return s, ok
			}
		}
	}
	return "", false
}

var hardStopRE = regexp.MustCompile(`(?m)^\s*hard-stop-after\s+(\S+)`)

// hardStopAfter reads hard-stop-after from an HAProxy configuration (0 when
// absent). HAProxy's time unit is milliseconds when none is given.
func hardStopAfter(haproxyCfg string) (time.Duration, error) {
	m := hardStopRE.FindStringSubmatch(haproxyCfg)
	if m == nil {
		return 0, nil
	}
	if n, err := strconv.Atoi(m[1]); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	v := m[1]
	if strings.HasSuffix(v, "d") {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err != nil {
			return 0, fmt.Errorf("bad hard-stop-after %q", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("bad hard-stop-after %q", v)
	}
	return d, nil
}

// checkService checks that a Service selects the pods of a Deployment of the
// same manifest and targets ports they declare.
func checkService(fail failFunc, o k8sObject, svc *corev1.Service, deployments []*appsv1.Deployment) {
	if len(svc.Spec.Ports) == 0 {
		fail(o.where, "Service %q has no ports", svc.Name)
	}
	for _, d := range deployments {
		if len(svc.Spec.Selector) == 0 || !labelsMatch(svc.Spec.Selector, d.Spec.Template.Labels) {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if !containerPort(d.Spec.Template.Spec.Containers, p.TargetPort.String(), p.Port) {
				fail(o.where, "Service %q: port %q targets %s, which no container of Deployment %q declares", svc.Name, p.Name, p.TargetPort.String(), d.Name)
			}
		}
		return
	}
	fail(o.where, "Service %q selects no Deployment of the same manifest", svc.Name)
}

func containerPort(cs []corev1.Container, target string, port int32) bool {
	if target == "" || target == "0" {
		target = strconv.Itoa(int(port))
	}
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Name == target || strconv.Itoa(int(p.ContainerPort)) == target {
				return true
			}
		}
	}
	return false
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// exampleManifests lists every YAML file under examples/.
func exampleManifests(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(examplesDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	require.NoError(t, err)
	slices.Sort(files)
	return files
}

func TestExamples(t *testing.T) {
	want := map[string][]string{
		"examples/linkerd-job.yaml":           {"Job"},
		"examples/istio-cronjob.yaml":         {"CronJob"},
		"examples/haproxy-deployment.yaml":    {"ConfigMap", "Deployment", "Service"},
		"examples/distroless/deployment.yaml": {"Deployment", "Service"},
	}
	files := exampleManifests(t)
	for f := range want {
		assert.Contains(t, files, f, "an example is missing")
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			objs, err := decodeManifest(f, data)
			require.NoError(t, err)
			if kinds, ok := want[f]; ok {
				var got []string
				for _, o := range objs {
					got = append(got, o.kind)
				}
				assert.Equal(t, kinds, got, "the kinds of %s", f)
			}
			// A manifest beside a Dockerfile runs the image it builds.
			var img *dockerImage
			if df := filepath.Join(filepath.Dir(f), "Dockerfile"); fileExists(df) {
				img = imageOf(t, df)
			}
			require.NoError(t, checkManifest(objs, img))
		})
	}
}

// TestExamplesHAProxyConfig has HAProxy itself check the configuration that
// the HAProxy example mounts.
func TestExamplesHAProxyConfig(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("haproxy is not installed: run `make deps` (or apt-get install haproxy)")
	}
	data, err := os.ReadFile("examples/haproxy-deployment.yaml")
	require.NoError(t, err)
	objs, err := decodeManifest("haproxy-deployment.yaml", data)
	require.NoError(t, err)
	var haproxyCfg string
	for _, o := range objs {
		if cm, ok := o.obj.(*corev1.ConfigMap); ok {
			haproxyCfg = cm.Data["haproxy.cfg"]
		}
	}
	require.NotEmpty(t, haproxyCfg, "no ConfigMap with haproxy.cfg")
	f := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(f, []byte(haproxyCfg), 0o644))
	out, err := exec.Command(bin, "-c", "-f", f).CombinedOutput()
	require.NoError(t, err, "haproxy -c:\n%s", out)
	assert.Contains(t, string(out), "Configuration file is valid")
}

// validDeployment and validJob pass checkManifest; each broken case below
// changes one thing in one of them.
const validDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 40
      containers:
        - name: web
          image: registry.example.com/web:1
          command: [/proxy-await]
          args: [--proxy, none, --term-delay, 15s, --kill-after, 15s, --, /web]
          ports:
            - {name: http, containerPort: 8080}
          readinessProbe:
            httpGet: {path: /ready, port: http}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: http}
`

const validJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: job
spec:
  template:
    metadata:
      annotations:
        linkerd.io/inject: enabled
    spec:
      restartPolicy: Never
      containers:
        - name: job
          image: registry.example.com/job:1
          command: [/proxy-await]
          args: [--shutdown, --, /job]
`

func TestExamplesValidatorRejectsBroken(t *testing.T) {
	for _, base := range []string{validDeployment, validJob} {
		objs, err := decodeManifest("valid.yaml", []byte(base))
		require.NoError(t, err)
		require.NoError(t, checkManifest(objs, nil))
	}
	tests := []struct {
		name, base, old, new, want string
	}{
		{"misspelt field", validDeployment, "terminationGracePeriodSeconds:", "terminationGracePeriod:", `unknown field "spec.template.spec.terminationGracePeriod"`},
		{"field in the wrong case", validDeployment, "containerPort:", "ContainerPort:", `unknown field "spec.template.spec.containers[0].ports[0].ContainerPort"`},
		{"duplicate key", validJob, "  name: job\n", "  name: job\n  name: job2\n", "already set"},
		{"wrong type", validDeployment, "terminationGracePeriodSeconds: 40", "terminationGracePeriodSeconds: 40s", "terminationGracePeriodSeconds"},
		{"unknown kind", validJob, "kind: Job", "kind: Jbo", `unknown kind "Jbo"`},
		{"old apiVersion", validDeployment, "apps/v1", "extensions/v1beta1", `unknown kind "Deployment" in apiVersion "extensions/v1beta1"`},
		{"no containers", validJob, "      containers:\n", "      initContainers:\n", "has no containers"},
		{"no image", validJob, "image: registry.example.com/job:1", "imagePullPolicy: Always", "no image"},
		{"not proxy-await", validJob, "command: [/proxy-await]", "command: [/bin/sh]", "not proxy-await"},
		{"a flag proxy-await rejects", validDeployment, "--term-delay, 15s", "--term-dealy, 15s", "unknown flag"},
		{"a bad duration", validDeployment, "--kill-after, 15s", "--kill-after, soon", "--kill-after"},
		{"no command for proxy-await", validJob, "--shutdown, --, /job", "--shutdown, --", "no command given"},
		{"Job without --shutdown", validJob, "[--shutdown, --, /job]", "[--, /job]", "must use --shutdown"},
		{"wrong preset for the mesh", validJob, "[--shutdown,", "[--proxy, istio, --shutdown,", "injected with linkerd"},
		{"unmeshed pod waits for Linkerd", validDeployment, "--proxy, none, ", "", "not meshed"},
		{"grace period too short", validDeployment, "terminationGracePeriodSeconds: 40", "terminationGracePeriodSeconds: 35", "must be more than term-delay 15s + kill-after 15s + margin 5s = 35s"},
		{"default grace period too short", validDeployment, "      terminationGracePeriodSeconds: 40\n", "", "terminationGracePeriodSeconds 30"},
		{"term-delay without kill-after", validDeployment, ", --kill-after, 15s", "", "without --kill-after"},
		{"drain-quiet slower than the probes", validDeployment, "--kill-after, 15s", "--kill-after, 15s, --drain-quiet, 10s", "periodSeconds 10s must be more than --drain-quiet 10s"},
		{"selector misses the pods", validDeployment, "matchLabels: {app: web}", "matchLabels: {app: api}", "does not match the pod labels"},
		{"Service targets no port", validDeployment, "targetPort: http", "targetPort: web", "targets web"},
		{"Service selects nothing", validDeployment, "selector: {app: web}\n  ports", "selector: {app: api}\n  ports", "selects no Deployment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, tt.base, tt.old)
			broken := strings.Replace(tt.base, tt.old, tt.new, 1)
			objs, err := decodeManifest("broken.yaml", []byte(broken))
			if err == nil {
				err = checkManifest(objs, nil)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestExamplesHAProxyChecks(t *testing.T) {
	data, err := os.ReadFile("examples/haproxy-deployment.yaml")
	require.NoError(t, err)
	manifest := string(data)
	tests := []struct{ name, old, new, want string }{
		{"no soft stop", "            - --rewrite\n            - TERM:USR1\n", "", "--rewrite TERM:USR1"},
		{"no hard-stop-after", "\n        hard-stop-after 15s", "", "has no hard-stop-after"},
		{"hard-stop-after beyond kill-after", "\n        hard-stop-after 15s", "\n        hard-stop-after 30s", "must be more than hard-stop-after 30s"},
		{"hard-stop-after in milliseconds", "\n        hard-stop-after 15s", "\n        hard-stop-after 25000", "must be more than hard-stop-after 25s"},
		{"config not mounted", "mountPath: /usr/local/etc/haproxy", "mountPath: /etc/haproxy", "is not a key of a ConfigMap"},
		{"ConfigMap missing", "configMap:\n            name: haproxy", "configMap:\n            name: haproxy-cfg", `no ConfigMap "haproxy-cfg"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, manifest, tt.old)
			objs, err := decodeManifest("haproxy.yaml", []byte(strings.Replace(manifest, tt.old, tt.new, 1)))
			require.NoError(t, err)
			err = checkManifest(objs, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestExamplesSplitDocuments(t *testing.T) {
	docs := splitDocuments([]byte("# only a comment\n---\na: 1\n--- # next\nb: 2\n---\n\n---\nc: |\n  ---x\n"))
	require.Len(t, docs, 3)
	assert.Equal(t, "\na: 1\n", string(docs[0]))
	assert.Equal(t, "\nb: 2\n", string(docs[1]))
	assert.Equal(t, "\nc: |\n  ---x\n", string(docs[2]))
}

// dockerInstr is one instruction of a Dockerfile.
type dockerInstr struct {
	cmd  string // upper case: FROM, COPY, ...
	args string
}

// parseDockerfile returns the instructions of a Dockerfile: comments and
// blank lines left out, continuation lines joined.
func parseDockerfile(data []byte) ([]dockerInstr, error) {
	var (
		instrs []dockerInstr
		cur    string
	)
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(t, `\`); ok {
			cur += strings.TrimSpace(cont) + " "
			continue
		}
		cur += t
		cmd, args, _ := strings.Cut(cur, " ")
		instrs = append(instrs, dockerInstr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur = ""
	}
	if cur != "" {
		return nil, fmt.Errorf("a continuation line ends the file")
	}
	return instrs, nil
}

// execForm parses the JSON (exec) form of ENTRYPOINT, CMD or RUN.
func execForm(args string) ([]string, error) {
	var v []string
	if !strings.HasPrefix(args, "[") {
		return nil, fmt.Errorf("%s is the shell form: use the exec form [\"...\"]", args)
	}
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return nil, fmt.Errorf("%s: %w", args, err)
	}
	return v, nil
}

// finalStage returns the instructions of the last stage and the base image
// of every named stage.
func finalStage(instrs []dockerInstr) (final []dockerInstr, from string, stages map[string]string) {
	stages = map[string]string{}
	for _, in := range instrs {
		if in.cmd != "FROM" {
			final = append(final, in)
			continue
		}
		f := strings.Fields(in.args)
		from, final = f[0], nil
		if len(f) == 3 && strings.EqualFold(f[1], "AS") {
			stages[f[2]] = f[0]
		}
	}
	return final, from, stages
}

func readDockerfile(t *testing.T, name string) ([]dockerInstr, string) {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	instrs, err := parseDockerfile(data)
	require.NoError(t, err)
	return instrs, string(data)
}

const proxyAwaitImage = "ghcr.io/proxy-await/proxy-await:v1"

// imageOf checks a Dockerfile that builds an application image with
// proxy-await copied in from the release image as its entrypoint, and
// returns the image's entrypoint and command.
func imageOf(t *testing.T, name string) *dockerImage {
	t.Helper()
	instrs, _ := readDockerfile(t, name)
	final, _, stages := finalStage(instrs)
	var (
		dest string
		img  dockerImage
	)
	for _, in := range final {
		switch in.cmd {
		case "COPY":
			f := strings.Fields(in.args)
			if src, ok := strings.CutPrefix(f[0], "--from="); ok && len(f) == 3 && f[1] == "/proxy-await" {
				if stages[src] != "" {
					src = stages[src]
				}
				assert.Equal(t, proxyAwaitImage, src, "%s: proxy-await comes from the release image", name)
				dest = f[2]
			}
		case "ENTRYPOINT":
			v, err := execForm(in.args)
			require.NoError(t, err, "%s: ENTRYPOINT", name)
			img.entrypoint = v
		case "CMD":
			v, err := execForm(in.args)
			require.NoError(t, err, "%s: CMD", name)
			img.cmd = v
		case "RUN", "SHELL":
			t.Errorf("%s: the final stage runs %s %s, but the image has no shell", name, in.cmd, in.args)
		}
	}
	require.NotEmpty(t, dest, "%s: no COPY --from=... /proxy-await in the final stage", name)
	require.NotEmpty(t, img.entrypoint, "%s: no ENTRYPOINT", name)
	assert.Equal(t, dest, img.entrypoint[0], "%s: ENTRYPOINT runs the proxy-await it copied", name)
	return &img
}

// TestDockerfileDistroless checks the distroless example: proxy-await from
// the release image as the exec-form ENTRYPOINT of an image without a shell,
// with a default command proxy-await accepts.
func TestDockerfileDistroless(t *testing.T) {
	const name = "examples/distroless/Dockerfile"
	instrs, _ := readDockerfile(t, name)
	_, from, _ := finalStage(instrs)
	assert.True(t, strings.HasPrefix(from, "gcr.io/distroless/static"), "the final stage is FROM %s", from)
	img := imageOf(t, name)
	argv := img.argv(corev1.Container{})
	require.NotEmpty(t, argv)
	_, err := parseConfig("proxy-await", argv[1:], func(string) (string, bool) { return "", false })
	require.NoError(t, err, "the image's default command: %q", argv)
}

func TestDockerfileParse(t *testing.T) {
	instrs, err := parseDockerfile([]byte("# syntax=docker/dockerfile:1\nFROM a AS b\n\nRUN x \\\n  y\ncopy --from=b /p /p\n"))
	require.NoError(t, err)
	assert.Equal(t, []dockerInstr{{"FROM", "a AS b"}, {"RUN", "x y"}, {"COPY", "--from=b /p /p"}}, instrs)
	_, err = parseDockerfile([]byte("FROM a\nRUN x \\\n"))
	assert.Error(t, err)
	_, err = execForm("/proxy-await --")
	assert.ErrorContains(t, err, "shell form")
	v, err := execForm(`["/proxy-await", "--"]`)
	require.NoError(t, err)
	assert.Equal(t, []string{"/proxy-await", "--"}, v)
}
