// pod.go: one pod template's adoption as edits of its document: the
// wrapped commands, the volume and its mounts, the install init container,
// the probes moved to --probe-port, and what the sidecars need.

package inject

import (
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// What inject adds to a pod besides what names says.
const (
	// installPath is where the init container mounts the volume: not
	// the containers' mount path, which in the release image, FROM
	// scratch, is the binary itself (/proxy-await), where no directory can
	// be mounted.
	installPath = "/install"
	// installUser runs the init container: Pod Security "restricted" wants
	// a user that is not root, and the release image, FROM scratch, names
	// none (65532 is distroless's "nonroot").
	installUser = "65532"
)

// errAliases is a pod template that YAML anchors or aliases share with
// other parts of the document: an edit of it would change them too.
var errAliases = errors.New("it uses YAML anchors or aliases, which an edit would change everywhere they are used")

// adopt edits the pod template tpl of d as ad says, image being the init
// container's.
func (d *doc) adopt(tpl *yaml.Node, ad plan, image string) error {
	if shared(tpl) {
		return errAliases
	}
	spec := value(tpl, "spec")
	containers := value(spec, "containers")
	if spec == nil || containers == nil {
		return errLayout
	}
	for _, a := range ad.Containers {
		if a.Index >= len(containers.Content) {
			return errLayout
		}
		if err := d.adoptContainer(containers.Content[a.Index], a, ad.Names); err != nil {
			return err
		}
	}
	if err := d.annotate(tpl, ad.Annotations); err != nil {
		return err
	}
	for _, s := range ad.Sidecars {
		list := containers
		if s.Init {
			list = value(spec, "initContainers")
		}
		if list == nil || s.Index >= len(list.Content) {
			return errLayout
		}
		if err := d.addArgs(list.Content[s.Index], s.Args); err != nil {
			return err
		}
	}
	n := ad.Names
	if err := d.ensureItem(spec, "volumes", n.Volume, d.w.shared("volume "+n.Volume, func() *yaml.Node { return volume(n) }), false); err != nil {
		return err
	}
	return d.ensureItem(spec, "initContainers", n.Init, d.w.shared(fmt.Sprintf("installer %s %v", image, n), func() *yaml.Node { return installer(image, n) }), true)
}

// adoptContainer wraps a container's command in proxy-await, or writes
// one that runs its image's, mounts the volume, and moves its probes.
func (d *doc) adoptContainer(c *yaml.Node, a adoptedContainer, n names) error {
	words := []*yaml.Node{str(n.binary())}
	for _, f := range a.Flags {
		words = append(words, str(f))
	}
	words = append(words, str("--"))
	if a.Image != nil {
		if err := d.writeCommand(c, words, a.Image); err != nil {
			return err
		}
	} else {
		cmd := value(c, "command")
		if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 {
			return errLayout
		}
		if err := d.prependItems(cmd, words...); err != nil {
			return err
		}
	}
	for _, m := range a.Probes {
		if err := d.moveProbe(value(c, m.Kind), m); err != nil {
			return err
		}
	}
	if a.ProbePort != 0 {
		port := mapping("name", str(n.Port), "containerPort", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(a.ProbePort)})
		if err := d.ensureItem(c, "ports", n.Port, port, false); err != nil {
			return err
		}
	}
	mount := d.w.shared("mount "+n.Volume+" "+n.Mount, func() *yaml.Node {
		return mapping("name", str(n.Volume), "mountPath", str(n.Mount), "readOnly", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	})
	return d.ensureItem(c, "volumeMounts", n.Volume, mount, false)
}

// writeCommand gives a container that sets no command the one its image
// runs, after proxy-await's words: its command right after its image, and
// its image's CMD as args after that when it has none of its own.
func (d *doc) writeCommand(c *yaml.Node, words []*yaml.Node, img *imageCommand) error {
	if value(c, "command") != nil {
		return errLayout // a command: null, which the model read as none
	}
	for _, w := range img.Entrypoint {
		words = append(words, str(w))
	}
	if err := d.putKeyAfter(c, "image", "command", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words}); err != nil {
		return err
	}
	if len(img.Args) == 0 {
		return nil
	}
	if value(c, "args") != nil {
		return errLayout // args: [] or null, which the runtime reads as none
	}
	var args []*yaml.Node
	for _, w := range img.Args {
		args = append(args, str(w))
	}
	return d.putKeyAfter(c, "command", "args", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: args})
}

// putKeyAfter puts key: v in the mapping m right after the pair whose key
// is after, or last when m has none.
func (d *doc) putKeyAfter(m *yaml.Node, after, key string, v *yaml.Node) error {
	if i := index(m, after); i >= 0 && 2*(i+1) < len(m.Content) {
		return d.insertKey(m, i+1, key, v)
	}
	return d.appendKey(m, key, v)
}

