// Package inject is proxy-awaitctl inject: it reads manifests as check
// does and writes them to stdout with proxy-await adopted in every pod
// template, the way linkerd inject adds its proxy. What to change is its
// plan (plan.go), made from the model that check's rules judge (rules.Pod:
// the sidecars a pod shows, what its containers run); this package edits
// the text, at the nodes' positions, so that every other byte stays as it
// was (splice.go).
//
// Nothing of it runs unless --inject does.
package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/invocation"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/proxies"
)

// Result is what an injection made of its input: the text to write, each
// file's in its turn, and the lines that say what was skipped or refused.
type Result struct {
	Output   []byte
	Written  []Written // each file written, in its turn
	Lines    []Line
	Files    int // files written
	Pods     int // pod templates whose containers adopted proxy-await
	Adopted  int // containers that adopted it
	Unknown  []string
	Failed   bool // a container was skipped or an input refused
	nameSeen map[string]bool
}

// Written is a file's text as written.
type Written struct {
	Name string
	Data []byte
}

// Line is a container skipped or a file refused, as
// FILE[:LINE]: skipped|refused: [KIND/NAME container NAME: ]message.
type Line struct {
	Event     string // skipped or refused
	File      string
	Line      int
	Kind      string
	Name      string
	Container string
	Message   string
}

