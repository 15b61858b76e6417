// read.go: files, directories and stdin in, YAML documents out, with every
// bound that keeps a hostile or huge input from costing more than a
// refusal: the input as a whole, each document, its nodes and its aliases.

package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds on what a manifest may cost. All the input together is read up
// to maxInputBytes; past that it is refused, having cost only its reading.
// Each document is parsed alone, and its node tree dropped once the
// objects in it are read, so memory follows the largest document, not the
// input. A parsed document takes some 250 bytes a node, so a document is
// parsed only when a look at its text says it has at most maxNodes (the
// lines of a block scalar are no nodes); the size bound stops what is
// plainly too large before that. A document is an object, or a List of
// them as kubectl prints a whole namespace; Kubernetes stores no object
// over 1.5 MiB (etcd's bound). Aliases are never expanded: a document whose
// aliases would expand it by more than maxExpansion nodes (a "billion
// laughs") is refused, as is an alias that contains itself.
const (
	maxInputBytes = 64 << 20
	maxDocBytes   = 16 << 20
	maxNodes      = 1_000_000
	maxExpansion  = 1_000_000
)

// Bounds on a setting that holds YAML or JSON of its own (Istio's
// proxy.istio.io/config), which is parsed again for each pod that has it:
// the API server takes at most 256 KiB of a pod's annotations in all
// (apimachinery's TotalAnnotationSizeLimitB), and the settings read from
// one are a handful of fields, so a few thousand nodes are plenty. Past
// either bound the setting is not read, at the cost of a look at its
// text.
const (
	maxNestedBytes = 256 << 10
	maxNestedNodes = 10_000
)

// errNestedBound is a nested setting past its bounds, as unknown-value
// names where the value it holds would come from.
const errNestedBound = pastBound("larger than is read of an annotation (256 KiB, the most the API server takes of a pod's annotations, or about 10000 YAML nodes)")

// parseNested parses a setting that holds YAML or JSON, within the bounds
// above: its root node, or an error.
func parseNested(text string) (*yaml.Node, error) {
	if len(text) > maxNestedBytes || nodesAtMost([]byte(text)) > maxNestedNodes {
		return nil, errNestedBound
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		return nil, err
	}
	if len(n.Content) == 0 {
		return nil, errors.New("empty")
	}
	if err := checkAliases(&n); err != nil {
		return nil, err
	}
	return n.Content[0], nil
}

// source is a file to read: a path, or stdin; or a path that cannot be
// read, and why.
type source struct {
	name  string // as findings name it
	path  string // "" for stdin
	chart bool   // a file of a Helm chart's templates directory
	own   bool   // a chart's own file beside its Chart.yaml (values.yaml), or Chart.yaml
	err   error
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
	charts := map[string]bool{}
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
			out = append(out, source{name: p, path: p, chart: inChart(p, charts), own: chartsOwn(p)})
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
				out = append(out, source{name: path, path: path, chart: inChart(path, charts), own: chartsOwn(path)})
			}
			return nil
		})
		if err != nil {
			bad(p, err)
		}
	}
	return out
}

// inChart says whether a file is in a Helm chart's templates directory
// (below a directory "templates" beside a Chart.yaml), where every file is
// a template to render, not a manifest. known caches the directories seen.
func inChart(file string, known map[string]bool) bool {
	for dir := filepath.Dir(file); ; {
		if filepath.Base(dir) == "templates" {
			chart, seen := known[dir]
			if !seen {
				_, err := os.Stat(filepath.Join(filepath.Dir(dir), "Chart.yaml"))
				chart = err == nil
				known[dir] = chart
			}
			if chart {
				return true
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return false
		}
		dir = up
	}
}

// chartsOwn says whether a file is a Helm chart's own, beside its
// Chart.yaml: no manifest, and not worth a warning that it was skipped,
// since the chart's templates get a finding that says to render them.
func chartsOwn(file string) bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(file), "Chart.yaml"))
	return err == nil
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

