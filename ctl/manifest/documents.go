// documents.go: a file's text in, its YAML documents out, each parsed
// alone within the bounds, with what stops one from being read; and what
// makes a file a Helm template rather than a manifest.

package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// helmAction is the line of data's first Helm template action, {{ ... }}
// on one line, as Go's templates write them; 0 when it has none. Other
// tools' placeholders in {{ }} are no actions: Argo's {{args.name}} and
// {{inputs.parameters.x}}, replaced by Argo Rollouts and Argo Workflows
// when they run what the manifest holds, are part of a manifest as
// applied.
func helmAction(data []byte) int {
	line := 1
	for off := 0; off < len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := data[off:next]
		for rest := text; ; {
			i := bytes.Index(rest, []byte("{{"))
			if i < 0 || !bytes.Contains(rest[i+2:], []byte("}}")) {
				break
			}
			if goAction(rest[i+2:]) {
				return line
			}
			rest = rest[i+2:]
		}
		off = next
	}
	return 0
}

// goAction says whether the text after "{{" opens an action of a Go
// template, as Helm's are written ({{ .Values.x }}, {{- include "x" . }},
// {{ $v }}, {{ end }}): it starts with a dot, a variable, a parenthesis, a
// string or a comment, or with a word that has no dot in it, a keyword or
// a function's name. A dotted name ({{args.namespace}}, {{ workflow.name
// }}) or an expression ({{=...}}) is another tool's placeholder.
func goAction(rest []byte) bool {
	rest = bytes.TrimLeft(bytes.TrimPrefix(rest, []byte("-")), " \t")
	if len(rest) == 0 {
		return false
	}
	if strings.IndexByte(".$(\"`/", rest[0]) >= 0 {
		return true
	}
	end := bytes.IndexAny(rest, " \t}|")
	if end < 0 {
		end = len(rest)
	}
	return validName(string(rest[:end]))
}

// helmProblem says that a file is a Helm template, which is YAML only once
// rendered, and how to give what it renders to the command that reads.
func (in *Input) helmProblem(file string, line int) Problem {
	if in.opt.Command == "inject" {
		return Problem{File: file, Line: line,
			Message: "a Helm template ({{ ... }}), not a manifest: render it first and adopt proxy-await in what it renders, helm template CHART | proxy-awaitctl inject -"}
	}
	return Problem{File: file, Line: line,
		Message: "a Helm template ({{ ... }}), not a manifest: render it first and check what it renders, helm template CHART | proxy-awaitctl check -"}
}

// parseFile reads the documents of a file into the input: its pod
// templates, Namespaces, ConfigMaps and Secrets, or the findings that say
// why a document cannot be read; it returns the line of its first
// document that is no Kubernetes object (no kind), 0 when there is none. A Helm template is one finding: a file
// with {{ ... }} holds what it read until it is known not to be one; it is
// one when a document does not parse, or parses with a {{ ... }} where a
// value goes. {{ ... }} inside a string (a ConfigMap's alerting template)
// is text.
func (in *Input) parseFile(name string, data []byte, chart bool) int {
	action := helmAction(data)
	if chart && action > 0 {
		in.Problems = append(in.Problems, in.helmProblem(name, action))
		return 0
	}
	notObject := 0
	lines := &fileLines{data: data}
	var held []kept
	var bad []Problem
	helm := false // a {{ ... }} that YAML took for a mapping's key
	documents(name, data, in.opt.Bounds, func(root *yaml.Node, p piece) {
		helm = helm || action > 0 && mappingKey(root)
		if notObject == 0 && !p.item && str(get(root, "kind")) == "" && root.ShortTag() != "!!null" {
			notObject = root.Line
		}
		for _, o := range objects(name, root) {
			for _, k := range in.keep(o, lines) {
				if action > 0 {
					held = append(held, k)
				} else {
					in.add(k)
				}
			}
		}
	}, func(p Problem) { bad = append(bad, p) })
	if action > 0 && (len(bad) > 0 || helm) {
		in.Problems = append(in.Problems, in.helmProblem(name, action))
		return 0
	}
	in.Problems = append(in.Problems, bad...)
	for _, k := range held {
		in.add(k)
	}
	return notObject
}