func (l Line) String() string {
	at := l.File
	if l.Line > 0 {
		at = fmt.Sprintf("%s:%d", l.File, l.Line)
	}
	if l.Kind == "" {
		return fmt.Sprintf("%s: %s: %s", at, l.Event, l.Message)
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
	// Images are what the images run where the caller knows it, or nil.
	Images     invocation.Images
	Image      string   // the proxy-await-install init container's
	Containers []string // the containers to adopt, by name; none: every one
}

// Paths injects proxy-await into the manifests at paths.
func Paths(paths []string, opt Options) *Result {
	r := &Result{nameSeen: map[string]bool{}}
	in := manifest.Read(paths, manifest.Options{Stdin: opt.Stdin, Command: "inject", Keep: true})
	pods := map[*manifest.Pod]*rules.Pod{}
	for _, f := range in.Files {
		for _, p := range f.Pods {
			in.Link(p)
			pods[p] = rules.Analyse(p, rules.Options{Versions: opt.Versions, Native: opt.Native, Images: opt.Images})
		}
	}
	for _, f := range in.Files {
		if out, ok := r.file(f, pods, opt); ok {
			r.write(out, f)
		}
	}
	for _, name := range opt.Containers {
		if !r.nameSeen[name] {
			r.Unknown = append(r.Unknown, name)
		}
	}
	return r
}

// write adds a file's text to the output, a document marker between two
// files of YAML.
func (r *Result) write(out []byte, f *manifest.File) {
	if len(r.Output) > 0 {
		if r.Output[len(r.Output)-1] != '\n' {
			r.Output = append(r.Output, '\n')
		}
		if t := bytes.TrimLeft(out, " \t\r\n"); len(t) == 0 || t[0] != '{' && t[0] != '[' {
			r.Output = append(r.Output, "---\n"...)
		}
	}
	r.Output = append(r.Output, out...)
	r.Written = append(r.Written, Written{f.Name, out})
	r.Files++
}

// file is f's text with proxy-await adopted in its pod templates; false
// when f is refused, which its lines say.
func (r *Result) file(f *manifest.File, pods map[*manifest.Pod]*rules.Pod, opt Options) ([]byte, bool) {
	refused := false
	for _, p := range f.Problems {
		if !p.NotObject {
			r.line(Line{Event: "refused", File: p.File, Line: p.Line, Message: p.Message + "; nothing of this file is written"})
			refused = true
		}
	}
	switch {
	case refused:
		return nil, false
	case f.NotObject > 0 && f.Chart:
		return nil, false // the chart's templates say to render it
	case f.NotObject > 0:
		r.line(Line{Event: "refused", File: f.Name, Line: f.NotObject,
			Message: "not a Kubernetes object (it has no kind), which inject writes out only beside the objects of a manifest: nothing of this file is written"})
		return nil, false
	}
	choose := func(name string) bool {
		if len(opt.Containers) == 0 {
			return true
		}
		r.nameSeen[name] = r.nameSeen[name] || slices.Contains(opt.Containers, name)
		return slices.Contains(opt.Containers, name)
	}
	starts := lineStarts(f.Data)
	var edits []edit
	for _, dc := range f.Documents() {
		d := newDoc(f.Data, starts, dc.Root, dc.Start)
		var adopted []manifest.Template
		for _, t := range dc.Templates {
			ad := planOf(pods[t.Pod], choose)
			for _, l := range ad.Skipped {
				r.line(l)
			}
			if len(ad.Containers) == 0 {
				continue
			}
			before, saved := len(d.edits), clone(t.Node)
			if err := d.adopt(t.Node, ad, opt.Image); err != nil {
				d.edits = d.edits[:before]
				*t.Node = *saved
				r.cannot(f, t, ad, err)
				continue
			}
			adopted = append(adopted, t)
			r.Pods++
			r.Adopted += len(ad.Containers)
		}
		if len(d.edits) == 0 {
			continue
		}
		if err := verify(d.apply(dc.Start, dc.End), dc.Root); err != nil {
			for _, t := range adopted {
				r.cannot(f, t, planOf(pods[t.Pod], choose), err)
				r.Pods--
			}
			continue
		}
		edits = append(edits, d.edits...)
	}
	d := &doc{data: f.Data, edits: edits}
	return d.apply(0, len(f.Data)), true
}

// cannot says that a pod template's containers were not adopted, because
// of err.
func (r *Result) cannot(f *manifest.File, t manifest.Template, ad plan, err error) {
	for _, c := range ad.Containers {
		r.Adopted--
		r.line(Line{Event: "skipped", File: f.Name, Line: t.Pod.Line, Kind: t.Pod.Kind, Name: t.Pod.Name, Container: c.Name,
			Message: fmt.Sprintf("its pod template is not changed: %v; adopt proxy-await in it by hand (docs/inject.md)", err)})
	}
	r.Adopted += len(ad.Containers)
}

func (r *Result) line(l Line) {
	r.Lines = append(r.Lines, l)
	r.Failed = true
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
// it writes the manifests with proxy-await adopted to stdout, each
// container skipped and each file refused as a line on stderr (one JSON
// object under --log-format json), logs a summary, and returns 1 when a
// container was skipped or a file refused. A --container that names none of the input's containers is a
// usage error, returned for the caller to print, and nothing is written.
func Main(c *config.Inject, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) (int, error) {
	r := Paths(c.Paths, Options{Versions: c.Versions, Native: c.Native, Stdin: stdin, Image: c.Image, Containers: c.Containers})
	enc := json.NewEncoder(stderr)
	enc.SetEscapeHTML(false)
	for _, l := range r.Lines {
		if c.JSON {
			_ = enc.Encode(struct {
				Event     string `json:"event"`
				File      string `json:"file"`
				Line      int    `json:"line,omitempty"`
				Kind      string `json:"kind,omitempty"`
				Name      string `json:"name,omitempty"`
				Container string `json:"container,omitempty"`
				Message   string `json:"message"`
			}{l.Event, l.File, l.Line, l.Kind, l.Name, l.Container, l.Message})
		} else {
			fmt.Fprintln(stderr, l)
		}
	}
	if len(r.Unknown) > 0 {
		format := "text"
		if c.JSON {
			format = "json"
		}
		return exitcode.Usage, &config.UsageError{Err: unknownContainers(r), Format: format}
	}
	if _, err := stdout.Write(r.Output); err != nil {
		log.Error(fmt.Sprintf("cannot write the manifests: %v", err), "event", "inject_failed")
		return exitcode.Findings, nil
	}
	log.Info(fmt.Sprintf("adopted proxy-await in %s of %s; wrote %s",
		count(r.Adopted, "container"), count(r.Pods, "pod template"), count(r.Files, "file")),
		"event", "inject_done", "skipped", skipped(r.Lines, "skipped"), "refused", skipped(r.Lines, "refused"))
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

func skipped(lines []Line, event string) int {
	n := 0
	for _, l := range lines {
		if l.Event == event {
			n++
		}
	}
	return n
}

// count is n things, in English.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
