// pod.go: the pod templates of an object, of any kind that holds one, as
// small structs whose every value knows its line. A document's node tree
// is dropped once they are read, so that a command holds what matters of
// its input, not the input's trees.

package manifest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Pod is a pod template and where it came from.
type Pod struct {
	File, Kind, Name, Namespace string
	Line                        int // the line of the object that holds the template
	NamespaceLine               int // metadata.namespace's line, 0 when it has none

	Job         bool // a Job's or CronJob's (or any jobTemplate's): it should complete
	Labels      Meta
	Annotations Meta
	NS          *Namespace // the pod's Namespace, when the input has it (Input.Link)
	NSConflict  string     // other files that define NS differently, for the warning
	// Grace is the pod's grace period, from GraceLine (0 when it is not
	// set), a field called GraceField: terminationGracePeriodSeconds, or
	// what a platform makes it of (GraceWhy says so, for messages).
	Grace                time.Duration
	GraceLine            int
	GraceField, GraceWhy string
	RestartPolicy        Scalar
	Deadline             Scalar       // activeDeadlineSeconds: the Job's, else the pod's own; "" when neither bounds the pod
	Containers           []*Container // init containers first, in order
	HostNetwork          bool         // its ports are the node's
	Volumes              []Volume
	// SharedProcesses is shareProcessNamespace: the containers see one
	// another's processes.
	SharedProcesses bool

	bounds Bounds
}

// OptOut is the annotation, on a pod template or its Namespace, that
// leaves the pod alone: inject adopts nothing in it, and the admission
// policy does not judge it, when its value is OptOutValue.
const (
	OptOut      = "proxy-await.io/inject"
	OptOutValue = "disabled"
)

// DefaultGrace is terminationGracePeriodSeconds when a pod does not set it:
// the API server's default.
const DefaultGrace = 30 * time.Second

// podTemplate is a pod template that an object holds, and whether it is a
// Job's, which should complete, with the spec of that Job.
type podTemplate struct {
	node    *yaml.Node
	job     bool
	jobSpec *yaml.Node // the Job's spec, which holds the template; nil when not a Job's
}

// templates are the pod templates o holds: a Pod is one; other kinds hold
// one at spec.template (Deployment, Job, an Argo Rollout, a Knative
// Service) or spec.jobTemplate.spec.template (CronJob); a KEDA ScaledJob
// holds the Jobs it starts at spec.jobTargetRef.template, and an Argo
// Rollouts AnalysisTemplate one Job for each metric that runs one, at
// spec.metrics[].provider.job.spec.template.
func templates(o object) []podTemplate {
	has := func(tpl *yaml.Node) bool { return items(path(tpl, "spec", "containers")) != nil }
	if o.kind == "Pod" {
		if get(get(o.node, "spec"), "containers") != nil {
			return []podTemplate{{o.node, false, nil}}
		}
		return nil
	}
	spec := get(o.node, "spec")
	var out []podTemplate
	for _, at := range []struct {
		path []string
		job  bool
	}{{[]string{"template"}, o.kind == "Job"}, {[]string{"jobTemplate", "spec", "template"}, true}, {[]string{"jobTargetRef", "template"}, true}} {
		if tpl := path(spec, at.path...); has(tpl) {
			t := podTemplate{node: tpl, job: at.job}
			if at.job {
				t.jobSpec = path(spec, at.path[:len(at.path)-1]...)
			}
			out = append(out, t)
		}
	}
	for _, m := range items(get(spec, "metrics")) {
		if tpl := path(m, "provider", "job", "spec", "template"); has(tpl) {
			out = append(out, podTemplate{tpl, true, path(m, "provider", "job", "spec")})
		}
	}
	return out
}

// Knative Serving makes a revision's timeoutSeconds its pods'
// terminationGracePeriodSeconds (pkg/reconciler/revision/resources/deploy.go,
// BuildPodSpec), 300 when the revision does not set it
// (config.DefaultRevisionTimeoutSeconds, unless the cluster's
// config-defaults changes it); a template cannot set the grace period
// itself.
const (
	knativeGroup   = "serving.knative.dev/"
	knativeTimeout = 300 * time.Second
)

// JobName is what should complete, as messages name it: the Job or
// CronJob, or the Job that another kind starts (a ScaledJob's, an
// AnalysisTemplate's).
func (p *Pod) JobName() string {
	if p.Kind == "Job" || p.Kind == "CronJob" {
		return p.Kind
	}
	return p.Kind + "'s Job"
}