// documents parses each document of a file and passes its root and its
// text to doc, or a finding to bad. While all goes well one parser reads the whole stream,
// which costs far less than a parser for each document when the documents
// are many and small; a document over a bound, or one the parser refuses,
// is read alone, as every document after it.
func documents(name string, data []byte, b Bounds, doc func(*yaml.Node, piece), bad func(Problem)) {
	pieces := splitDocuments(data)
	// whole reads a parsed document: its aliases and keys within bounds.
	whole := func(root *yaml.Node, p piece) {
		if bytes.IndexByte(p.text, '*') >= 0 {
			if err := checkAliases(root, b); err != nil {
				bad(Problem{File: name, Line: root.Line, Message: err.Error()})
				return
			}
		}
		// Only an object is the API server's to refuse.
		if key, first, again := duplicateKey(root); key != "" && kubernetesObject(root) {
			bad(Problem{File: name, Line: again, Message: fmt.Sprintf("the key %s is given twice in one mapping (lines %d and %d), which the API server's strict field validation refuses: keep one", strconv.Quote(key), first, again)})
			return
		}
		if line := collectionKey(root); line > 0 && kubernetesObject(root) {
			bad(Problem{File: name, Line: line, Message: `a key is a mapping, not a string (an unquoted {{ ... }} is read as one), which kubectl refuses: quote the value, "{{ ... }}"`})
			return
		}
		doc(root, p)
	}
	next := 0 // the first piece not read yet
	admitted := true
	stream := data // what the one parser reads: up to the first List
	for _, p := range pieces {
		admitted = admitted && admit(p.text, b) == nil
		if len(stream) == len(data) && maybeList(p.text) {
			stream = data[:p.off]
		}
	}
	if admitted {
		dec := yaml.NewDecoder(bytes.NewReader(stream))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break // the end; or a document the parser refuses, read alone below
			}
			if len(n.Content) == 0 {
				continue
			}
			root := n.Content[0]
			i := slices.IndexFunc(pieces[next:], func(p piece) bool { return p.line+bytes.Count(p.text, []byte("\n")) >= root.Line-1 })
			if i < 0 {
				break
			}
			next += i
			whole(root, pieces[next])
			next++
		}
	}
	for _, p := range pieces[next:] {
		if maybeList(p.text) && readList(name, p, b, whole) {
			continue
		}
		root, f := parseDocument(name, p, b)
		switch {
		case f != nil:
			bad(*f)
		case root != nil:
			whole(root, p)
		}
	}
}

// kubernetesObject says whether a document is one the API server takes:
// it has apiVersion and kind.
func kubernetesObject(root *yaml.Node) bool {
	return str(get(root, "apiVersion")) != "" && str(get(root, "kind")) != ""
}

// mappingKey says whether a mapping of the document has a mapping for a
// key: what YAML makes of an unquoted {{ .Values.x }}, and no manifest has.
func mappingKey(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if n.Content[i].Kind == yaml.MappingNode {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if mappingKey(c) {
			return true
		}
	}
	return false
}

// kept is what is kept of an object of a file: a pod template, a
// Namespace, a ConfigMap or a Secret.
type kept struct {
	pod     *Pod
	ns      *Namespace
	store   *store
	service *Service
}

// parseDocument parses one document, within the bounds; nil and no
// finding for a document of comments only.
func parseDocument(name string, piece piece, b Bounds) (*yaml.Node, *Problem) {
	fail := func(line int, msg string) (*yaml.Node, *Problem) {
		return nil, &Problem{File: name, Line: line, Message: msg}
	}
	if err := admit(piece.text, b); err != nil {
		return fail(piece.line+1, err.Error())
	}
	var n yaml.Node
	if err := yaml.Unmarshal(piece.text, &n); err != nil {
		line, msg := yamlError(err)
		return fail(piece.line+line, msg)
	}
	shiftLines(&n, piece.line)
	if len(n.Content) == 0 {
		return nil, nil // comments only, or empty
	}
	return n.Content[0], nil
}

