// pods.go: the Kubernetes objects of a document and what --check keeps of
// them: the pod templates (of any kind that holds one), Namespaces,
// ConfigMaps and Secrets, as small structs whose every value knows its
// line. A document's node tree is dropped once they are read, so that a
// check holds what matters of its input, not the input's trees.

package check

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get is the value of key in the mapping m, following aliases and merge
// keys ("<<: *defaults"); nil when m is not a mapping or has no such key.
func get(m *yaml.Node, key string) *yaml.Node {
	k, _ := getKey(m, key)
	return k
}

// getKey is get, with the key's own node (for its line).
func getKey(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := deref(m.Content[i])
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, m.Content[i+1])
		case k.Value == key:
			return m.Content[i+1], k
		}
	}
	for _, src := range merges {
		src = deref(src)
		if src.Kind == yaml.SequenceNode {
			for _, s := range src.Content {
				if v, k := getKey(s, key); v != nil {
					return v, k
				}
			}
		} else if v, k := getKey(src, key); v != nil {
			return v, k
		}
	}
	return nil, nil
}

// path is get along a chain of keys.
func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = get(n, k)
	}
	return n
}

// str is a scalar's text: "" for a null, a missing node or a collection.
func str(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// items is a sequence's elements: nil for anything else.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// scalar is a value of the manifest and the line it is on. A scalar over
// several lines (a block scalar, a folded script) also knows where each of
// its lines starts, so that a word in it has a line of its own.
type scalar struct {
	s      string
	line   int
	breaks []int // offsets in s at which the next line of the file starts
	folded bool  // a folded block scalar (>), which joins its lines with spaces
}

// lineAt is the line of the file on which the text at offset off of s is.
func (v scalar) lineAt(off int) int {
	n := 0
	for n < len(v.breaks) && v.breaks[n] <= off {
		n++
	}
	return v.line + n
}

// lineOf is the line of a node, 0 for none.
func lineOf(n *yaml.Node) int {
	if n = deref(n); n == nil {
		return 0
	}
	return n.Line
}

// scalarOf is a node's text and line, without the lines inside it.
func scalarOf(n *yaml.Node) scalar {
	return scalar{s: str(n), line: lineOf(n)}
}

// meta is a mapping of scalars, as labels and annotations are, each value
// at its key's line: a few entries, kept as a slice, which costs a pod far
// less than a map.
type meta []metaEntry

type metaEntry struct {
	key   string
	value scalar
}

// metaOf reads a mapping of scalars; the last of a key wins, as it does
// for the API server.
func metaOf(n *yaml.Node) meta {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make(meta, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, metaEntry{str(n.Content[i]), scalar{s: str(n.Content[i+1]), line: lineOf(n.Content[i])}})
	}
	return out
}

// get is the value of key, if m has it.
func (m meta) get(key string) (scalar, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].key == key {
			return m[i].value, true
		}
	}
	return scalar{}, false
}

// at is the value of key, or none.
func (m meta) at(key string) scalar {
	v, _ := m.get(key)
	return v
}

// keys are m's keys, sorted.
func (m meta) keys() []string {
	var out []string
	for _, e := range m {
		if !slices.Contains(out, e.key) {
			out = append(out, e.key)
		}
	}
	slices.Sort(out)
	return out
}

// sameAs says whether two mappings hold the same values.
func (m meta) sameAs(o meta) bool {
	if len(m.keys()) != len(o.keys()) {
		return false
	}
	for _, k := range m.keys() {
		if v, ok := o.get(k); !ok || v.s != m.at(k).s {
			return false
		}
	}
	return true
}

// data is a ConfigMap's or Secret's data.
func data(n *yaml.Node) map[string]string {
	out := map[string]string{}
	for _, e := range metaOf(n) {
		out[e.key] = e.value.s
	}
	return out
}