// moveProbe points a probe at --probe-port: an HTTP GET of the path
// proxy-await serves it on.
func (d *doc) moveProbe(pr *yaml.Node, m probeMove) error {
	i := index(pr, m.Handler)
	if i < 0 {
		return errLayout
	}
	h := pr.Content[2*i+1]
	port := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(m.Port)}
	if m.Handler == "tcpSocket" {
		if err := d.setScalar(pr.Content[2*i], "!!str", "httpGet"); err != nil {
			return err
		}
	}
	if p := value(h, "port"); p != nil {
		if err := d.setScalar(p, port.Tag, port.Value); err != nil {
			return err
		}
	} else if err := d.appendKey(h, "port", port); err != nil {
		return err
	}
	if p := value(h, "path"); p != nil {
		if err := d.setScalar(p, "!!str", m.Path); err != nil {
			return err
		}
	} else if err := d.appendKey(h, "path", str(m.Path)); err != nil {
		return err
	}
	if s := value(h, "scheme"); s != nil && s.Value != "HTTP" {
		return d.setScalar(s, "!!str", "HTTP")
	}
	return nil
}

// annotate sets the pod's annotations.
func (d *doc) annotate(tpl *yaml.Node, settings []annotation) error {
	if len(settings) == 0 {
		return nil
	}
	ann := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range settings {
		ann.Content = append(ann.Content, str(s.Key), str(s.Value))
	}
	meta := value(tpl, "metadata")
	switch {
	case meta == nil:
		if i := index(tpl, "spec"); i >= 0 {
			return d.insertKey(tpl, i, "metadata", mapping("annotations", ann))
		}
		return d.appendKey(tpl, "metadata", mapping("annotations", ann))
	case meta.Kind != yaml.MappingNode:
		return errLayout
	}
	existing := value(meta, "annotations")
	switch {
	case existing == nil:
		return d.appendKey(meta, "annotations", ann)
	case existing.Kind == yaml.ScalarNode:
		return d.setValue(meta, index(meta, "annotations"), ann)
	case existing.Kind != yaml.MappingNode:
		return errLayout
	}
	for _, s := range settings {
		if v := value(existing, s.Key); v != nil {
			if err := d.setScalar(v, "!!str", s.Value); err != nil {
				return err
			}
		} else if err := d.appendKey(existing, s.Key, str(s.Value)); err != nil {
			return err
		}
	}
	return nil
}

// addArgs gives a sidecar container flags of its own, first in its args.
func (d *doc) addArgs(c *yaml.Node, flags []string) error {
	var words []*yaml.Node
	for _, f := range flags {
		words = append(words, str(f))
	}
	switch args := value(c, "args"); {
	case args == nil:
		return d.appendKey(c, "args", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words})
	case args.Kind == yaml.SequenceNode:
		return d.prependItems(args, words...)
	case args.Kind == yaml.ScalarNode:
		return d.setValue(c, index(c, "args"), &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words})
	}
	return errLayout
}

// ensureItem puts item in the list at key of m unless an entry of that
// name is there: first in the list with first (the init container), last
// otherwise; a new key goes before containers with first, last otherwise.
func (d *doc) ensureItem(m *yaml.Node, key, name string, item *yaml.Node, first bool) error {
	list := value(m, key)
	one := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{item}}
	switch {
	case list == nil && first && index(m, "containers") >= 0:
		return d.insertKey(m, index(m, "containers"), key, one)
	case list == nil:
		return d.appendKey(m, key, one)
	case list.Kind == yaml.ScalarNode:
		return d.setValue(m, index(m, key), one)
	case list.Kind != yaml.SequenceNode:
		return errLayout
	}
	for _, it := range list.Content {
		if n := value(it, "name"); n != nil && n.Value == name {
			return nil
		}
	}
	if first {
		return d.prependItems(list, item)
	}
	return d.appendItem(list, item)
}

// volume is the emptyDir proxy-await is copied into.
func volume(n names) *yaml.Node {
	return mapping("name", str(n.Volume), "emptyDir", mapping("sizeLimit", str("16Mi")))
}

// installer is the init container that copies proxy-await into the
// volume: the release image, whose entrypoint is proxy-await, with
// --install, as Pod Security "restricted" admits it.
func installer(image string, n names) *yaml.Node {
	f := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"}
	t := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
	return mapping(
		"name", str(n.Init),
		"image", str(image),
		"args", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{str("--install"), str(installPath)}},
		"volumeMounts", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{
			mapping("name", str(n.Volume), "mountPath", str(installPath))}},
		"resources", mapping(
			"requests", mapping("cpu", str("10m"), "memory", str("16Mi")),
			"limits", mapping("memory", str("16Mi"))),
		"securityContext", mapping(
			"allowPrivilegeEscalation", f,
			"readOnlyRootFilesystem", t,
			"runAsNonRoot", t,
			"runAsUser", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: installUser},
			"capabilities", mapping("drop", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{str("ALL")}}),
			"seccompProfile", mapping("type", str("RuntimeDefault"))),
	)
}

// mapping is a mapping of keys and values, in order.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

// index is the index of the pair of m whose key is key, -1 for none.
func index(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return i / 2
		}
	}
	return -1
}

// value is the value of key in the mapping m, nil for none.
func value(m *yaml.Node, key string) *yaml.Node {
	if i := index(m, key); i >= 0 {
		return m.Content[2*i+1]
	}
	return nil
}

// shared says whether a node of the tree below n is an anchor, an alias
// or a merge key.
func shared(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Kind == yaml.ScalarNode && n.Tag == "!!merge" {
		return true
	}
	for _, c := range n.Content {
		if shared(c) {
			return true
		}
	}
	return false
}

// clone is a deep copy of n, to restore a pod template whose edits fail.
func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = nil
	for _, e := range n.Content {
		c.Content = append(c.Content, clone(e))
	}
	return &c
}
