// Package inject is proxy-awaitctl inject: it reads manifests as check
// does and writes them to stdout with proxy-await adopted in every pod
// template, the way linkerd inject adds its proxy. What to change is its
// plan (plan.go), made from the model that check's rules judge (rules.Pod:
// the sidecars a pod shows, what its containers and their images run,
// images.go); this package edits the text, at the nodes' positions, so
// that every other byte stays as it was (splice.go, pod.go), and records
// each change in the pod (record.go), so that --undo and the next inject
// take it back (undo.go).
package inject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/proxies"
)

// Result is what an injection made of its input: the files it wrote (to
// Options.Out), each in its turn, and how many lines of each event it said
// (to Options.Say).
type Result struct {
	Written  []Written      // each file written, in its turn
	WriteErr error          // Options.Out refused the text: the rest is not written
	Said     map[string]int // lines said, by event
	Pods     int            // pod templates whose containers adopted proxy-await
	Adopted  int            // containers that adopted it
	Unknown  []string
	Failed   bool // a container was skipped or an input refused
	nameSeen map[string]bool
	w        *writer
	out      output
	tell     func(Line)    // Options.Say
	lineOf   func(int) int // the input's line of a line of the text read again, for the file being written
}

// Written is a file written, and where its text is in the output.
type Written struct {
	Name       string
	Start, End int
}

// output is where the text goes and what of it is written.
type output struct {
	w    io.Writer
	size int  // bytes written
	last byte // the last of them
}

// Line is what became of a container or a pod template, or a file
// refused, as FILE[:LINE]: EVENT: [KIND/NAME [container NAME]: ]message.
type Line struct {
	Event     string // adopted, skipped, warning, or refused (a file)
	File      string
	Line      int
	Kind      string
	Name      string
	Container string
	Message   string
	Flags     []string // adopted: the container's flags
	// failure: a container that needs proxy-await is left without it, or
	// an input is refused.
	failure bool
}

