package imageconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v3"
)

// maxFile bounds the entrypoints file: thousands of images fit in far less.
const maxFile = 16 << 20

// Entrypoints is an entrypoints file: each image's ENTRYPOINT and CMD,
// keyed by the image's reference in full, so that any spelling of it
// finds its entry.
type Entrypoints map[string]Config

// entry is one image of an entrypoints file, as written.
type entry struct {
	Entrypoint []string `yaml:"entrypoint"`
	Cmd        []string `yaml:"cmd"`
}

// ReadEntrypoints reads the entrypoints file at path: YAML or JSON, a
// mapping of image reference to its entrypoint and cmd lists.
func ReadEntrypoints(path string) (Entrypoints, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--entrypoints: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("--entrypoints: %w", err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("--entrypoints %s: past %d MiB, the most that is read: keep only the images the manifests name", path, maxFile>>20)
	}
	e, err := ParseEntrypoints(data)
	if err != nil {
		return nil, fmt.Errorf("--entrypoints %s: %w", path, err)
	}
	return e, nil
}

// errShape is a file that is not a mapping of images to entries.
var errShape = errors.New(`want a mapping of image reference to its "entrypoint" and "cmd" lists, such as nginx:1.27: {entrypoint: [/docker-entrypoint.sh], cmd: [nginx, -g, daemon off;]}`)

// ParseEntrypoints parses an entrypoints file's text.
func ParseEntrypoints(data []byte) (Entrypoints, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return Entrypoints{}, nil
	} else if err != nil {
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one document: keep every image in one mapping")
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return Entrypoints{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %w", root.Line, errShape)
	}
	out := Entrypoints{}
	lines := map[string]int{}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %w", k.Line, errShape)
		}
		ref, err := name.ParseReference(k.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not an image reference: %v", k.Line, k.Value, err)
		}
		var e entry
		if err := decodeEntry(v, &e); err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
		c := Config{Image: ref.Name(), Entrypoint: e.Entrypoint, Cmd: e.Cmd}
		if old, ok := out[c.Image]; ok && !(slices.Equal(old.Entrypoint, c.Entrypoint) && slices.Equal(old.Cmd, c.Cmd)) {
			return nil, fmt.Errorf("line %d: %s is %s, whose entry on line %d says otherwise: keep one", k.Line, k.Value, c.Image, lines[c.Image])
		}
		out[c.Image] = c
		lines[c.Image] = k.Line
	}
	return out, nil
}

// decodeEntry decodes one image's entry, refusing a key it does not know
// (a misspelt "entryPoint" would otherwise read as no ENTRYPOINT).
func decodeEntry(v *yaml.Node, e *entry) error {
	if v.Kind != yaml.MappingNode {
		return errShape
	}
	for i := 0; i < len(v.Content); i += 2 {
		k := v.Content[i]
		var list *[]string
		switch k.Value {
		case "entrypoint":
			list = &e.Entrypoint
		case "cmd":
			list = &e.Cmd
		default:
			return fmt.Errorf("unknown key %q: an entry has only \"entrypoint\" and \"cmd\"", k.Value)
		}
		val := v.Content[i+1]
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue
		}
		if val.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: want a list of words, as the image's configuration has it (exec form)", k.Value)
		}
		for _, w := range val.Content {
			if w.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: want a list of words", k.Value)
			}
			*list = append(*list, w.Value)
		}
	}
	return nil
}
