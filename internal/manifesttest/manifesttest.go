// Package manifesttest reads Kubernetes manifests for the tests of examples/
// and docs/: strictly, as the API server's field validation does, down to
// the proxy-await command lines of their pods, and checks that proxy-await
// accepts each.
package manifesttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/proxies"
)

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

// Decode decodes every document of a YAML stream into its API type,
// strictly: unknown fields, fields in the wrong case and duplicate keys are
// errors, and so is a kind that is not in k8sTypes. Documents of comments
// only are left out.
func Decode(data []byte) ([]any, error) {
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
		if err := StrictJSON(j, obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("no documents")
	}
	return objs, nil
}

// PodTemplate is the pod an object runs, if any.
func PodTemplate(obj any) (*corev1.PodTemplateSpec, bool) {
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

// StrictJSON decodes as the API server's strict field validation does.
func StrictJSON(data []byte, into any) error {
	strict, err := k8sjson.UnmarshalStrict(data, into, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
	if err == nil {
		err = errors.Join(strict...)
	}
	return err
}

// ContainerEnv is a getenv for parseConfig that sees the container's literal
// environment variables.
func ContainerEnv(c corev1.Container) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value, true
			}
		}
		return "", false
	}
}

// Run is one proxy-await command line of a pod: a container's, or one of
// its lifecycle hooks'.
type Run struct {
	Container corev1.Container
	Argv      []string
}

// Runs finds every proxy-await command line of a pod template;
// entrypoint is the image's, for containers that set args alone.
func Runs(tpl *corev1.PodTemplateSpec, entrypoint []string) []Run {
	var runs []Run
	for _, c := range append(slices.Clone(tpl.Spec.InitContainers), tpl.Spec.Containers...) {
		argv := append(slices.Clone(c.Command), c.Args...)
		if len(c.Command) == 0 && entrypoint != nil {
			argv = append(slices.Clone(entrypoint), c.Args...)
		}
		argvs := [][]string{argv}
		if c.Lifecycle != nil {
			for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h != nil && h.Exec != nil {
					argvs = append(argvs, h.Exec.Command)
				}
			}
		}
		for _, argv := range argvs {
			if len(argv) > 0 && path.Base(argv[0]) == "proxy-await" {
				runs = append(runs, Run{c, argv})
			}
		}
	}
	return runs
}

// CheckRun checks that proxy-await accepts a command line, and that a pod
// that shuts a proxy down turns the proxy's shutdown endpoint on where an
// annotation switches it (Linkerd's, off by default since 2.16).
func CheckRun(t require.TestingT, tpl *corev1.PodTemplateSpec, r Run) (*config.Config, bool) {
	cfg, err := config.Parse("proxy-await", r.Argv[1:], ContainerEnv(r.Container))
	if !assert.NoError(t, err, "container %q: proxy-await %s", r.Container.Name, strings.Join(r.Argv[1:], " ")) {
		return nil, false
	}
	for _, preset := range cfg.Proxies {
		px := proxies.Lookup(preset) // nil for none
		if px == nil {
			continue
		}
		if sw := px.ShutdownSwitch; cfg.Shutdown && sw.On != "" && sw.OffSince != (proxies.Version{}) {
			assert.Equal(t, sw.On, tpl.Annotations[sw.Key],
				"container %q shuts a %s proxy down, whose shutdown endpoint is off unless annotated", r.Container.Name, preset)
		}
	}
	return cfg, true
}