// object is a Kubernetes object of a file.
type object struct {
	file      string
	kind      string
	name      string
	namespace string
	line      int
	nsLine    int // metadata.namespace's line, 0 when it has none
	node      *yaml.Node
}

// objects is what a document holds: one object, or the items of a List.
func objects(file string, root *yaml.Node) []object {
	kind := str(get(root, "kind"))
	if strings.HasSuffix(kind, "List") && get(root, "items") != nil {
		var out []object
		for _, it := range items(get(root, "items")) {
			out = append(out, objects(file, it)...)
		}
		return out
	}
	if kind == "" {
		return nil // not a Kubernetes object: a Helm values file, a kustomization
	}
	name := str(path(root, "metadata", "name"))
	if name == "" {
		name = str(path(root, "metadata", "generateName"))
	}
	ns := path(root, "metadata", "namespace")
	return []object{{file, kind, name, str(ns), lineOf(root), lineOf(ns), deref(root)}}
}

// namespace is a Namespace of the input: the labels and annotations that
// injectors read from it.
type namespace struct {
	file        string
	name        string
	line        int
	labels      meta
	annotations meta
}

func namespaceOf(o object) *namespace {
	return &namespace{file: o.file, name: o.name, line: o.line,
		labels:      metaOf(path(o.node, "metadata", "labels")),
		annotations: metaOf(path(o.node, "metadata", "annotations"))}
}

// meta is a Namespace's label or annotation called key.
func (ns *namespace) meta(key string) (scalar, bool) {
	if v, ok := ns.labels.get(key); ok {
		return v, true
	}
	return ns.annotations.get(key)
}

// sameAs says whether two definitions of a Namespace say the same.
func (ns *namespace) sameAs(o *namespace) bool {
	return ns.labels.sameAs(o.labels) && ns.annotations.sameAs(o.annotations)
}

// store is a ConfigMap's or Secret's data, which env and envFrom read.
type store struct {
	kind, namespace, name string
	data                  map[string]string
}

func storeOf(o object) *store {
	s := &store{kind: o.kind, namespace: o.namespace, name: o.name, data: map[string]string{}}
	if o.kind == "Secret" {
		for k, v := range data(path(o.node, "data")) {
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				s.data[k] = string(b)
			}
		}
		for k, v := range data(path(o.node, "stringData")) {
			s.data[k] = v // stringData wins, as the API server merges it
		}
		return s
	}
	s.data = data(path(o.node, "data"))
	return s
}

// pod is a pod template and where it came from.
type pod struct {
	object
	job           bool // a Job's or CronJob's (or any jobTemplate's): it should complete
	labels        meta
	annotations   meta
	ns            *namespace // the pod's Namespace, when the input has it
	nsConflict    string     // other files that define ns differently, for the warning
	grace         time.Duration
	graceLine     int          // the line of the field that sets grace, 0 when it is not set
	graceName     string       // that field: terminationGracePeriodSeconds, or a Knative revision's timeoutSeconds
	graceWhy      string       // why that field is the grace period, for messages, where it is not the pod's own
	restartPolicy scalar       // the pod's restartPolicy
	deadline      scalar       // activeDeadlineSeconds: the Job's, else the pod's own; "" when neither bounds the pod
	containers    []*container // init containers first, in order
}

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

// jobName is what should complete, as messages name it: the Job or
// CronJob, or the Job that another kind starts (a ScaledJob's, an
// AnalysisTemplate's).
func (p *pod) jobName() string {
	if p.kind == "Job" || p.kind == "CronJob" {
		return p.kind
	}
	return p.kind + "'s Job"
}

// podsOf are the pod templates of o.
func podsOf(o object, lines *fileLines) []*pod {
	var out []*pod
	for _, t := range templates(o) {
		out = append(out, podOf(o, t, lines))
	}
	return out
}

