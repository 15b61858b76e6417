package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostBinary is a copy of the test binary, a Go binary built for this
// machine, named as the image names a command, and the platform its build
// information gives. Each copy ends with its name, so that no two are alike.
func hostBinary(t *testing.T, name string) (string, platform) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	p, err := platformOf(self)
	require.NoError(t, err)
	exe, err := os.ReadFile(self)
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(bin, append(exe, name...), 0o755))
	return bin, p
}

// readBlob reads the blob d names and checks it has d's size and digest.
func readBlob(t *testing.T, dir string, d descriptor) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d.Digest, "sha256:")))
	require.NoError(t, err)
	require.Equal(t, d.Size, int64(len(data)), "size of %s", d.Digest)
	require.Equal(t, d.Digest, digest(data), "digest of the blob")
	return data
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

func TestLayout(t *testing.T) {
	host, hostPlatform := hostBinary(t, "proxy-await")
	hostCtl, _ := hostBinary(t, "proxy-awaitctl")
	// The other platform's binaries are not Go binaries (building one would
	// need a compiler): their platform is given, the host's is read from them.
	otherDir := t.TempDir()
	other := filepath.Join(otherDir, "proxy-await")
	otherCtl := filepath.Join(otherDir, "proxy-awaitctl")
	require.NoError(t, os.WriteFile(other, []byte("the other platform's proxy-await\n"), 0o755))
	require.NoError(t, os.WriteFile(otherCtl, []byte("the other platform's proxy-awaitctl\n"), 0o755))
	otherPlatform := platform{OS: "linux", Architecture: "arm", Variant: "v7"}
	if hostPlatform == otherPlatform {
		otherPlatform = platform{OS: "linux", Architecture: "amd64"}
	}
	readPlatform := func(bin string) (platform, error) {
		if filepath.Dir(bin) == otherDir {
			return otherPlatform, nil
		}
		return platformOf(bin)
	}
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, []byte("licence text\n"), 0o644))
	created := time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{"org.opencontainers.image.version": "1.2.3"}
	opts := func(out string, bins ...string) *options {
		return &options{out: out, name: "ghcr.io/o/p:1.2.3", license: license, entrypoint: "proxy-await",
			created: created, labels: labels, binaries: bins}
	}

	out := filepath.Join(t.TempDir(), "image")
	lines, err := build(opts(out, otherCtl, other, host, hostCtl), readPlatform)
	require.NoError(t, err)

	layoutFile, err := os.ReadFile(filepath.Join(out, "oci-layout"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(layoutFile))
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	require.NoError(t, err)
	top := decode[index](t, data)
	require.Len(t, top.Manifests, 1)
	named := top.Manifests[0]
	assert.Equal(t, mediaIndex, named.MediaType)
	assert.Equal(t, map[string]string{annotationRefName: "1.2.3", annotationContainerName: "ghcr.io/o/p:1.2.3"}, named.Annotations)

	idx := decode[index](t, readBlob(t, out, named))
	assert.Equal(t, labels, idx.Annotations)
	require.Len(t, idx.Manifests, 2)
	type image struct {
		platform    platform
		binary, ctl string
	}
	// The index lists the platforms in the order of their names.
	wants := []image{{hostPlatform, host, hostCtl}, {otherPlatform, other, otherCtl}}
	slices.SortFunc(wants, func(a, b image) int { return strings.Compare(a.platform.String(), b.platform.String()) })
	assert.Equal(t, []string{named.Digest + " ghcr.io/o/p:1.2.3",
		idx.Manifests[0].Digest + " " + wants[0].platform.String(), idx.Manifests[1].Digest + " " + wants[1].platform.String()}, lines)

	for i, want := range wants {
		d := idx.Manifests[i]
		assert.Equal(t, mediaManifest, d.MediaType)
		require.Equal(t, want.platform, *d.Platform)
		m := decode[manifest](t, readBlob(t, out, d))
		assert.Equal(t, labels, m.Annotations)
		require.Len(t, m.Layers, 1)
		assert.Equal(t, mediaLayer, m.Layers[0].MediaType)
		assert.Equal(t, mediaConfig, m.Config.MediaType)

		cfg := decode[imageConfig](t, readBlob(t, out, m.Config))
		assert.Equal(t, want.platform, platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant})
		assert.Equal(t, []string{"/proxy-await"}, cfg.Config.Entrypoint)
		assert.Equal(t, labels, cfg.Config.Labels)
		assert.Equal(t, "2025-09-01T12:00:00Z", cfg.Created)
		assert.Equal(t, []history{{Created: "2025-09-01T12:00:00Z", CreatedBy: "ociimage: /proxy-await, /proxy-awaitctl and /LICENSE"}}, cfg.History)

		zr, err := gzip.NewReader(bytes.NewReader(readBlob(t, out, m.Layers[0])))
		require.NoError(t, err)
		layer, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, []string{digest(layer)}, cfg.RootFS.DiffIDs, "diff_id is the uncompressed layer's digest")

		read := func(name string) []byte {
			data, err := os.ReadFile(name)
			require.NoError(t, err)
			return data
		}
		tr := tar.NewReader(bytes.NewReader(layer))
		for _, f := range []file{
			{"proxy-await", 0o755, read(want.binary)},
			{"proxy-awaitctl", 0o755, read(want.ctl)},
			{"LICENSE", 0o644, []byte("licence text\n")},
		} {
			hdr, err := tr.Next()
			require.NoError(t, err)
			assert.Equal(t, f.name, hdr.Name)
			assert.Equal(t, f.mode, hdr.Mode, "mode of %s", f.name)
			assert.Equal(t, created, hdr.ModTime.UTC(), "time of %s", f.name)
			got, err := io.ReadAll(tr)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(f.data, got), "%s is the file given for %s", f.name, want.platform)
		}
		_, err = tr.Next()
		assert.Equal(t, io.EOF, err, "the layer holds the binaries and the licence only")
	}

	// The same inputs in another order give the same image, byte for byte.
	again := filepath.Join(t.TempDir(), "image")
	lines2, err := build(opts(again, host, other, hostCtl, otherCtl), readPlatform)
	require.NoError(t, err)
	assert.Equal(t, lines, lines2)
}