// podOf reads the pod template t of o.
func podOf(o object, t podTemplate, lines *fileLines, b Bounds) *Pod {
	tpl := t.node
	spec := get(tpl, "spec")
	p := &Pod{
		File: o.file, Kind: o.kind, Name: o.name, Namespace: o.namespace, Line: o.line, NamespaceLine: o.nsLine,
		Job:             t.job,
		Labels:          metaOf(path(tpl, "metadata", "labels")),
		Annotations:     metaOf(path(tpl, "metadata", "annotations")),
		Grace:           DefaultGrace,
		GraceField:      "terminationGracePeriodSeconds",
		RestartPolicy:   scalarOf(get(spec, "restartPolicy")),
		Deadline:        scalarOf(get(spec, "activeDeadlineSeconds")),
		SharedProcesses: str(get(spec, "shareProcessNamespace")) == "true",
		bounds:          b,
	}
	if d := get(t.jobSpec, "activeDeadlineSeconds"); d != nil {
		p.Deadline = scalarOf(d)
	}
	graceField := "terminationGracePeriodSeconds"
	if strings.HasPrefix(str(get(o.node, "apiVersion")), knativeGroup) {
		p.Grace, p.GraceField, graceField = knativeTimeout, "timeoutSeconds", "timeoutSeconds"
		p.GraceWhy = " (Knative makes a revision's timeoutSeconds its pods' grace period; 300 when it is not set)"
	}
	if g := get(spec, graceField); g != nil {
		if n, err := strconv.ParseInt(str(g), 10, 64); err == nil && n >= 0 {
			p.Grace, p.GraceLine = time.Duration(n)*time.Second, lineOf(g)
		}
	}
	p.HostNetwork = str(get(spec, "hostNetwork")) == "true"
	for _, v := range items(get(spec, "volumes")) {
		vol := Volume{Name: str(get(v, "name"))}
		if cm := get(v, "configMap"); cm != nil {
			vol.ConfigMap = str(get(cm, "name"))
			for _, it := range items(get(cm, "items")) {
				vol.Items = append(vol.Items, KeyPath{Key: str(get(it, "key")), Path: str(get(it, "path"))})
			}
		}
		p.Volumes = append(p.Volumes, vol)
	}
	for i, n := range items(get(spec, "initContainers")) {
		p.Containers = append(p.Containers, containerOf(n, true, lines))
		p.Containers[len(p.Containers)-1].Index = i
	}
	for i, n := range items(get(spec, "containers")) {
		p.Containers = append(p.Containers, containerOf(n, false, lines))
		p.Containers[len(p.Containers)-1].Index = i
	}
	for i, c := range p.Containers {
		if c.Name == "" {
			c.Name = fmt.Sprintf("#%d", i+1) // a Knative Service's may have none
		}
	}
	return p
}

// Label is the pod's label or annotation called key, as several injectors
// read either.
func (p *Pod) Label(key string) (Scalar, bool) {
	if v, ok := p.Labels.Get(key); ok {
		return v, true
	}
	return p.Annotations.Get(key)
}

// Nested reads the field of a setting of the pod that holds YAML or JSON
// of its own (Istio's proxy.istio.io/config), within the bounds of reading:
// its text, and whether it is set; an error that ErrPastBound tells past
// them.
func (p *Pod) Nested(setting, field string) (string, bool, error) {
	root, err := p.bounds.nested(setting)
	if err != nil {
		return "", false, err
	}
	v := get(root, field)
	return str(v), v != nil, nil
}

// Container is a container of a pod template, as the manifest writes it.
type Container struct {
	Name          string
	Line          int
	Index         int // in initContainers or containers
	Init          bool
	RestartAlways bool // a native sidecar, when Init
	Image         string
	Command       []Scalar
	Args          []Scalar
	Env           []EnvVar
	EnvFrom       []Reference
	PreStop       Hook
	Probes        []Probe
	Ports         []NamedPort // its named ports
	PortNumbers   []int       // every containerPort it declares
	Mounts        []Mount

	Vars *Variables // env and envFrom as the kubelet resolves them (Input.Link)
}

// Volume is a volume of a pod: its name, and for a ConfigMap's, which, and
// its items (none: every key, each a file of its name).
type Volume struct {
	Name      string
	ConfigMap string
	Items     []KeyPath
}

// KeyPath is an item of a ConfigMap's volume: the key, and the file it is.
type KeyPath struct{ Key, Path string }

// Mount is a container's volumeMount.
type Mount struct {
	Name, Path, SubPath string
}

// Hook is a lifecycle hook as far as how long it takes can be read: its
// sleep action, or the command it execs.
type Hook struct {
	Sleep time.Duration
	Exec  []string
}

// NamedPort is a container's port that has a name, which probes may use.
type NamedPort struct {
	Name string
	Port int
}

// EnvVar is an entry of a container's env.
type EnvVar struct {
	Name  string
	Line  int
	Value string
	From  *Reference // valueFrom, when it has one
}

// Reference is where a valueFrom or an envFrom takes its value: a key of a
// ConfigMap or a Secret, or what only the running pod knows.
type Reference struct {
	Kind     string // ConfigMap, Secret, or "" for the downward API and the like
	Name     string
	Key      string // "" for envFrom
	Prefix   string // envFrom's
	Optional bool
	Line     int
}

// Probe is one of a container's probes that reaches a port.
type Probe struct {
	Kind    string // readinessProbe, livenessProbe, startupProbe
	Handler string // httpGet, tcpSocket, grpc
	Port    Scalar // a number or a named port
	Period  int    // periodSeconds
	Host    string
	Path    string // httpGet's
	Scheme  string // httpGet's: HTTP or HTTPS
	Headers bool   // httpGet's httpHeaders, which --app-probe does not send
}

