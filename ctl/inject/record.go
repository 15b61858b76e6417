// record.go: the record of what inject changed in a pod template, kept in
// the template's annotation proxy-await.io/injected, so that --undo gives
// the input back as it was, byte for byte in what inject changed, and a
// later inject takes its own changes back before it works the pod out
// again from the current --versions and input. A change is where it was
// made, by keys and the names of list entries, and what it was: a key or
// an entry added, words put first in a list, a scalar, a key or a value
// replaced, with the text it replaced.

package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// recordKey is the annotation that holds the record.
const recordKey = "proxy-await.io/injected"

// recordVersion is the record's format, for a later inject that reads one
// written before it.
const recordVersion = 1

// The changes a record holds.
const (
	opAdded     = "add" // the key or entry at Path was added
	opPrepended = "pre" // N words were put first in the list at Path
	opSet       = "set" // the scalar at Path replaced the text Was
	opRenamed   = "key" // the key at Path replaced the key Was
	opValue     = "val" // the value at Path, after its key's colon, replaced the text Was
)

// record is what inject changed in a pod template.
type record struct {
	V       int      `json:"v"`
	Changes []change `json:"c"`
}

// change is one change of a record.
type change struct {
	Op   string   `json:"o"`
	Path nodePath `json:"p"`
	N    int      `json:"n,omitempty"`
	Was  string   `json:"w,omitempty"`
}

func (r *record) add(c change) { r.Changes = append(r.Changes, c) }

// String is the record as the annotation holds it: compact JSON.
func (r *record) String() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r)
	return strings.TrimSuffix(b.String(), "\n")
}

// parseRecord reads the annotation's text.
func parseRecord(text string) (*record, error) {
	var r record
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("its %s annotation is not one inject wrote: %v", recordKey, err)
	}
	if r.V != recordVersion {
		return nil, fmt.Errorf("its %s annotation is of format %d, which this inject does not read (it reads %d)", recordKey, r.V, recordVersion)
	}
	for _, c := range r.Changes {
		if len(c.Path) == 0 {
			return nil, fmt.Errorf("its %s annotation names a change without a place", recordKey)
		}
	}
	return &r, nil
}

// nodePath is where a change is in a pod template: keys of mappings, and
// entries of lists by their name (=NAME) or, having none, their place
// (#N).
type nodePath []string

// to is the path of a node below p.
func (p nodePath) to(steps ...string) nodePath {
	return append(append(nodePath{}, p...), steps...)
}

// String is the path as messages show it: spec.containers[web].command.
func (p nodePath) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case strings.HasPrefix(s, "="):
			b.WriteString("[" + s[1:] + "]")
		case strings.HasPrefix(s, "#"):
			b.WriteString("[" + s[1:] + "]")
		case i > 0:
			b.WriteString("." + s)
		default:
			b.WriteString(s)
		}
	}
	return b.String()
}

// under says whether q is p or below it.
func (p nodePath) under(q nodePath) bool {
	if len(p) < len(q) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// itemStep is the step to the entry n of a list, i its place.
func itemStep(n *yaml.Node, i int) string {
	if name := value(n, "name"); name != nil && name.Kind == yaml.ScalarNode && name.Value != "" {
		return "=" + name.Value
	}
	return "#" + strconv.Itoa(i)
}

// errMissing is a change whose place the pod no longer has.
var errMissing = errors.New("not there")

// located is the node a path names: the mapping or list that holds it, the
// key (in a mapping) and the node, and its place among the entries.
type located struct {
	parent, key, node *yaml.Node
	i                 int // the pair's index in a mapping, the entry's in a list
}

// locate finds the node p names below root.
func locate(root *yaml.Node, p nodePath) (located, error) {
	var at located
	n := root
	for _, step := range p {
		switch {
		case n == nil:
			return at, errMissing
		case n.Kind == yaml.MappingNode && !strings.HasPrefix(step, "=") && !strings.HasPrefix(step, "#"):
			i := index(n, step)
			if i < 0 {
				return at, errMissing
			}
			at = located{parent: n, key: n.Content[2*i], node: n.Content[2*i+1], i: i}
		case n.Kind == yaml.SequenceNode && strings.HasPrefix(step, "="):
			i := -1
			for j, it := range n.Content {
				if v := value(it, "name"); v != nil && v.Value == step[1:] {
					i = j
					break
				}
			}
			if i < 0 {
				return at, errMissing
			}
			at = located{parent: n, node: n.Content[i], i: i}
		case n.Kind == yaml.SequenceNode && strings.HasPrefix(step, "#"):
			i, err := strconv.Atoi(step[1:])
			if err != nil || i < 0 || i >= len(n.Content) {
				return at, errMissing
			}
			at = located{parent: n, node: n.Content[i], i: i}
		default:
			return at, errMissing
		}
		n = at.node
	}
	return at, nil
}