// The entrypoint sorts first in the layer whatever its name.
func TestEntrypointFirst(t *testing.T) {
	a, _ := hostBinary(t, "a-tool")
	z, _ := hostBinary(t, "z-entrypoint")
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, nil, 0o644))
	out := filepath.Join(t.TempDir(), "image")
	_, err := build(&options{out: out, name: "r:t", license: license, entrypoint: "z-entrypoint", binaries: []string{a, z}}, platformOf)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	require.NoError(t, err)
	idx := decode[index](t, readBlob(t, out, decode[index](t, data).Manifests[0]))
	m := decode[manifest](t, readBlob(t, out, idx.Manifests[0]))
	cfg := decode[imageConfig](t, readBlob(t, out, m.Config))
	assert.Equal(t, []string{"/z-entrypoint"}, cfg.Config.Entrypoint)
	zr, err := gzip.NewReader(bytes.NewReader(readBlob(t, out, m.Layers[0])))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for hdr, err := tr.Next(); err == nil; hdr, err = tr.Next() {
		names = append(names, hdr.Name)
	}
	assert.Equal(t, []string{"z-entrypoint", "a-tool", "LICENSE"}, names)
}

// What cannot make one image a platform, each with the same commands, fails
// before anything is written, and says which binaries.
func TestBinariesThatDoNotFit(t *testing.T) {
	host, hostPlatform := hostBinary(t, "proxy-await")
	hostCtl, _ := hostBinary(t, "proxy-awaitctl")
	again, _ := hostBinary(t, "proxy-await")
	otherDir := t.TempDir()
	other := filepath.Join(otherDir, "proxy-await")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o755))
	otherPlatform := platform{OS: "linux", Architecture: "s390x"}
	readPlatform := func(bin string) (platform, error) {
		if filepath.Dir(bin) == otherDir {
			return otherPlatform, nil
		}
		return platformOf(bin)
	}
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, nil, 0o644))
	for _, tc := range []struct {
		entrypoint string
		binaries   []string
		want       string
	}{
		{"proxy-await", []string{host, again}, host + " and " + again + " are both proxy-await for " + hostPlatform.String()},
		{"proxy-await", []string{host, hostCtl, other}, "has proxy-await, proxy-awaitctl, but linux/s390x has proxy-await: every image holds the same commands"},
		{"proxy-await", []string{hostCtl}, "-entrypoint proxy-await: no binary of that name for " + hostPlatform.String() + " (proxy-awaitctl)"},
	} {
		out := filepath.Join(t.TempDir(), "image")
		_, err := build(&options{out: out, name: "r:t", license: license, entrypoint: tc.entrypoint, binaries: tc.binaries}, readPlatform)
		require.Error(t, err, "%q", tc.binaries)
		assert.Contains(t, err.Error(), tc.want)
		_, err = os.Stat(filepath.Join(out, "index.json"))
		assert.ErrorIs(t, err, os.ErrNotExist, "nothing written for %q", tc.binaries)
	}
}