// admit says whether a document's text is within the bounds: its size, and
// the nodes it can hold. Lines of a block scalar (a CSV, a script in a
// ConfigMap) are no nodes, but only a parser knows for sure where one ends:
// so a document that has too many nodes unless its block scalars are left
// out is parsed once with each of their lines shrunk to one character, and
// admitted only if that parse shows those lines to be block scalars.
func admit(text []byte, b Bounds) error {
	tooLarge := fmt.Errorf("a document of %d bytes, more than is read at once (%s, or about %d nodes): split it, a List into its items",
		len(text), size(b.Document), b.Nodes)
	if len(text) > b.Document {
		return tooLarge
	}
	if nodesAtMost(text) <= b.Nodes {
		return nil
	}
	shrunk, bodies := shrinkBlockScalars(text)
	if len(bodies) == 0 || nodesAtMost(shrunk) > b.Nodes {
		return tooLarge
	}
	var n yaml.Node
	if yaml.Unmarshal(shrunk, &n) != nil || !verified(&n, bodies) {
		return tooLarge // what looked like block scalars was not all
	}
	return nil
}

// verified says whether the parse of a shrunk text shows a block scalar
// at each body's header whose value is that body's shrunk lines, and so
// that the bodies hold no nodes.
func verified(n *yaml.Node, bodies []blockBody) bool {
	blocks := map[int]*yaml.Node{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && (n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle) {
			blocks[n.Line] = n
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	for _, b := range bodies {
		s, ok := blocks[b.header]
		if !ok || strings.Count(s.Value, "x") != b.lines || strings.Trim(s.Value, "x \n") != "" {
			return false
		}
	}
	return true
}

// blockBody is the body of a block scalar as shrinkBlockScalars found it:
// the line of its header (from 1) and how many of its lines are not blank.
type blockBody struct {
	header, lines int
}

// shrinkBlockScalars is text with every line of what looks like a block
// scalar's body ("key: |", "- >-", then lines indented more than the key)
// cut to its indentation and an "x", and where those bodies are. It only
// reads the text: admit has a parser confirm what it found.
func shrinkBlockScalars(text []byte) ([]byte, []blockBody) {
	if !hasBlockHeader(text) {
		return nil, nil
	}
	out := make([]byte, 0, len(text)/4)
	var bodies []blockBody
	parent, indent := -1, -1 // in a body: the header's indentation, and the body's
	line, header := 0, 0
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		raw := text[off:next]
		off = next
		line++
		spaces := 0
		for spaces < len(raw) && raw[spaces] == ' ' {
			spaces++
		}
		blank := len(bytes.TrimRight(raw[spaces:], "\r\n")) == 0
		if parent >= 0 && !blank {
			switch {
			case indent < 0 && spaces > parent:
				indent = spaces
				bodies = append(bodies, blockBody{header: header})
			case indent < 0 || spaces < indent:
				parent, indent = -1, -1
			}
		}
		if parent >= 0 && indent >= 0 {
			if !blank {
				out = append(out, raw[:spaces]...)
				out = append(out, 'x', '\n')
				bodies[len(bodies)-1].lines++
			} else {
				out = append(out, raw...)
			}
			continue
		}
		out = append(out, raw...)
		if p, ok := blockHeader(raw); ok {
			parent, indent, header = p, -1, line
		}
	}
	return out, bodies
}

// hasBlockHeader says whether any line of text is a block scalar's header.
func hasBlockHeader(text []byte) bool {
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		if _, ok := blockHeader(text[off:next]); ok {
			return true
		}
		off = next
	}
	return false
}

