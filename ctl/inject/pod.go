// pod.go: one pod template's adoption as edits of its document: the
// wrapped commands, the volume and its mounts, the install init container,
// the probes moved to --probe-port, and what the sidecars need.

package inject

import (
	"errors"
	"fmt"
	"slices"
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
// container's, and records each change in the annotation that lets --undo
// and the next inject take it back (record.go).
func (d *doc) adopt(tpl *yaml.Node, ad plan, image string) error {
	if shared(tpl) {
		return errAliases
	}
	spec := value(tpl, "spec")
	containers := value(spec, "containers")
	if spec == nil || containers == nil {
		return errLayout
	}
	rec := &record{V: recordVersion}
	for _, a := range ad.Containers {
		if a.Index >= len(containers.Content) {
			return errLayout
		}
		c := containers.Content[a.Index]
		if err := d.adoptContainer(rec, nodePath{"spec", "containers", itemStep(c, a.Index)}, c, a, ad.Names); err != nil {
			return err
		}
	}
	for _, s := range ad.Sidecars {
		list, key := containers, "containers"
		if s.Init {
			list, key = value(spec, "initContainers"), "initContainers"
		}
		if list == nil || s.Index >= len(list.Content) {
			return errLayout
		}
		c := list.Content[s.Index]
		if err := d.addArgs(rec, nodePath{"spec", key, itemStep(c, s.Index)}, c, s.Args); err != nil {
			return err
		}
	}
	n := ad.Names
	if err := d.ensureItem(rec, nodePath{"spec"}, spec, "volumes", n.Volume, d.w.shared("volume "+n.Volume, func() *yaml.Node { return volume(n) }), false); err != nil {
		return err
	}
	if err := d.ensureItem(rec, nodePath{"spec"}, spec, "initContainers", n.Init, d.w.shared(fmt.Sprintf("installer %s %v", image, n), func() *yaml.Node { return installer(image, n) }), true); err != nil {
		return err
	}
	return d.annotate(rec, tpl, ad.Annotations)
}

// adoptContainer wraps a container's command in proxy-await, or writes
// one that runs its image's, mounts the volume, and moves its probes.
func (d *doc) adoptContainer(rec *record, at nodePath, c *yaml.Node, a adoptedContainer, n names) error {
	words := []*yaml.Node{str(n.binary())}
	for _, f := range a.Flags {
		words = append(words, str(f))
	}
	words = append(words, str("--"))
	if a.Image != nil {
		if err := d.writeCommand(rec, at, c, words, a.Image); err != nil {
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
		rec.add(change{Op: opPrepended, Path: at.to("command"), N: len(words)})
	}
	for _, m := range a.Probes {
		if err := d.moveProbe(rec, at.to(m.Kind), value(c, m.Kind), m); err != nil {
			return err
		}
	}
	if a.ProbePort != 0 {
		port := mapping("name", str(n.Port), "containerPort", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(a.ProbePort)})
		if err := d.ensureItem(rec, at, c, "ports", n.Port, port, false); err != nil {
			return err
		}
	}
	mount := d.w.shared("mount "+n.Volume+" "+n.Mount, func() *yaml.Node {
		return mapping("name", str(n.Volume), "mountPath", str(n.Mount), "readOnly", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	})
	return d.ensureItem(rec, at, c, "volumeMounts", n.Volume, mount, false)
}

// writeCommand gives a container that sets no command the one its image
// runs, after proxy-await's words: its command right after its image, and
// its image's CMD as args after that when it has none of its own.
func (d *doc) writeCommand(rec *record, at nodePath, c *yaml.Node, words []*yaml.Node, img *imageCommand) error {
	if value(c, "command") != nil {
		return errLayout // a command: null, which the model read as none
	}
	for _, w := range img.Entrypoint {
		words = append(words, str(w))
	}
	if err := d.putKeyAfter(c, "image", "command", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words}); err != nil {
		return err
	}
	rec.add(change{Op: opAdded, Path: at.to("command")})
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
	rec.add(change{Op: opAdded, Path: at.to("args")})
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
func (d *doc) moveProbe(rec *record, at nodePath, pr *yaml.Node, m probeMove) error {
	i := index(pr, m.Handler)
	if i < 0 {
		return errLayout
	}
	h := pr.Content[2*i+1]
	at = at.to("httpGet")
	port := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(m.Port)}
	if m.Handler == "tcpSocket" {
		if err := d.setScalar(rec, at, opRenamed, pr.Content[2*i], "!!str", "httpGet"); err != nil {
			return err
		}
	}
	if p := value(h, "port"); p != nil {
		if err := d.setScalar(rec, at.to("port"), opSet, p, port.Tag, port.Value); err != nil {
			return err
		}
	} else if err := d.appendKey(h, "port", port); err != nil {
		return err
	} else {
		rec.add(change{Op: opAdded, Path: at.to("port")})
	}
	if p := value(h, "path"); p != nil {
		if err := d.setScalar(rec, at.to("path"), opSet, p, "!!str", m.Path); err != nil {
			return err
		}
	} else if err := d.appendKey(h, "path", str(m.Path)); err != nil {
		return err
	} else {
		rec.add(change{Op: opAdded, Path: at.to("path")})
	}
	if s := value(h, "scheme"); s != nil && s.Value != "HTTP" {
		return d.setScalar(rec, at.to("scheme"), opSet, s, "!!str", "HTTP")
	}
	return nil
}

// annotate sets the pod's annotations, and last of them the record of
// every change made to the pod, this one's own included.
func (d *doc) annotate(rec *record, tpl *yaml.Node, settings []annotation) error {
	settings = append(slices.Clone(settings), annotation{recordKey, ""})
	meta := value(tpl, "metadata")
	existing := value(meta, "annotations")
	switch {
	case meta == nil:
		rec.add(change{Op: opAdded, Path: nodePath{"metadata"}})
	case meta.Kind != yaml.MappingNode:
		return errLayout
	case existing == nil:
		rec.add(change{Op: opAdded, Path: nodePath{"metadata", "annotations"}})
	case existing.Kind == yaml.ScalarNode:
		raw, err := d.afterColon(meta, index(meta, "annotations"))
		if err != nil {
			return err
		}
		rec.add(change{Op: opValue, Path: nodePath{"metadata", "annotations"}, Was: raw})
	case existing.Kind != yaml.MappingNode:
		return errLayout
	default:
		for _, s := range settings {
			if v := value(existing, s.Key); v != nil {
				if s.Key == recordKey {
					return errLayout // a record inject did not take back
				}
				raw, err := d.text(v)
				if err != nil {
					return err
				}
				rec.add(change{Op: opSet, Path: nodePath{"metadata", "annotations", s.Key}, Was: raw})
			} else {
				rec.add(change{Op: opAdded, Path: nodePath{"metadata", "annotations", s.Key}})
			}
		}
	}
	settings[len(settings)-1].Value = rec.String()

	ann := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range settings {
		ann.Content = append(ann.Content, str(s.Key), str(s.Value))
	}
	switch {
	case meta == nil:
		if i := index(tpl, "spec"); i >= 0 {
			return d.insertKey(tpl, i, "metadata", mapping("annotations", ann))
		}
		return d.appendKey(tpl, "metadata", mapping("annotations", ann))
	case existing == nil:
		return d.appendKey(meta, "annotations", ann)
	case existing.Kind == yaml.ScalarNode:
		return d.setValue(meta, index(meta, "annotations"), ann)
	}
	for _, s := range settings {
		if v := value(existing, s.Key); v != nil {
			if err := d.setScalar(nil, nil, "", v, "!!str", s.Value); err != nil {
				return err
			}
		} else if err := d.appendKey(existing, s.Key, str(s.Value)); err != nil {
			return err
		}
	}
	return nil
}

// addArgs gives a sidecar container flags of its own, first in its args.
func (d *doc) addArgs(rec *record, at nodePath, c *yaml.Node, flags []string) error {
	var words []*yaml.Node
	for _, f := range flags {
		words = append(words, str(f))
	}
	switch args := value(c, "args"); {
	case args == nil:
		rec.add(change{Op: opAdded, Path: at.to("args")})
		return d.appendKey(c, "args", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words})
	case args.Kind == yaml.SequenceNode:
		rec.add(change{Op: opPrepended, Path: at.to("args"), N: len(words)})
		return d.prependItems(args, words...)
	case args.Kind == yaml.ScalarNode:
		raw, err := d.afterColon(c, index(c, "args"))
		if err != nil {
			return err
		}
		rec.add(change{Op: opValue, Path: at.to("args"), Was: raw})
		return d.setValue(c, index(c, "args"), &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: words})
	}
	return errLayout
}

// ensureItem puts item in the list at key of m (at at) unless an entry of
// that name is there: first in the list with first (the init container),
// last otherwise; a new key goes before containers with first, last
// otherwise.
func (d *doc) ensureItem(rec *record, at nodePath, m *yaml.Node, key, name string, item *yaml.Node, first bool) error {
	list := value(m, key)
	one := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{item}}
	switch {
	case list == nil && first && index(m, "containers") >= 0:
		rec.add(change{Op: opAdded, Path: at.to(key)})
		return d.insertKey(m, index(m, "containers"), key, one)
	case list == nil:
		rec.add(change{Op: opAdded, Path: at.to(key)})
		return d.appendKey(m, key, one)
	case list.Kind == yaml.ScalarNode:
		raw, err := d.afterColon(m, index(m, key))
		if err != nil {
			return err
		}
		rec.add(change{Op: opValue, Path: at.to(key), Was: raw})
		return d.setValue(m, index(m, key), one)
	case list.Kind != yaml.SequenceNode:
		return errLayout
	}
	for _, it := range list.Content {
		if n := value(it, "name"); n != nil && n.Value == name {
			return nil
		}
	}
	rec.add(change{Op: opAdded, Path: at.to(key, "="+name)})
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
