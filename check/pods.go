// pods.go: the Kubernetes objects of a document, the pod templates among
// them, and what a container runs, as the kubelet would compute it.

package check

import (
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
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := deref(m.Content[i])
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, m.Content[i+1])
		case k.Value == key:
			return m.Content[i+1]
		}
	}
	for _, src := range merges {
		src = deref(src)
		if src.Kind == yaml.SequenceNode {
			for _, s := range src.Content {
				if v := get(s, key); v != nil {
					return v
				}
			}
		} else if v := get(src, key); v != nil {
			return v
		}
	}
	return nil
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

// stringsOf is a sequence of scalars as text.
func stringsOf(n *yaml.Node) []string {
	var out []string
	for _, it := range items(n) {
		out = append(out, str(it))
	}
	return out
}

// stringMap is a mapping of scalars, as labels and annotations are.
func stringMap(n *yaml.Node) map[string]string {
	n = deref(n)
	out := map[string]string{}
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[str(n.Content[i])] = str(n.Content[i+1])
	}
	return out
}

// object is a Kubernetes object of a file.
type object struct {
	file      string
	kind      string
	name      string
	namespace string
	node      *yaml.Node
}

// objects is what a document holds: one object, or the items of a List.
func objects(d document) []object {
	kind := str(get(d.root, "kind"))
	if strings.HasSuffix(kind, "List") && get(d.root, "items") != nil {
		var out []object
		for _, it := range items(get(d.root, "items")) {
			out = append(out, objects(document{d.file, it})...)
		}
		return out
	}
	if kind == "" {
		return nil // not a Kubernetes object: a Helm values file, a kustomization
	}
	name := str(path(d.root, "metadata", "name"))
	if name == "" {
		name = str(path(d.root, "metadata", "generateName"))
	}
	return []object{{d.file, kind, name, str(path(d.root, "metadata", "namespace")), deref(d.root)}}
}

// pod is a pod template and where it came from.
type pod struct {
	object
	job         bool // a Job's or CronJob's: it should complete
	labels      map[string]string
	annotations map[string]string
	ns          *object // the pod's Namespace, when the input has it
	grace       time.Duration
	containers  []*container // init containers first, in order
}

// templatePath is where a kind's pod template is: the pod's metadata and
// spec sit under these keys.
func templatePath(kind string) ([]string, bool) {
	switch kind {
	case "Pod":
		return nil, true
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		return []string{"spec", "template"}, true
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}, true
	}
	return nil, false
}

// podOf is the pod template of o, if its kind has one.
func podOf(o object) (*pod, bool) {
	at, ok := templatePath(o.kind)
	if !ok {
		return nil, false
	}
	tpl := path(o.node, at...)
	spec := get(tpl, "spec")
	if spec == nil {
		return nil, false
	}
	p := &pod{
		object:      o,
		job:         o.kind == "Job" || o.kind == "CronJob",
		labels:      stringMap(path(tpl, "metadata", "labels")),
		annotations: stringMap(path(tpl, "metadata", "annotations")),
		grace:       30 * time.Second, // the API server's default
	}
	if s := str(get(spec, "terminationGracePeriodSeconds")); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			p.grace = time.Duration(n) * time.Second
		}
	}
	for _, n := range items(get(spec, "initContainers")) {
		p.containers = append(p.containers, containerOf(n, true))
	}
	for _, n := range items(get(spec, "containers")) {
		p.containers = append(p.containers, containerOf(n, false))
	}
	return p, true
}

// label is the pod's label or annotation called key, as several injectors
// read either.
func (p *pod) label(key string) (string, bool) {
	if v, ok := p.labels[key]; ok {
		return v, true
	}
	v, ok := p.annotations[key]
	return v, ok
}

// nsMeta is the pod's Namespace's label or annotation called key.
func (p *pod) nsMeta(key string) (string, bool) {
	if p.ns == nil {
		return "", false
	}
	if v, ok := stringMap(path(p.ns.node, "metadata", "labels"))[key]; ok {
		return v, true
	}
	v, ok := stringMap(path(p.ns.node, "metadata", "annotations"))[key]
	return v, ok
}

// container is a container of a pod template.
type container struct {
	name          string
	line          int
	init          bool
	restartAlways bool // a native sidecar, when init
	image         string
	command       []string // as the kubelet runs them: $(VAR) expanded
	args          []string
	env           map[string]envValue
	envFrom       bool          // variables come from ConfigMaps or Secrets too
	unknownArgv   bool          // command or args refer to a variable the manifest does not hold
	preStop       time.Duration // how long its preStop hook takes, where it says
	node          *yaml.Node
}

// envValue is a variable's value; known is false when it comes from
// valueFrom (a ConfigMap, a Secret, the downward API), which a manifest does
// not hold.
type envValue struct {
	value string
	known bool
}

func containerOf(n *yaml.Node, init bool) *container {
	c := &container{
		name:          str(get(n, "name")),
		line:          deref(n).Line,
		init:          init,
		restartAlways: init && str(get(n, "restartPolicy")) == "Always",
		image:         str(get(n, "image")),
		env:           map[string]envValue{},
		envFrom:       len(items(get(n, "envFrom"))) > 0,
		node:          n,
	}
	// A variable's value may refer to those defined before it.
	for _, e := range items(get(n, "env")) {
		name := str(get(e, "name"))
		if get(e, "valueFrom") != nil {
			c.env[name] = envValue{}
			continue
		}
		v, known := c.expand(str(get(e, "value")))
		c.env[name] = envValue{v, known}
	}
	for _, s := range stringsOf(get(n, "command")) {
		v, known := c.expand(s)
		c.command = append(c.command, v)
		c.unknownArgv = c.unknownArgv || !known
	}
	for _, s := range stringsOf(get(n, "args")) {
		v, known := c.expand(s)
		c.args = append(c.args, v)
		c.unknownArgv = c.unknownArgv || !known
	}
	c.preStop = preStopTime(path(n, "lifecycle", "preStop"))
	return c
}

// getenv is the container's environment as proxy-await in it would see it,
// as far as the manifest says.
func (c *container) getenv(name string) (string, bool) {
	v, ok := c.env[name]
	return v.value, ok && v.known
}

// expand replaces $(VAR) with the variable's value, as the kubelet does in
// command, args and env values: $$ is a literal $, and a reference to a
// variable that is not defined stays as written. known is false when a
// reference's value is not in the manifest.
func (c *container) expand(s string) (string, bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	known := true
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				break
			}
			name := s[i+2 : i+2+end]
			v, ok := c.env[name]
			switch {
			case ok && v.known:
				b.WriteString(v.value)
			case ok || c.envFrom:
				known = false
				b.WriteString(s[i : i+3+end])
			default:
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
			continue
		}
		b.WriteByte('$')
	}
	return b.String(), known
}

// preStopTime is how long a preStop hook takes when it says so: a sleep
// action, or an exec of sleep (also under sh -c). Anything else counts 0.
func preStopTime(h *yaml.Node) time.Duration {
	if s := str(path(h, "sleep", "seconds")); s != "" {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	argv := stringsOf(path(h, "exec", "command"))
	if len(argv) >= 3 && isShell(argv[0]) && scriptFlag(argv[1]) {
		argv = strings.Fields(argv[2]) // "sleep 5 && nginx -s quit" sleeps 5s at least
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