// blockHeader says whether a line ends in a block scalar's header, "key: |"
// or "- >-" with an optional comment, and the indentation its body must
// exceed: the key's column, or the column of the last "- ".
func blockHeader(raw []byte) (int, bool) {
	if !bytes.ContainsAny(raw, "|>") {
		return 0, false
	}
	t := string(bytes.TrimRight(raw, " \t\r\n"))
	if i := strings.Index(t, " #"); i >= 0 {
		t = strings.TrimRight(t[:i], " \t")
	}
	ind := 0
	for ind < len(t) && t[ind] == ' ' {
		ind++
	}
	rest, col, dash := t[ind:], ind, -1
	for strings.HasPrefix(rest, "- ") {
		dash = col
		trimmed := strings.TrimLeft(rest[2:], " ")
		col += len(rest) - len(trimmed)
		rest = trimmed
	}
	for _, ind := range []string{"|", "|-", "|+", ">", ">-", ">+"} {
		switch {
		case rest == ind && dash >= 0:
			return dash, true
		case strings.HasSuffix(rest, ": "+ind) && len(rest) > len(ind)+2:
			return col, true
		}
	}
	return 0, false
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

// piece is one document's text, the number of lines before it, and where
// it starts in the file.
type piece struct {
	text []byte
	line int
	off  int
	item bool       // an item of a List read item by item: a sequence of one
	list *yaml.Node // then: the List's header
}

// splitDocuments cuts a YAML stream at its document markers: a line that is
// "---" or starts with "--- ", and the line after a "..." end marker. YAML
// forbids either at the start of a line inside a scalar, so the cut never
// falls inside one. A "---" right after a directive (a line starting with
// "%") belongs to the directive's document.
func splitDocuments(data []byte) []piece {
	bom := len(data)
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	bom -= len(data)
	var out []piece
	start, startLine, line := 0, 0, 0
	directive := false
	cut := func(at, atLine int) {
		if at > start {
			out = append(out, piece{text: data[start:at], line: startLine, off: bom + start})
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

// shiftLines adds offset to the line of every node below n. A parsed
// document is a tree: an alias is a node of its own, whose Content is
// empty, so each node is reached once.
func shiftLines(n *yaml.Node, offset int) {
	n.Line += offset
	for _, c := range n.Content {
		shiftLines(c, offset)
	}
}

// duplicateKey finds a mapping of the document that has a key twice, and
// returns the key and its two lines; "" when there is none.
func duplicateKey(n *yaml.Node) (string, int, int) {
	if n.Kind == yaml.MappingNode {
		var seen map[string]int
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				continue
			}
			if seen == nil {
				seen = make(map[string]int, len(n.Content)/2)
			}
			if first, ok := seen[k.Value]; ok {
				return k.Value, first, k.Line
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if key, first, again := duplicateKey(c); key != "" {
			return key, first, again
		}
	}
	return "", 0, 0
}

// collectionKey finds a key of the document that is a mapping or a
// sequence, which kubectl cannot make a JSON object's key of (a scalar
// key it makes a string), and returns its line; 0 when there is none.
func collectionKey(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.MappingNode || k.Kind == yaml.SequenceNode {
				return k.Line
			}
		}
	}
	for _, c := range n.Content {
		if line := collectionKey(c); line > 0 {
			return line
		}
	}
	return 0
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
// than b.Expansion nodes, or whose alias contains itself: what every walk
// of the document, following aliases, can cost is then bounded.
func checkAliases(doc *yaml.Node, b Bounds) error {
	// Sizes stop growing here, so that exponential aliases cannot overflow
	// them; a document read has fewer than 2*b.Nodes nodes, so a size this
	// large is past the bound whatever the document.
	expansionCap := b.Expansion + 2*b.Nodes + 1
	sizes := map[*yaml.Node]int{}
	const visiting = -1
	var expand func(n *yaml.Node) (int, error)
	expand = func(n *yaml.Node) (int, error) {
		switch s, ok := sizes[n]; {
		case ok && s == visiting:
			return 0, errors.New("an alias refers to a node that contains it")
		case ok:
			return s, nil
		}
		sizes[n] = visiting
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
		sizes[n] = total
		return total, nil
	}
	expanded, err := expand(doc)
	if err != nil {
		return err
	}
	if plain := len(sizes); expanded-plain > b.Expansion {
		return fmt.Errorf("its aliases expand it by more than %d nodes: refused unread", b.Expansion)
	}
	return nil
}