func TestPlatformOf(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	p, err := platformOf(self)
	require.NoError(t, err)
	assert.Equal(t, runtime.GOOS, p.OS)
	assert.Equal(t, runtime.GOARCH, p.Architecture)
	if runtime.GOARCH != "arm" {
		assert.Empty(t, p.Variant)
	}
}

// A file that is no Go binary fails the image, and the error names it and
// says why.
func TestNotAGoBinary(t *testing.T) {
	text := filepath.Join(t.TempDir(), "proxy-await")
	require.NoError(t, os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755))
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, nil, 0o644))
	for bin, want := range map[string]string{
		text:      "unrecognized file format",
		"/bin/sh": "not a Go executable",
	} {
		_, err := build(&options{out: filepath.Join(t.TempDir(), "image"), name: "r:t", license: license, entrypoint: "proxy-await", binaries: []string{bin}}, platformOf)
		require.Error(t, err, bin)
		assert.Equal(t, bin+": could not read Go build info from "+bin+": "+want, err.Error())
	}
}

func TestBuildPlatform(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     platform
	}{
		{settings("GOOS", "linux", "GOARCH", "amd64", "GOAMD64", "v1"), platform{OS: "linux", Architecture: "amd64"}},
		{settings("-buildmode", "exe", "GOARCH", "arm64", "GOOS", "linux"), platform{OS: "linux", Architecture: "arm64"}},
		{settings("GOOS", "linux", "GOARCH", "arm", "GOARM", "7"), platform{OS: "linux", Architecture: "arm", Variant: "v7"}},
		{settings("GOOS", "linux", "GOARCH", "arm", "GOARM", "6"), platform{OS: "linux", Architecture: "arm", Variant: "v6"}},
		{settings("GOOS", "linux", "GOARCH", "arm", "GOARM", "5,softfloat"), platform{OS: "linux", Architecture: "arm", Variant: "v5"}},
		// Go records no GOARM when it is the default, 7.
		{settings("GOOS", "linux", "GOARCH", "arm"), platform{OS: "linux", Architecture: "arm", Variant: "v7"}},
		// GOARM says nothing of another architecture.
		{settings("GOOS", "linux", "GOARCH", "amd64", "GOARM", "6"), platform{OS: "linux", Architecture: "amd64"}},
		{settings("GOOS", "darwin", "GOARCH", "arm64"), platform{OS: "darwin", Architecture: "arm64"}},
	} {
		got, err := buildPlatform(tc.settings)
		require.NoError(t, err, "%v", tc.settings)
		assert.Equal(t, tc.want, got, "%v", tc.settings)
	}

	for _, s := range [][]debug.BuildSetting{
		nil,
		settings("GOOS", "linux"),
		settings("GOARCH", "amd64"),
		settings("GOOS", "", "GOARCH", "amd64"),
		settings("-buildmode", "exe", "CGO_ENABLED", "0"),
	} {
		_, err := buildPlatform(s)
		require.Error(t, err, "%v", s)
		assert.Equal(t, "no GOOS/GOARCH in its build information", err.Error())
	}
}

func TestParseArgs(t *testing.T) {
	base := []string{"-out", "o", "-license", "L", "-entrypoint", "p", "-name", "localhost:5000/p:v1", "-created", "2025-09-01T12:00:00Z"}
	o, err := parseArgs(append(base, "-label", "a=b=c", "bin"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "b=c"}, o.labels)
	assert.Equal(t, []string{"bin"}, o.binaries)
	assert.Equal(t, "p", o.entrypoint)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "o", "-license", "L", "-entrypoint", "p", "-name", "localhost:5000/p", "-created", "2025-09-01T12:00:00Z", "bin"}, `-name "localhost:5000/p": want REPOSITORY:TAG`},
		{[]string{"-out", "o", "-license", "L", "-entrypoint", "p", "-name", "p:v1", "-created", "yesterday", "bin"}, `-created "yesterday": want an RFC 3339 time`},
		{[]string{"-out", "o", "-license", "L", "-name", "p:v1", "-created", "2025-09-01T12:00:00Z", "bin"}, "-entrypoint is required"},
		{append(base, "-label", "novalue", "bin"), `want KEY=VALUE, got "novalue"`},
		{base, "no binaries given"},
	} {
		_, err := parseArgs(tc.args)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}