// podOf reads the pod template t of o.
func podOf(o object, t podTemplate, lines *fileLines) *pod {
	tpl := t.node
	spec := get(tpl, "spec")
	p := &pod{
		object:        o,
		job:           t.job,
		labels:        metaOf(path(tpl, "metadata", "labels")),
		annotations:   metaOf(path(tpl, "metadata", "annotations")),
		grace:         30 * time.Second, // the API server's default
		graceName:     "terminationGracePeriodSeconds",
		restartPolicy: scalarOf(get(spec, "restartPolicy")),
		deadline:      scalarOf(get(spec, "activeDeadlineSeconds")),
	}
	if d := get(t.jobSpec, "activeDeadlineSeconds"); d != nil {
		p.deadline = scalarOf(d)
	}
	graceField := "terminationGracePeriodSeconds"
	if strings.HasPrefix(str(get(o.node, "apiVersion")), knativeGroup) {
		p.grace, p.graceName, graceField = knativeTimeout, "timeoutSeconds", "timeoutSeconds"
		p.graceWhy = " (Knative makes a revision's timeoutSeconds its pods' grace period; 300 when it is not set)"
	}
	p.node = nil
	if g := get(spec, graceField); g != nil {
		if n, err := strconv.ParseInt(str(g), 10, 64); err == nil && n >= 0 {
			p.grace, p.graceLine = time.Duration(n)*time.Second, lineOf(g)
		}
	}
	for i, n := range items(get(spec, "initContainers")) {
		p.containers = append(p.containers, containerOf(n, true, lines))
		p.containers[len(p.containers)-1].index = i
	}
	for i, n := range items(get(spec, "containers")) {
		p.containers = append(p.containers, containerOf(n, false, lines))
		p.containers[len(p.containers)-1].index = i
	}
	for i, c := range p.containers {
		if c.name == "" {
			c.name = fmt.Sprintf("#%d", i+1) // a Knative Service's may have none
		}
	}
	return p
}

// label is the pod's label or annotation called key, as several injectors
// read either.
func (p *pod) label(key string) (scalar, bool) {
	if v, ok := p.labels.get(key); ok {
		return v, true
	}
	return p.annotations.get(key)
}

// container is a container of a pod template, as the manifest writes it.
type container struct {
	name          string
	line          int
	index         int // in initContainers or containers
	init          bool
	restartAlways bool // a native sidecar, when init
	image         string
	command       []scalar
	args          []scalar
	env           []envVar
	envFrom       []reference
	preStop       time.Duration // how long its preStop hook takes, where it says
	probes        []probe
	ports         []namedPort // its named ports
	portNumbers   []int       // every containerPort it declares

	vars *environment // env and envFrom as the kubelet resolves them (values.go)
}

// namedPort is a container's port that has a name, which probes may use.
type namedPort struct {
	name string
	port int
}

// envVar is an entry of a container's env.
type envVar struct {
	name  string
	line  int
	value string
	from  *reference // valueFrom, when it has one
}

// reference is where a valueFrom or an envFrom takes its value: a key of
// a ConfigMap or a Secret, or what only the running pod knows.
type reference struct {
	kind     string // ConfigMap, Secret, or "" for the downward API and the like
	name     string
	key      string // "" for envFrom
	prefix   string // envFrom's
	optional bool
	line     int
}

// probe is one of a container's probes that reaches a port.
type probe struct {
	kind    string // readinessProbe, livenessProbe, startupProbe
	handler string // httpGet, tcpSocket, grpc
	port    scalar // a number or a named port
	period  int    // periodSeconds
	host    string
	path    string // httpGet's
	scheme  string // httpGet's: HTTP or HTTPS
	headers bool   // httpGet's httpHeaders, which --app-probe does not send
}

