// read.go: files, directories and stdin in, YAML documents out, with every
// bound that keeps a hostile or huge input from costing more than a refusal.

package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds on what a manifest may cost. A parsed document takes some 250
// bytes a node, so a document is parsed only when a look at its text says
// it has at most maxNodes; the size bounds stop what is plainly too large
// before that. A document is an
// object, or a List of them as kubectl prints a whole namespace; Kubernetes
// stores no object over 1.5 MiB (etcd's bound). Aliases are never
// expanded: a document whose aliases would expand it by more than
// maxExpansion nodes (a "billion laughs") is refused, as is an alias that
// contains itself.
const (
	maxFileBytes = 64 << 20
	maxDocBytes  = 16 << 20
	maxNodes     = 1_000_000
	maxExpansion = 1_000_000
)

// document is one YAML document of a file, parsed.
type document struct {
	file string
	root *yaml.Node // the document's content: a mapping for a Kubernetes object
}

// source is a file to read: a path, or stdin; or a path that cannot be
// read, and why.
type source struct {
	name string // as findings name it
	path string // "" for stdin
	err  error
}

// stdinName is how findings name standard input.
const stdinName = "<stdin>"

// sources expands the command line's paths: a directory into its *.yaml,
// *.yml and *.json files (recursively, in lexical order, skipping hidden
// directories such as .git; a FIFO or device so named is a source with its
// error), "-" into stdin. A path named on the command line is read whatever
// it is: <(kubectl get ...) is a pipe. A path that cannot be read is
// a source with its error, in its place.
func sources(paths []string) []source {
	var out []source
	for _, p := range paths {
		// A finding's file is read in its turn, by its order in out.
		bad := func(path string, err error) {
			out = append(out, source{name: path, err: err})
		}
		if p == "-" {
			out = append(out, source{name: stdinName})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			bad(p, err)
			continue
		}
		if !st.IsDir() {
			out = append(out, source{name: p, path: p})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				bad(path, err)
				return nil
			case d.IsDir() && path != p && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case d.IsDir() || !manifestName(d.Name()):
			case !regular(path, d):
				// Opening a FIFO would wait for a writer for ever.
				bad(path, errors.New("not a regular file"))
			default:
				out = append(out, source{name: path, path: path})
			}
			return nil
		})
		if err != nil {
			bad(p, err)
		}
	}
	return out
}

// regular says whether a directory's entry is a file, itself or through a
// link, rather than a FIFO, a socket or a device.
func regular(path string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.Type().IsRegular()
	}
	st, err := os.Stat(path)
	return err != nil || st.Mode().IsRegular() // a broken link is reported when it is opened
}

func manifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// reason is err without the file name that findings already show.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readAll reads a source, up to maxFileBytes.
func readAll(src source, stdin io.Reader) ([]byte, error) {
	if src.err != nil {
		return nil, src.err
	}
	r := stdin
	if r == nil && src.path == "" {
		return nil, errors.New("no standard input to read")
	}
	if src.path != "" {
		f, err := os.Open(src.path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB: split it", maxFileBytes>>20)
	}
	return data, nil
}

// parse splits data into documents and parses each; a document that cannot
// be parsed, or is over a bound, is a finding and the others are still read.
func parse(name string, data []byte) ([]document, []Finding) {
	var docs []document
	var bad []Finding
	for _, piece := range splitDocuments(data) {
		if len(piece.text) > maxDocBytes || nodesAtMost(piece.text) > maxNodes {
			bad = append(bad, inputFinding(name, piece.line+1, fmt.Sprintf(
				"a document of %d bytes, more than is read at once (%d MiB, or about %d nodes): split it, a List into its items",
				len(piece.text), maxDocBytes>>20, maxNodes)))
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal(piece.text, &n); err != nil {
			line, msg := yamlError(err)
			bad = append(bad, inputFinding(name, piece.line+line, msg))
			continue
		}
		shiftLines(&n, piece.line, map[*yaml.Node]bool{})
		if len(n.Content) == 0 {
			continue // comments only, or empty
		}
		if err := checkAliases(&n); err != nil {
			bad = append(bad, inputFinding(name, n.Content[0].Line, err.Error()))
			continue
		}
		docs = append(docs, document{file: name, root: n.Content[0]})
	}
	return docs, bad
}

// nodesAtMost is an upper bound of the nodes a document's text can hold,
// read without parsing: every node but the first starts after a line
// break, a comma, an opening bracket or brace, or a ": ", "- " or "? "
// indicator, and one of those starts two nodes at most (a key and its
// value, a flow entry without a value).
func nodesAtMost(text []byte) int {
	n := 1
	for i, c := range text {
		switch c {
		case '\n', ',', '[', '{':
			n++
		case ':', '-', '?':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t' {
				n++
			}
		}
	}
	return 2 * n
}

// piece is one document's text and the number of lines before it.
type piece struct {
	text []byte
	line int
}

// splitDocuments cuts a YAML stream at its document markers: a line that is
// "---" or starts with "--- ", and the line after a "..." end marker. YAML
// forbids either at the start of a line inside a scalar, so the cut never
// falls inside one. A "---" right after a directive (a line starting with
// "%") belongs to the directive's document.
func splitDocuments(data []byte) []piece {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var out []piece
	start, startLine, line := 0, 0, 0
	directive := false
	cut := func(at, atLine int) {
		if at > start {
			out = append(out, piece{data[start:at], startLine})
		}
		start, startLine = at, atLine
	}
	for off := 0; off < len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := bytes.TrimRight(data[off:next], "\r\n")
		switch {
		case marker(text, "---"):
			if !directive {
				cut(off, line)
			}
			directive = false
		case marker(text, "..."):
			cut(next, line+1)
			directive = false
		case len(text) > 0 && text[0] == '%':
			if !directive {
				cut(off, line)
			}
			directive = true
		}
		off = next
	}
	cut(len(data), line)
	return out
}

func marker(line []byte, m string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(m))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t')
}

// shiftLines adds offset to the line of every node below n, once each.
func shiftLines(n *yaml.Node, offset int, seen map[*yaml.Node]bool) {
	if seen[n] {
		return
	}
	seen[n] = true
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset, seen)
	}
}

// yamlError splits a parser's error, "yaml: line N: what", into the line
// (1 for the document's first when it names none) and what.
func yamlError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, what, ok := strings.Cut(rest, ": ")
		if n, err := strconv.Atoi(num); ok && err == nil {
			if zeroBased(what) {
				n++
			}
			return n, "not YAML: " + what
		}
	}
	return 1, "not YAML: " + msg
}

// zeroBased says whether a yaml.v3 error is its parser's, whose line
// counts from 0 where its scanner's count from 1 (decode.go's fail). These
// are the parser's problems, parserc.go of v3.0.5.
func zeroBased(problem string) bool {
	switch problem {
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
		"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
		"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
		"found incompatible YAML document", "found undefined tag handle":
		return true
	}
	return false
}

// checkAliases refuses a document whose aliases would expand it by more
// than maxExpansion nodes, or whose alias contains itself: what every walk
// of the document, following aliases, can cost is then bounded.
func checkAliases(doc *yaml.Node) error {
	// Sizes stop growing here, so that exponential aliases cannot overflow
	// them; a document read has fewer than 2*maxNodes nodes, so a size this
	// large is past the bound whatever the document.
	const expansionCap = maxExpansion + 2*maxNodes + 1
	size := map[*yaml.Node]int{}
	const visiting = -1
	var expand func(n *yaml.Node) (int, error)
	expand = func(n *yaml.Node) (int, error) {
		switch s, ok := size[n]; {
		case ok && s == visiting:
			return 0, errors.New("an alias refers to a node that contains it")
		case ok:
			return s, nil
		}
		size[n] = visiting
		total := 1
		add := func(s int) { total = min(total+s, expansionCap) }
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s, err := expand(n.Alias)
			if err != nil {
				return 0, err
			}
			add(s)
		}
		for _, c := range n.Content {
			if total == expansionCap {
				break // refused whatever the rest holds
			}
			s, err := expand(c)
			if err != nil {
				return 0, err
			}
			add(s)
		}
		size[n] = total
		return total, nil
	}
	expanded, err := expand(doc)
	if err != nil {
		return err
	}
	if plain := len(size); expanded-plain > maxExpansion {
		return fmt.Errorf("its aliases expand it by more than %d nodes: refused unread", maxExpansion)
	}
	return nil
}