// level is how much a line matters, as -q and -v choose what is said: a
// container left without proxy-await that needs it, or a file refused, is
// an error, said even under -q; a warning is a warning; what was adopted,
// and what needs nothing, is information.
func (l Line) level() slog.Level {
	switch {
	case l.failure:
		return slog.LevelError
	case l.Event == "warning":
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func (l Line) String() string {
	at := l.File
	if l.Line > 0 {
		at = fmt.Sprintf("%s:%d", l.File, l.Line)
	}
	switch {
	case l.Kind == "":
		return fmt.Sprintf("%s: %s: %s", at, l.Event, l.Message)
	case l.Container == "":
		return fmt.Sprintf("%s: %s: %s/%s: %s", at, l.Event, l.Kind, l.Name, l.Message)
	}
	return fmt.Sprintf("%s: %s: %s/%s container %s: %s", at, l.Event, l.Kind, l.Name, l.Container, l.Message)
}

// Options are what an injection needs beside the manifests.
type Options struct {
	// Versions are the cluster's releases, by name (proxies.ReleaseNames).
	Versions map[string]proxies.Version
	// Native are the settings of whole meshes that turn native sidecars on
	// (true) or off, by preset (proxies.MeshNames).
	Native map[string]bool
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Images find what the image of a container that sets no command
	// runs; nil finds none.
	Images     Resolver
	Image      string   // the proxy-await-install init container's
	Containers []string // the containers to adopt, by name; none: every one
	// Undo takes back what inject changed, and adopts nothing.
	Undo bool
	// Out gets the text, file by file as it is made, so that a run holds
	// one file's (or one large document's) edited text at a time.
	Out io.Writer
	// Say gets each line as it is said: once its document is done (a
	// changed one's text verified and written; an unchanged one's text is
	// written with the next change, or the file's end), so that a run
	// holds none of them.
	Say func(Line)
}

// Paths injects proxy-await into the manifests at paths. What an earlier
// inject changed is taken back first, so that it is worked out again from
// the current --versions and input; with opt.Undo, that is all. The
// commands of images are read, within ctx, before anything is written; a
// --container that names no application container of the input reads
// none, and writes and says nothing (Result.Unknown).
func Paths(ctx context.Context, paths []string, opt Options) *Result {
	r := &Result{Said: map[string]int{}, nameSeen: map[string]bool{}, w: newWriter(), out: output{w: opt.Out}, tell: opt.Say}
	if r.out.w == nil {
		r.out.w = io.Discard
	}
	if r.tell == nil {
		r.tell = func(Line) {}
	}
	in := manifest.Read(paths, manifest.Options{Stdin: opt.Stdin, Command: "inject", Keep: true})
	// By the file's index: a path given twice is two files.
	undone, changed := map[int]undoneFile{}, map[int][]byte{}
	for i, f := range in.Files {
		if u := r.undoFile(f); len(u.pods) > 0 {
			undone[i] = u
			if len(u.edits) > 0 {
				changed[i] = u.data
			}
		}
	}
	if opt.Undo {
		r.undoOnly(in, undone)
		return r
	}
	if len(changed) > 0 {
		in = in.Reread(changed)
	}
	before := map[podAt]undonePod{}
	prior := map[string]imageconfig.Config{}
	for fi := range in.Files {
		for _, u := range undone[fi].pods {
			before[podAt{fi, u.index}] = u
			for img, c := range u.images {
				prior[img] = c
			}
		}
	}

	// What is needed of the whole input before any file is written: the
	// names --container may give, the images whose commands are read, and
	// the ports that hostNetwork pods take. Then what was read of the pods
	// is let go: each file reads its own again as it is written.
	// A container is picked when --container names it (or names none), or
	// the last inject had adopted it.
	picked := func(name string, before undonePod) bool {
		return len(opt.Containers) == 0 || slices.Contains(opt.Containers, name) || slices.Contains(before.containers, name)
	}
	var refs []string
	seen := map[string]bool{}
	hostPorts := &hostPorts{taken: map[int]bool{}}
	for fi, f := range in.Files {
		_, ok := readable(f)
		for i, p := range f.Pods {
			in.LinkNamespace(p)
			hostPorts.add(p)
			adopts, skip := leftOut(p) == "", skippedNames(p)
			for _, c := range p.Containers {
				if !offered(c) {
					continue
				}
				if ok {
					r.nameSeen[c.Name] = r.nameSeen[c.Name] || slices.Contains(opt.Containers, c.Name)
				}
				if len(c.Command) == 0 && c.Image != "" && !seen[c.Image] && adopts && !slices.Contains(skip, c.Name) &&
					picked(c.Name, before[podAt{fi, i}]) {
					seen[c.Image] = true
					refs = append(refs, c.Image)
				}
			}
		}
		f.Pods = nil
	}
	in.Pods = nil
	for _, name := range opt.Containers {
		if !r.nameSeen[name] {
			r.Unknown = append(r.Unknown, name)
		}
	}
	if len(r.Unknown) > 0 {
		return r
	}
	im := resolve(ctx, opt.Images, refs, prior)
	pl := &planner{choose: picked, images: im, in: in, hostPorts: hostPorts}
	planOf := func(p *manifest.Pod, at podAt) plan {
		in.Link(p)
		return pl.planOf(rules.Analyse(p, rules.Options{Versions: opt.Versions, Native: opt.Native, Images: im}), before[at])
	}
	for fi, f := range in.Files {
		r.lineOf = nil
		if u, ok := undone[fi]; ok && len(u.edits) > 0 {
			// Lines of the text read again are lines of the input.
			r.lineOf = newLineMap(u.orig, u.edits).line
		}
		r.file(fi, f, planOf, opt)
	}
	return r
}

// undoOnly writes each file with what inject changed taken back, and says
// of each pod template that had changes whether they were.
func (r *Result) undoOnly(in *manifest.Input, undone map[int]undoneFile) {
	for fi, f := range in.Files {
		if !r.readable(f) {
			continue
		}
		u, ok := undone[fi]
		if !ok {
			r.writeFile(f, f.Data)
			continue
		}
		for _, up := range u.pods {
			p := up.pod
			if up.err != nil {
				r.line(Line{Event: "skipped", File: p.File, Line: p.Line, Kind: p.Kind, Name: p.Name, failure: true,
					Message: fmt.Sprintf("what inject changed cannot be taken back: %v; it is written as it is", up.err)})
				continue
			}
			what := "what inject changed is taken back"
			switch len(up.containers) {
			case 0:
			case 1:
				what += fmt.Sprintf(": %s no longer runs proxy-await", up.containers[0])
			default:
				what += fmt.Sprintf(": %s no longer run proxy-await", list(up.containers))
			}
			r.line(Line{Event: "undone", File: p.File, Line: p.Line, Kind: p.Kind, Name: p.Name, Message: what})
			r.Pods++
		}
		r.writeFile(f, u.data)
	}
}

// list is names in English: "a", "a and b", "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// writeFile writes a file's text whole.
func (r *Result) writeFile(f *manifest.File, text []byte) {
	r.begin(f)
	r.emit(text)
	r.end(f)
}

// begin starts a file's text in the output: a document marker between two
// files of YAML (f's text begins as its input does: the edits are inside
// its documents).
func (r *Result) begin(f *manifest.File) {
	r.Written = append(r.Written, Written{Name: f.Name})
	if r.out.size == 0 {
		return
	}
	if r.out.last != '\n' {
		r.emit([]byte{'\n'})
	}
	if first := bytes.TrimLeft(f.Data, " \t\r\n"); len(first) == 0 || first[0] != '{' && first[0] != '[' {
		r.emit([]byte("---\n"))
	}
	r.Written[len(r.Written)-1].Start = r.out.size
}

// emit writes text to Options.Out. Once the writer fails, nothing more is
// written.
func (r *Result) emit(text []byte) {
	if len(text) == 0 || r.WriteErr != nil {
		return
	}
	_, r.WriteErr = r.out.w.Write(text)
	r.out.size += len(text)
	r.out.last = text[len(text)-1]
}

// end ends the file begun last.
func (r *Result) end(*manifest.File) {
	r.Written[len(r.Written)-1].End = r.out.size
}

// file writes f's text with proxy-await adopted in its pod templates, as
// each document is done; nothing when f is refused, which its lines say.
func (r *Result) file(fi int, f *manifest.File, planOf func(*manifest.Pod, podAt) plan, opt Options) {
	if !r.readable(f) {
		return
	}
	r.begin(f)
	defer r.end(f)
	starts := lineStarts(f.Data)
	var lists listIndents
	// An edited document is parsed again to verify it: a small one at
	// once, a large one (a List of a whole namespace) once the file's own
	// parse is done, so that one large tree at a time is alive.
	var pending []edited
	// Not yet written, and not yet said: from the first pending document
	// on.
	var pieces [][]byte
	var results []*podResult
	flush := func() {
		n, m := len(pieces), len(results)
		if len(pending) > 0 {
			n, m = pending[0].piece, pending[0].result
		}
		for _, p := range pieces[:n] {
			r.emit(p)
		}
		for _, pr := range results[:m] {
			r.say(pr)
		}
		clear(pieces[:n]) // written and said: let go
		clear(results[:m])
		pieces, results = pieces[n:], results[m:]
		for i := range pending {
			pending[i].piece -= n
			pending[i].result -= m
		}
	}
	at, index := 0, 0 // index: of the next pod template in f
	f.EachDocument(func(dc manifest.Document) {
		defer flush()
		first := len(results)
		d := newDoc(r.w, f.Data, starts, dc.Root, dc.Start, dc.End)
		if dc.Item {
			lists.learn(d, dc.Root, dc.List)
		}
		var adopted []*podResult
		for _, t := range dc.Templates {
			pr := &podResult{pod: t.Pod, plan: planOf(t.Pod, podAt{fi, index})}
			index++
			results = append(results, pr)
			if len(pr.plan.Containers) == 0 {
				continue
			}
			before, saved := len(d.edits), clone(t.Node)
			if err := d.adopt(t.Node, pr.plan, opt.Image); err != nil {
				d.edits = d.edits[:before]
				*t.Node = *saved
				pr.err = err
				continue
			}
			adopted = append(adopted, pr)
		}
		if len(d.edits) == 0 {
			return
		}
		if dc.Start < at { // a document inside one already edited: a List's header holds its items
			for _, pr := range adopted {
				pr.err = errors.New("its document is inside one already changed")
			}
			return
		}
		pieces = append(pieces, f.Data[at:dc.Start], nil)
		at = dc.End
		e := edited{piece: len(pieces) - 1, result: first, text: d.apply(dc.Start, dc.End), want: sum(dc.Root), item: dc.Item, orig: f.Data[dc.Start:dc.End], adopted: adopted}
		e.items, e.block = d.items(dc.Root, dc.Start, dc.End)
		if dc.End-dc.Start <= smallDocument {
			pieces[e.piece] = r.verified(e)
			return
		}
		pending = append(pending, e)
	})
	for _, e := range pending {
		pieces[e.piece] = r.verified(e)
	}
	pending = nil
	flush()
	r.emit(f.Data[at:])
}

// smallDocument is the size up to which an edited document is verified at
// once, its tree beside the new text's: a pod's object is a few KB, a
// List of a whole namespace megabytes.
const smallDocument = 1 << 20

// edited is a document as edited, to verify.
type edited struct {
	piece   int // of the file's pieces, which verified fills
	result  int // the first of its pod templates' results
	text    []byte
	want    [sha256.Size]byte // the edited tree's sum
	item    bool              // the document is an item of a List read item by item
	items   []item            // a List's items, to verify each alone (items.go)
	block   bool              // the items are a block sequence's
	orig    []byte
	adopted []*podResult
}

// verified is a document's edited text when, parsed, it holds the edited
// tree: item by item, when it has items, else (or when they do not show
// it) whole; its text as it was when not, and its adopted pods then say
// why.
func (r *Result) verified(e edited) []byte {
	if len(e.items) > 0 && verifyItems(e.text, e.items, e.block) == nil {
		return e.text
	}
	if err := verify(e.text, e.want, e.item); err != nil {
		for _, pr := range e.adopted {
			pr.err = err
		}
		return e.orig
	}
	return e.text
}

// readable says whether f can be written out again: it was read and
// parsed whole, and it is a manifest; the lines say why not.
func (r *Result) readable(f *manifest.File) bool {
	lines, ok := readable(f)
	for _, l := range lines {
		r.line(l)
	}
	return ok
}

// readable says whether f can be written out again, and the lines that
// say why not.
func readable(f *manifest.File) ([]Line, bool) {
	var lines []Line
	for _, p := range f.Problems {
		if !p.NotObject {
			lines = append(lines, Line{Event: "refused", File: p.File, Line: p.Line, Message: p.Message + "; nothing of this file is written", failure: true})
		}
	}
	switch {
	case len(lines) > 0:
		return lines, false
	case f.NotObject > 0 && f.Chart:
		return nil, false // the chart's templates say to render it
	case f.NotObject > 0:
		return []Line{{Event: "refused", File: f.Name, Line: f.NotObject, failure: true,
			Message: "not a Kubernetes object (it has no kind), which inject writes out only beside the objects of a manifest: nothing of this file is written"}}, false
	}
	return nil, true
}

// podAt is a pod template by its file's index in the input and its own
// among the file's.
type podAt struct {
	file, index int
}

// podResult is what became of a pod template: its plan, and why its edits
// could not be made, if they could not.
type podResult struct {
	pod  *manifest.Pod
	plan plan
	err  error
}

// say says what became of a pod template: a line for each container that
// adopted proxy-await, with its flags, or was skipped, with the reason, and
// for what else the pod got, and its warnings; in the order of their lines.
func (r *Result) say(pr *podResult) {
	p, ad := pr.pod, pr.plan
	lines := slices.Clone(ad.Lines)
	for _, c := range ad.Containers {
		l := Line{Event: "adopted", File: p.File, Line: c.Line, Kind: p.Kind, Name: p.Name, Container: c.Name, Flags: c.Flags,
			Message: adoptedMessage(c)}
		if pr.err != nil {
			l = Line{Event: "skipped", File: p.File, Line: c.Line, Kind: p.Kind, Name: p.Name, Container: c.Name, failure: true,
				Message: fmt.Sprintf("its pod template is not changed: %v; adopt proxy-await in it by hand (docs/inject.md)", pr.err)}
		}
		lines = append(lines, l)
	}
	if gets := podSettings(ad); gets != "" && pr.err == nil && len(ad.Containers) > 0 {
		lines = append(lines, Line{Event: "adopted", File: p.File, Line: p.Line, Kind: p.Kind, Name: p.Name, Message: gets})
	}
	slices.SortStableFunc(lines, func(a, b Line) int { return a.Line - b.Line })
	for _, l := range lines {
		r.line(l)
	}
	if pr.err == nil && len(ad.Containers) > 0 {
		r.Pods++
		r.Adopted += len(ad.Containers)
	}
}

// adoptedMessage says how a container runs proxy-await: its flags, and
// the command of its image when inject wrote it.
func adoptedMessage(c adoptedContainer) string {
	msg := strings.Join(c.Flags, " ")
	if img := c.Image; img != nil {
		from := "the entrypoints file"
		if img.Digest != "" {
			from = shortDigest(img.Digest)
		}
		words := strings.Join(append(slices.Clone(img.Entrypoint), img.Args...), " ")
		msg += fmt.Sprintf("; its image's command, from %s: %s", from, strings.ReplaceAll(words, "$$", "$"))
		if img.Was != "" {
			msg += fmt.Sprintf(" (the image changed since the last inject read %s)", shortDigest(img.Was))
		}
	}
	return msg
}

// shortDigest is a digest as a line shows it: its algorithm and the first
// twelve digits, as docker shows an image's ID.
func shortDigest(d string) string {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return alg + ":" + hex[:12]
}

// podSettings says what the pod itself gets for its sidecars: annotations
// and flags of sidecar containers; "" for nothing.
func podSettings(ad plan) string {
	var parts []string
	for _, a := range ad.Annotations {
		if !strings.HasPrefix(a.Key, entrypointKey) {
			parts = append(parts, fmt.Sprintf("%s: %q", a.Key, a.Value))
		}
	}
	for _, s := range ad.Sidecars {
		parts = append(parts, strings.Join(s.Args, " ")+" in the args of container "+s.Name)
	}
	if len(parts) == 0 {
		return ""
	}
	return "for its sidecars: " + strings.Join(parts, "; ")
}

// line says l, of the file being written: its line is the input's.
func (r *Result) line(l Line) {
	if r.lineOf != nil && l.Line > 0 {
		l.Line = r.lineOf(l.Line)
	}
	r.Said[l.Event]++
	r.Failed = r.Failed || l.failure
	r.tell(l)
}

// lineStarts are the offsets at which data's lines start.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Main is proxy-awaitctl inject, from its command line to its exit code:
// it writes the manifests with proxy-await adopted to stdout, and on
// stderr, as their documents are done, a line for each container
// adopted (with its flags) or skipped (with the reason), each warning and
// each file refused (one JSON object each under --log-format json; under
// -q only what failed), logs a summary, and returns 1 when a container
// that needs proxy-await was left without it or a file was refused. An entrypoints file that cannot be
// read, and a --container that names none of the input's containers, are
// usage errors, returned for the caller to print, and nothing is written.
func Main(c *config.Inject, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) (int, error) {
	format := "text"
	if c.JSON {
		format = "json"
	}
	res, err := imageconfig.New(imageconfig.Options{Platform: c.Platform, File: c.Entrypoints, NoRegistry: c.NoRegistry})
	if err != nil {
		return exitcode.Usage, &config.UsageError{Err: hint.New(err, "fix the file, or leave --entrypoints out to read the images' registries"), Format: format}
	}
	enc := json.NewEncoder(stderr)
	enc.SetEscapeHTML(false)
	say := func(l Line) {
		switch {
		case !log.Enabled(context.Background(), l.level()):
		case c.JSON:
			_ = enc.Encode(struct {
				Event     string   `json:"event"`
				File      string   `json:"file"`
				Line      int      `json:"line,omitempty"`
				Kind      string   `json:"kind,omitempty"`
				Name      string   `json:"name,omitempty"`
				Container string   `json:"container,omitempty"`
				Flags     []string `json:"flags,omitempty"`
				Message   string   `json:"message"`
			}{l.Event, l.File, l.Line, l.Kind, l.Name, l.Container, l.Flags, l.Message})
		default:
			fmt.Fprintln(stderr, l)
		}
	}
	r := Paths(context.Background(), c.Paths, Options{Versions: c.Versions, Native: c.Native, Stdin: stdin, Images: res, Image: c.Image,
		Containers: c.Containers, Undo: c.Undo, Out: stdout, Say: say})
	if len(r.Unknown) > 0 {
		return exitcode.Usage, &config.UsageError{Err: unknownContainers(r), Format: format}
	}
	if r.WriteErr != nil {
		log.Error(fmt.Sprintf("cannot write the manifests: %v", r.WriteErr), "event", "inject_failed")
		return exitcode.Findings, nil
	}
	done := fmt.Sprintf("adopted proxy-await in %s of %s; wrote %s", count(r.Adopted, "container"), count(r.Pods, "pod template"), count(len(r.Written), "file"))
	if c.Undo {
		done = fmt.Sprintf("took back what inject changed in %s; wrote %s", count(r.Pods, "pod template"), count(len(r.Written), "file"))
	}
	log.Info(done,
		"event", "inject_done", "skipped", r.Said["skipped"], "warnings", r.Said["warning"], "refused", r.Said["refused"])
	if r.Failed {
		return exitcode.Findings, nil
	}
	return 0, nil
}

// unknownContainers is the error for --container names that no container
// of the input has, with the closest name for each as its hint.
func unknownContainers(r *Result) error {
	var seen []string
	for name := range r.nameSeen {
		seen = append(seen, name)
	}
	slices.Sort(seen)
	var names, near []string
	for _, name := range r.Unknown {
		names = append(names, name)
		if n := closest(name, seen); n != "" {
			near = append(near, "--container "+n)
		}
	}
	h := "name a container of the input's pod templates"
	if len(near) > 0 {
		h = "did you mean " + strings.Join(near, ", ") + "?"
	}
	return hint.New(fmt.Errorf("--container %s names no container of the input: nothing is written", strings.Join(names, ", ")), h)
}

// closest is the name of names nearest to name, "" when none is near.
func closest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editdistance.Of(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// count is n things, in English.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