func containerOf(n *yaml.Node, init bool, lines *fileLines) *container {
	c := &container{
		name:          str(get(n, "name")),
		line:          lineOf(n),
		init:          init,
		restartAlways: init && str(get(n, "restartPolicy")) == "Always",
		image:         str(get(n, "image")),
	}
	for _, e := range items(get(n, "env")) {
		v := envVar{name: str(get(e, "name")), line: lineOf(e), value: str(get(e, "value"))}
		if from := get(e, "valueFrom"); from != nil {
			v.from = valueFrom(from)
		}
		c.env = append(c.env, v)
	}
	for _, e := range items(get(n, "envFrom")) {
		r := &reference{prefix: str(get(e, "prefix")), line: lineOf(e)}
		for _, kind := range []string{"ConfigMap", "Secret"} {
			if ref := get(e, strings.ToLower(kind[:1])+kind[1:]+"Ref"); ref != nil {
				r.kind, r.name, r.optional = kind, str(get(ref, "name")), str(get(ref, "optional")) == "true"
			}
		}
		c.envFrom = append(c.envFrom, *r)
	}
	for _, s := range items(get(n, "command")) {
		c.command = append(c.command, lines.scalar(s))
	}
	for _, s := range items(get(n, "args")) {
		c.args = append(c.args, lines.scalar(s))
	}
	for _, p := range items(get(n, "ports")) {
		port, err := strconv.Atoi(str(get(p, "containerPort")))
		if err != nil {
			continue
		}
		c.portNumbers = append(c.portNumbers, port)
		if name := str(get(p, "name")); name != "" {
			c.ports = append(c.ports, namedPort{name, port})
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
				c.probes = append(c.probes, probe{kind: kind, handler: handler, port: scalarOf(get(h, "port")), period: period,
					host: str(get(h, "host")), path: str(get(h, "path")), scheme: str(get(h, "scheme")),
					headers: len(items(get(h, "httpHeaders"))) > 0})
			}
		}
	}
	c.preStop = preStopTime(path(n, "lifecycle", "preStop"))
	return c
}

// valueFrom reads an env entry's valueFrom.
func valueFrom(n *yaml.Node) *reference {
	r := &reference{line: lineOf(n)}
	switch {
	case get(n, "configMapKeyRef") != nil:
		ref := get(n, "configMapKeyRef")
		r.kind, r.name, r.key, r.optional = "ConfigMap", str(get(ref, "name")), str(get(ref, "key")), str(get(ref, "optional")) == "true"
	case get(n, "secretKeyRef") != nil:
		ref := get(n, "secretKeyRef")
		r.kind, r.name, r.key, r.optional = "Secret", str(get(ref, "name")), str(get(ref, "key")), str(get(ref, "optional")) == "true"
	case get(n, "fieldRef") != nil:
		r.key = "fieldRef " + str(path(n, "fieldRef", "fieldPath"))
	case get(n, "resourceFieldRef") != nil:
		r.key = "resourceFieldRef " + str(path(n, "resourceFieldRef", "resource"))
	default:
		r.key = "the running pod"
	}
	return r
}

// preStopTime is how long a preStop hook takes when it says so: a sleep
// action, or an exec of sleep (also under sh -c). Anything else counts 0.
func preStopTime(h *yaml.Node) time.Duration {
	if s := str(path(h, "sleep", "seconds")); s != "" {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	var argv []string
	var words []word
	for _, it := range items(path(h, "exec", "command")) {
		argv = append(argv, str(it))
		words = append(words, word{text: str(it), known: true})
	}
	if i, ok := shellScript(words); ok {
		argv = strings.Fields(argv[i]) // "sleep 5 && nginx -s quit" sleeps 5s at least
	}
	if len(argv) >= 2 && baseName(argv[0]) == "sleep" {
		return sleepTime(strings.TrimRight(argv[1], ";&|"))
	}
	return 0
}

// sleepTime reads sleep's argument: seconds, or a number with the suffix
// s, m, h or d; 0 if it is neither.
func sleepTime(s string) time.Duration {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, unit = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, unit = s[:len(s)-1], 24*time.Hour
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n > 1e6 || strings.ContainsAny(s, "eExXnN") {
		return 0
	}
	return time.Duration(n * float64(unit))
}

func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}
