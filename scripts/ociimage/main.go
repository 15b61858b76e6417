// Command ociimage writes the release image as an OCI image layout: one
// FROM-scratch image a platform, each holding that platform's static binaries
// at /NAME, one of them its entrypoint, and the licence at /LICENSE, under
// one multi-platform index. It needs no container daemon and no registry:
// the release pushes the layout with a registry client, and the release
// check imports it into containerd.
//
//	ociimage -out DIR -name REF -created RFC3339 -license FILE -entrypoint NAME [-label K=V]... BINARY...
//
// Each binary's platform is read from the Go build information inside it, so
// the caller cannot mislabel one; every platform must have the same names,
// so that no image lacks a command the others have. The output depends only
// on the inputs: file times and the creation time come from -created, so the
// same commit gives the same digests.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	// The index's name in the layout: the tag alone, per the OCI spec, and
	// the full reference, which containerd's importer reads.
	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerName = "io.containerd.image.name"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

func (p platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

type index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type imageConfig struct {
	Created      string `json:"created"`
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
	Config       struct {
		Entrypoint []string          `json:"Entrypoint"`
		Labels     map[string]string `json:"Labels,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []history `json:"history"`
}

type history struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// options is what the command line says.
type options struct {
	out, name, license string
	entrypoint         string // the name of the binary the images run
	created            time.Time
	labels             map[string]string
	binaries           []string
}

func main() {
	opts, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(2)
	}
	lines, err := build(opts, platformOf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}

func parseArgs(args []string) (*options, error) {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &options{labels: map[string]string{}}
	var created string
	fs.StringVar(&o.out, "out", "", "the OCI layout directory to write (replaced)")
	fs.StringVar(&o.name, "name", "", "the image reference the index is named after, REPOSITORY:TAG")
	fs.StringVar(&o.license, "license", "", "the licence file, copied to /LICENSE")
	fs.StringVar(&o.entrypoint, "entrypoint", "", "the name of the binary that is every image's entrypoint, /NAME")
	fs.StringVar(&created, "created", "", "the creation time (RFC 3339), also every file's time")
	fs.Func("label", "a label KEY=VALUE of every image and annotation of the index (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", s)
		}
		o.labels[k] = v
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.binaries = fs.Args()
	switch {
	case o.out == "":
		return nil, errors.New("-out is required")
	case o.license == "":
		return nil, errors.New("-license is required")
	case o.entrypoint == "":
		return nil, errors.New("-entrypoint is required")
	case len(o.binaries) == 0:
		return nil, errors.New("no binaries given")
	}
	repo, tag, ok := cutTag(o.name)
	if !ok || repo == "" || tag == "" {
		return nil, fmt.Errorf("-name %q: want REPOSITORY:TAG", o.name)
	}
	t, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return nil, fmt.Errorf("-created %q: want an RFC 3339 time", created)
	}
	o.created = t.UTC()
	return o, nil
}

// cutTag splits REPOSITORY:TAG at the last colon after the last slash, so a
// registry's port is not taken for a tag.
func cutTag(ref string) (repo, tag string, ok bool) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "", false
	}
	return ref[:i], ref[i+1:], true
}

// layout writes content-addressed blobs under dir.
type layout struct{ dir string }

func (l layout) blob(mediaType string, data []byte) (descriptor, error) {
	d := descriptor{MediaType: mediaType, Digest: digest(data), Size: int64(len(data))}
	path := filepath.Join(l.dir, "blobs", "sha256", strings.TrimPrefix(d.Digest, "sha256:"))
	return d, os.WriteFile(path, data, 0o644)
}

func (l layout) json(mediaType string, v any) (descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return descriptor{}, err
	}
	return l.blob(mediaType, data)
}

func digest(data []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

// build writes the layout and returns a line for the index and each image:
// digest and what it is. readPlatform says which platform a binary is for.
func build(o *options, readPlatform func(bin string) (platform, error)) ([]string, error) {
	license, err := os.ReadFile(o.license)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.out, "blobs", "sha256"), 0o755); err != nil {
		return nil, err
	}
	// Every binary's platform first, so that a missing or doubled
	// binary fails before any work.
	byPlatform := map[platform][]string{}
	for _, bin := range o.binaries {
		p, err := readPlatform(bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bin, err)
		}
		for _, other := range byPlatform[p] {
			if filepath.Base(other) == filepath.Base(bin) {
				return nil, fmt.Errorf("%s and %s are both %s for %s", other, bin, filepath.Base(bin), p)
			}
		}
		byPlatform[p] = append(byPlatform[p], bin)
	}
	platforms := slices.SortedFunc(maps.Keys(byPlatform), func(a, b platform) int { return strings.Compare(a.String(), b.String()) })
	names := baseNames(byPlatform[platforms[0]])
	if !slices.Contains(names, o.entrypoint) {
		return nil, fmt.Errorf("-entrypoint %s: no binary of that name for %s (%s)", o.entrypoint, platforms[0], strings.Join(names, ", "))
	}
	for _, p := range platforms[1:] {
		if got := baseNames(byPlatform[p]); !slices.Equal(got, names) {
			return nil, fmt.Errorf("%s has %s, but %s has %s: every image holds the same commands",
				platforms[0], strings.Join(names, ", "), p, strings.Join(got, ", "))
		}
	}
	l := layout{o.out}
	var images []descriptor
	for _, p := range platforms {
		d, err := l.image(o, byPlatform[p], p, license)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		images = append(images, d)
	}
	// The index lists platforms in one order (platforms is sorted) whatever
	// the order of the arguments, so its digest does not depend on them.
	idx, err := l.json(mediaIndex, index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: images, Annotations: o.labels})
	if err != nil {
		return nil, err
	}
	_, tag, _ := cutTag(o.name)
	idx.Annotations = map[string]string{annotationRefName: tag, annotationContainerName: o.name}
	top, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{idx}})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.out, "index.json"), top, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.out, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		return nil, err
	}
	lines := []string{idx.Digest + " " + o.name}
	for _, d := range images {
		lines = append(lines, d.Digest+" "+d.Platform.String())
	}
	return lines, nil
}

// baseNames is the sorted names of binaries.
func baseNames(binaries []string) []string {
	names := make([]string, len(binaries))
	for i, bin := range binaries {
		names[i] = filepath.Base(bin)
	}
	slices.Sort(names)
	return names
}

// image writes the layer, config and manifest of one platform's image and
// returns the manifest's descriptor, with its platform. The layer holds the
// entrypoint first, then the platform's other binaries by name, then the
// licence.
func (l layout) image(o *options, binaries []string, p platform, license []byte) (descriptor, error) {
	binaries = slices.Clone(binaries)
	slices.SortFunc(binaries, func(a, b string) int {
		an, bn := filepath.Base(a), filepath.Base(b)
		if (an == o.entrypoint) != (bn == o.entrypoint) {
			if an == o.entrypoint {
				return -1
			}
			return 1
		}
		return strings.Compare(an, bn)
	})
	var files []file
	var paths []string
	for _, bin := range binaries {
		exe, err := os.ReadFile(bin)
		if err != nil {
			return descriptor{}, err
		}
		files = append(files, file{filepath.Base(bin), 0o755, exe})
		paths = append(paths, "/"+filepath.Base(bin))
	}
	files = append(files, file{"LICENSE", 0o644, license})
	tarball, err := tarFiles(o.created, files)
	if err != nil {
		return descriptor{}, err
	}
	gz, err := gzipped(tarball)
	if err != nil {
		return descriptor{}, err
	}
	layer, err := l.blob(mediaLayer, gz)
	if err != nil {
		return descriptor{}, err
	}

	created := o.created.Format(time.RFC3339)
	cfg := imageConfig{Created: created, Architecture: p.Architecture, OS: p.OS, Variant: p.Variant}
	cfg.Config.Entrypoint = []string{"/" + o.entrypoint}
	cfg.Config.Labels = o.labels
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{digest(tarball)}
	cfg.History = []history{{Created: created, CreatedBy: "ociimage: " + strings.Join(paths, ", ") + " and /LICENSE"}}
	config, err := l.json(mediaConfig, cfg)
	if err != nil {
		return descriptor{}, err
	}

	m, err := l.json(mediaManifest, manifest{
		SchemaVersion: 2, MediaType: mediaManifest,
		Config: config, Layers: []descriptor{layer}, Annotations: o.labels,
	})
	if err != nil {
		return descriptor{}, err
	}
	m.Platform = &p
	return m, nil
}

// platformOf reads the target a Go binary was built for from the build
// information the Go linker puts in it.
func platformOf(bin string) (platform, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return platform{}, err
	}
	return buildPlatform(info.Settings)
}

// buildPlatform is the target that a Go build's settings name.
func buildPlatform(settings []debug.BuildSetting) (platform, error) {
	s := map[string]string{}
	for _, kv := range settings {
		s[kv.Key] = kv.Value
	}
	p := platform{OS: s["GOOS"], Architecture: s["GOARCH"]}
	if p.OS == "" || p.Architecture == "" {
		return platform{}, errors.New("no GOOS/GOARCH in its build information")
	}
	if p.Architecture == "arm" {
		// GOARM is 5, 6 or 7, maybe with ",softfloat"; the default is 7
		// when it is not recorded.
		arm, _, _ := strings.Cut(s["GOARM"], ",")
		if arm == "" {
			arm = "7"
		}
		p.Variant = "v" + arm
	}
	return p, nil
}

type file struct {
	name string
	mode int64
	data []byte
}

// tarFiles is an uncompressed layer of regular files owned by root, all with
// the time t.
func tarFiles(t time.Time, files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)),
			ModTime: t,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipped compresses data with an empty gzip header (no name, no time), so
// the same data always gives the same bytes.
func gzipped(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