// errPastBound is a source that would take the input past maxInputBytes.
// A constant, so that nothing of the check runs when proxy-await starts.
const errPastBound = pastBound("past 64 MiB of manifests in all, the most that is read: this and what follows is not read; check it in parts")

type pastBound string

func (e pastBound) Error() string { return string(e) }

// readAll reads a source, up to limit bytes: past that it is refused,
// having read limit+1 bytes of it.
func readAll(src source, stdin io.Reader, limit int) ([]byte, error) {
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
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > int64(limit) {
			return nil, errPastBound // refused unread
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, errPastBound
	}
	return data, nil
}

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

// helmFinding says that a file is a Helm template, which is YAML only once
// rendered, and how to give what it renders to mode (--check by default).
func helmFinding(file string, line int, mode string) Finding {
	if mode == "inject" {
		return inputFinding(file, line,
			"a Helm template ({{ ... }}), not a manifest: render it first and adopt proxy-await in what it renders, helm template CHART | proxy-awaitctl inject -")
	}
	return inputFinding(file, line,
		"a Helm template ({{ ... }}), not a manifest: render it first and check what it renders, helm template CHART | proxy-awaitctl check -")
}

// fileLines is a file's text, for the lines inside a multi-line scalar.
type fileLines struct {
	data   []byte
	starts []int // the offset of each line, from line 1; made when first needed
}

// text is line n of the file (from 1), without its line break.
func (f *fileLines) text(n int) string {
	if f.starts == nil {
		f.starts = append(f.starts, 0)
		for i, c := range f.data {
			if c == '\n' {
				f.starts = append(f.starts, i+1)
			}
		}
	}
	if n < 1 || n > len(f.starts) {
		return ""
	}
	end := len(f.data)
	if n < len(f.starts) {
		end = f.starts[n] - 1
	}
	return strings.TrimRight(string(f.data[f.starts[n-1]:end]), "\r")
}

// scalar is a node's text with the line of each of its lines: a literal
// block keeps the file's lines; a folded block or a flow scalar over
// several lines joins them, and each of its lines is found again from the
// file's text.
func (f *fileLines) scalar(n *yaml.Node) scalar {
	v := scalarOf(n)
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || f == nil {
		return v
	}
	switch n.Style {
	case yaml.LiteralStyle:
		v.line++
		for i := 0; i < len(v.s)-1; i++ {
			if v.s[i] == '\n' {
				v.breaks = append(v.breaks, i+1)
			}
		}
		return v
	case yaml.FoldedStyle:
		v.line++
		v.folded = true
	default:
		if !strings.ContainsAny(v.s, " \t\n") {
			return v // one word: on one line
		}
	}
	// Each line of the file gives the value its text, without the white
	// space around it, and one character that joins it to the next.
	at, empty := 0, false
	for ln := v.line; at < len(v.s); ln++ {
		raw := f.text(ln)
		if ln == v.line && n.Style != yaml.FoldedStyle && n.Column-1 <= len(raw) {
			raw = raw[n.Column-1:]
			if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
				raw = raw[min(1, len(raw)):]
			}
		}
		if ln > v.line {
			if ln > len(f.starts) {
				break
			}
			v.breaks = append(v.breaks, at)
		}
		switch t := strings.TrimSpace(raw); {
		case t != "":
			at += len(t) + 1
			empty = false
		case empty || ln == v.line:
			at++
		default:
			empty = true // a first empty line turns the join into a line break
		}
	}
	return v
}

