package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crossBuild builds a small program for linux/GOARCH (GOARM=7), named as
// the image names its entrypoint.
func crossBuild(t *testing.T, goarch string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	bin := filepath.Join(dir, goarch, "proxy-await")
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "GOARM=7", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
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
	amd, arm := crossBuild(t, "amd64"), crossBuild(t, "arm")
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, []byte("licence text\n"), 0o644))
	created := time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{"org.opencontainers.image.version": "1.2.3"}
	opts := func(out string, bins ...string) *options {
		return &options{out: out, name: "ghcr.io/o/p:1.2.3", license: license, created: created, labels: labels, binaries: bins}
	}

	out := filepath.Join(t.TempDir(), "image")
	lines, err := build(opts(out, arm, amd))
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
	assert.Equal(t, []string{named.Digest + " ghcr.io/o/p:1.2.3",
		idx.Manifests[0].Digest + " linux/amd64", idx.Manifests[1].Digest + " linux/arm/v7"}, lines)

	for i, want := range []struct {
		platform platform
		bin      string
	}{
		{platform{OS: "linux", Architecture: "amd64"}, amd},
		{platform{OS: "linux", Architecture: "arm", Variant: "v7"}, arm},
	} {
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

		zr, err := gzip.NewReader(bytes.NewReader(readBlob(t, out, m.Layers[0])))
		require.NoError(t, err)
		layer, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, []string{digest(layer)}, cfg.RootFS.DiffIDs, "diff_id is the uncompressed layer's digest")

		exe, err := os.ReadFile(want.bin)
		require.NoError(t, err)
		tr := tar.NewReader(bytes.NewReader(layer))
		for _, f := range []file{{"proxy-await", 0o755, exe}, {"LICENSE", 0o644, []byte("licence text\n")}} {
			hdr, err := tr.Next()
			require.NoError(t, err)
			assert.Equal(t, f.name, hdr.Name)
			assert.Equal(t, f.mode, hdr.Mode, "mode of %s", f.name)
			assert.Equal(t, created, hdr.ModTime.UTC(), "time of %s", f.name)
			got, err := io.ReadAll(tr)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(f.data, got), "%s is the file given", f.name)
		}
		_, err = tr.Next()
		assert.Equal(t, io.EOF, err, "the layer holds the binary and the licence only")
	}

	// The same inputs in another order give the same image, byte for byte.
	again := filepath.Join(t.TempDir(), "image")
	lines2, err := build(opts(again, amd, arm))
	require.NoError(t, err)
	assert.Equal(t, lines, lines2)
}

func TestTwoBinariesOnePlatform(t *testing.T) {
	amd := crossBuild(t, "amd64")
	license := filepath.Join(t.TempDir(), "LICENSE")
	require.NoError(t, os.WriteFile(license, nil, 0o644))
	_, err := build(&options{out: filepath.Join(t.TempDir(), "image"), name: "r:t", license: license, binaries: []string{amd, amd}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "are both for linux/amd64")
}

func TestParseArgs(t *testing.T) {
	base := []string{"-out", "o", "-license", "L", "-name", "localhost:5000/p:v1", "-created", "2025-09-01T12:00:00Z"}
	o, err := parseArgs(append(base, "-label", "a=b=c", "bin"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "b=c"}, o.labels)
	assert.Equal(t, []string{"bin"}, o.binaries)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "o", "-license", "L", "-name", "localhost:5000/p", "-created", "2025-09-01T12:00:00Z", "bin"}, `-name "localhost:5000/p": want REPOSITORY:TAG`},
		{[]string{"-out", "o", "-license", "L", "-name", "p:v1", "-created", "yesterday", "bin"}, `-created "yesterday": want an RFC 3339 time`},
		{append(base, "-label", "novalue", "bin"), `want KEY=VALUE, got "novalue"`},
		{base, "no binaries given"},
	} {
		_, err := parseArgs(tc.args)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}
