// bounds.go: what reading may cost, so that a hostile or huge input costs
// no more than its refusal.

package manifest

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Bounds are what reading may cost. All the input together is read up to
// Input bytes; past that it is refused, having cost only its reading. Each
// document is parsed alone, and its node tree dropped once the objects in
// it are read, so memory follows the largest document, not the input. A
// parsed document takes some 250 bytes a node, so a document is parsed only
// when a look at its text says it has at most Nodes nodes (the lines of a
// block scalar are no nodes); the size bound, Document, stops what is
// plainly too large before that. Aliases are never expanded: a document
// whose aliases would expand it by more than Expansion nodes (a "billion
// laughs") is refused, as is an alias that contains itself.
//
// A setting that holds YAML or JSON of its own (Istio's
// proxy.istio.io/config) is parsed again for each pod that has it, within
// NestedBytes and NestedNodes; past either, it is not read, at the cost of
// a look at its text.
type Bounds struct {
	Input, Document, Nodes, Expansion int
	NestedBytes, NestedNodes          int
}

// DefaultBounds are the bounds of the commands. A document is an object,
// or a List of them as kubectl prints a whole namespace; Kubernetes stores
// no object over 1.5 MiB (etcd's bound). The API server takes at most 256
// KiB of a pod's annotations in all (apimachinery's
// TotalAnnotationSizeLimitB), and the settings read from one are a handful
// of fields, so a few thousand nodes are plenty.
var DefaultBounds = Bounds{
	Input:       64 << 20,
	Document:    16 << 20,
	Nodes:       1_000_000,
	Expansion:   1_000_000,
	NestedBytes: 256 << 10,
	NestedNodes: 10_000,
}

// size is a number of bytes as messages give a bound: 64 MiB, 256 KiB.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// pastBound is a text past a bound, and which.
type pastBound string

func (e pastBound) Error() string { return string(e) }

// errInput is a source that would take the input past its bound.
func (b Bounds) errInput() error {
	return pastBound(fmt.Sprintf("past %s of manifests in all, the most that is read: this and what follows is not read; check it in parts", size(b.Input)))
}

// errNested is a nested setting past its bounds, as unknown-value names
// where the value it holds would come from.
func (b Bounds) errNested() error {
	return pastBound(fmt.Sprintf("larger than is read of an annotation (%s, the most the API server takes of a pod's annotations, or about %d YAML nodes)",
		size(b.NestedBytes), b.NestedNodes))
}

// ErrPastBound says whether err is a setting or a source past a bound:
// what it holds is not known, and err says why.
func ErrPastBound(err error) bool {
	var p pastBound
	return errors.As(err, &p)
}

// nested parses a setting that holds YAML or JSON, within the bounds: its
// root node, or an error.
func (b Bounds) nested(text string) (*yaml.Node, error) {
	if len(text) > b.NestedBytes || nodesAtMost([]byte(text)) > b.NestedNodes {
		return nil, b.errNested()
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		return nil, err
	}
	if len(n.Content) == 0 {
		return nil, errors.New("empty")
	}
	if err := checkAliases(&n, b); err != nil {
		return nil, err
	}
	return n.Content[0], nil
}