// PortNumber is the port a probe reaches, a named port of c looked up;
// false when it names none.
func (c *Container) PortNumber(pr Probe) (int, bool) {
	if port, err := strconv.Atoi(pr.Port.Text); err == nil {
		return port, true
	}
	for _, p := range c.Ports {
		if p.Name == pr.Port.Text {
			return p.Port, true
		}
	}
	return 0, false
}

func containerOf(n *yaml.Node, init bool, lines *fileLines) *Container {
	c := &Container{
		Name:          str(get(n, "name")),
		Line:          lineOf(n),
		Init:          init,
		RestartAlways: init && str(get(n, "restartPolicy")) == "Always",
		Image:         str(get(n, "image")),
	}
	for _, e := range items(get(n, "env")) {
		v := EnvVar{Name: str(get(e, "name")), Line: lineOf(e), Value: str(get(e, "value"))}
		if from := get(e, "valueFrom"); from != nil {
			v.From = valueFrom(from)
		}
		c.Env = append(c.Env, v)
	}
	for _, e := range items(get(n, "envFrom")) {
		r := &Reference{Prefix: str(get(e, "prefix")), Line: lineOf(e)}
		for _, kind := range []string{"ConfigMap", "Secret"} {
			if ref := get(e, strings.ToLower(kind[:1])+kind[1:]+"Ref"); ref != nil {
				r.Kind, r.Name, r.Optional = kind, str(get(ref, "name")), str(get(ref, "optional")) == "true"
			}
		}
		c.EnvFrom = append(c.EnvFrom, *r)
	}
	for _, s := range items(get(n, "command")) {
		c.Command = append(c.Command, lines.scalar(s))
	}
	for _, s := range items(get(n, "args")) {
		c.Args = append(c.Args, lines.scalar(s))
	}
	for _, p := range items(get(n, "ports")) {
		port, err := strconv.Atoi(str(get(p, "containerPort")))
		if err != nil {
			continue
		}
		c.PortNumbers = append(c.PortNumbers, port)
		if name := str(get(p, "name")); name != "" {
			c.Ports = append(c.Ports, NamedPort{name, port})
		}
	}
	for _, kind := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		pr := get(n, kind)
		if pr == nil {
			continue
		}
		period := 10 // the API server's default
		if v, err := strconv.Atoi(str(get(pr, "periodSeconds"))); err == nil && v > 0 {
			period = v
		}
		for _, handler := range []string{"httpGet", "tcpSocket", "grpc"} {
			if h := get(pr, handler); h != nil {
				c.Probes = append(c.Probes, Probe{Kind: kind, Handler: handler, Port: scalarOf(get(h, "port")), Period: period,
					Host: str(get(h, "host")), Path: str(get(h, "path")), Scheme: str(get(h, "scheme")),
					Headers: len(items(get(h, "httpHeaders"))) > 0})
			}
		}
	}
	c.PreStop = hookOf(path(n, "lifecycle", "preStop"))
	for _, m := range items(get(n, "volumeMounts")) {
		c.Mounts = append(c.Mounts, Mount{Name: str(get(m, "name")), Path: str(get(m, "mountPath")), SubPath: str(get(m, "subPath"))})
	}
	return c
}

// hookOf reads a lifecycle hook: its sleep action, or its exec's command.
func hookOf(h *yaml.Node) Hook {
	var out Hook
	if s := str(path(h, "sleep", "seconds")); s != "" {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil && n > 0 {
			out.Sleep = time.Duration(n) * time.Second
		}
	}
	for _, it := range items(path(h, "exec", "command")) {
		out.Exec = append(out.Exec, str(it))
	}
	return out
}

// valueFrom reads an env entry's valueFrom.
func valueFrom(n *yaml.Node) *Reference {
	r := &Reference{Line: lineOf(n)}
	switch {
	case get(n, "configMapKeyRef") != nil:
		ref := get(n, "configMapKeyRef")
		r.Kind, r.Name, r.Key, r.Optional = "ConfigMap", str(get(ref, "name")), str(get(ref, "key")), str(get(ref, "optional")) == "true"
	case get(n, "secretKeyRef") != nil:
		ref := get(n, "secretKeyRef")
		r.Kind, r.Name, r.Key, r.Optional = "Secret", str(get(ref, "name")), str(get(ref, "key")), str(get(ref, "optional")) == "true"
	case get(n, "fieldRef") != nil:
		r.Key = "fieldRef " + str(path(n, "fieldRef", "fieldPath"))
	case get(n, "resourceFieldRef") != nil:
		r.Key = "resourceFieldRef " + str(path(n, "resourceFieldRef", "resource"))
	default:
		r.Key = "the running pod"
	}
	return r
}

// BaseName is a path's last element: the program a command names.
func BaseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Repository is an image reference without its digest and tag:
// "gcr.io/x/proxy" for "gcr.io/x/proxy:1.2@sha256:...". A registry's port
// ("localhost:5000/x") is not a tag.
func Repository(image string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	return repo
}