// parseFile reads the documents of a file into the input: its pod
// templates, Namespaces, ConfigMaps and Secrets, or the findings that say
// why a document cannot be read; it returns the line of its first
// document that is no Kubernetes object (no kind), 0 when there is none. A Helm template is one finding: a file
// with {{ ... }} holds what it read until it is known not to be one; it is
// one when a document does not parse, or parses with a {{ ... }} where a
// value goes. {{ ... }} inside a string (a ConfigMap's alerting template)
// is text.
func (in *input) parseFile(name string, data []byte, chart bool) int {
	action := helmAction(data)
	if chart && action > 0 {
		in.findings = append(in.findings, helmFinding(name, action, in.opt.Mode))
		return 0
	}
	notObject := 0
	lines := &fileLines{data: data}
	var held []kept
	var bad []Finding
	helm := false // a {{ ... }} that YAML took for a mapping's key
	documents(name, data, func(root *yaml.Node, _ piece) {
		helm = helm || action > 0 && mappingKey(root)
		if notObject == 0 && str(get(root, "kind")) == "" && root.ShortTag() != "!!null" {
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
	}, func(f Finding) { bad = append(bad, f) })
	if action > 0 && (len(bad) > 0 || helm) {
		in.findings = append(in.findings, helmFinding(name, action, in.opt.Mode))
		return 0
	}
	in.findings = append(in.findings, bad...)
	for _, k := range held {
		in.add(k)
	}
	return notObject
}

// skippedFinding says that a document is no Kubernetes object, and so
// was not checked.
func skippedFinding(file string, line int) Finding {
	return Finding{File: file, Line: line, Level: levelOf(ruleSkipped), Rule: ruleSkipped,
		Message: "not a Kubernetes object (it has no kind): nothing in this document is checked"}
}

// documents parses each document of a file and passes its root and its
// text to doc, or a finding to bad. While all goes well one parser reads the whole stream,
// which costs far less than a parser for each document when the documents
// are many and small; a document over a bound, or one the parser refuses,
// is read alone, as every document after it.
func documents(name string, data []byte, doc func(*yaml.Node, piece), bad func(Finding)) {
	pieces := splitDocuments(data)
	// whole reads a parsed document: its aliases and keys within bounds.
	whole := func(root *yaml.Node, p piece) {
		if bytes.IndexByte(p.text, '*') >= 0 {
			if err := checkAliases(root); err != nil {
				bad(inputFinding(name, root.Line, err.Error()))
				return
			}
		}
		// Only an object is the API server's to refuse.
		if key, first, again := duplicateKey(root); key != "" && kubernetesObject(root) {
			bad(inputFinding(name, again, fmt.Sprintf("the key %s is given twice in one mapping (lines %d and %d), which the API server's strict field validation refuses: keep one", strconv.Quote(key), first, again)))
			return
		}
		doc(root, p)
	}
	next := 0 // the first piece not read yet
	admitted := true
	for _, p := range pieces {
		admitted = admitted && admit(p.text) == nil
	}
	if admitted {
		dec := yaml.NewDecoder(bytes.NewReader(data))
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
		root, f := parseDocument(name, p)
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

// kept is what the check keeps of an object of a file: a pod template,
// a Namespace, a ConfigMap or a Secret.
type kept struct {
	pod   *pod
	ns    *namespace
	store *store
}

// parseDocument parses one document, within the bounds; nil and no
// finding for a document of comments only.
func parseDocument(name string, piece piece) (*yaml.Node, *Finding) {
	fail := func(line int, msg string) (*yaml.Node, *Finding) {
		f := inputFinding(name, line, msg)
		return nil, &f
	}
	if err := admit(piece.text); err != nil {
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
func admit(text []byte) error {
	tooLarge := fmt.Errorf("a document of %d bytes, more than is read at once (%d MiB, or about %d nodes): split it, a List into its items",
		len(text), maxDocBytes>>20, maxNodes)
	if len(text) > maxDocBytes {
		return tooLarge
	}
	if nodesAtMost(text) <= maxNodes {
		return nil
	}
	shrunk, bodies := shrinkBlockScalars(text)
	if len(bodies) == 0 || nodesAtMost(shrunk) > maxNodes {
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
			out = append(out, piece{data[start:at], startLine, bom + start})
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
