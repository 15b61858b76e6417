package imageconfig

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/internal/registrytest"
)

// fleet is the repository's fleet of upstream manifests (testdata/fleet,
// indexed in its README), and the entrypoints file that records each of
// their images' real ENTRYPOINT and CMD with its source.
const fleet = "../../testdata/fleet"

// fleetImages is every image a container or init container of the
// fleet's manifests runs, as written there.
func fleetImages(t *testing.T) []string {
	t.Helper()
	var images []string
	err := filepath.WalkDir(fleet, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" || d.Name() == "entrypoints.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var obj struct {
				Spec struct {
					Template struct {
						Spec struct {
							InitContainers []struct{ Image string } `yaml:"initContainers"`
							Containers     []struct{ Image string } `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			pod := obj.Spec.Template.Spec
			for _, c := range append(pod.InitContainers, pod.Containers...) {
				if !slices.Contains(images, c.Image) {
					images = append(images, c.Image)
				}
			}
		}
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(images), 40, "the fleet's images")
	return images
}

// For every image of the fleet, the resolver gives exactly what the
// entrypoints file records: from a registry that serves those values under
// the images' own names and paths, each fetched once, and from the file
// with no registry asked.
func TestFleetResolvesAsRecorded(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fleet, "entrypoints.yaml"))
	require.NoError(t, err)
	recorded, err := ParseEntrypoints(data)
	require.NoError(t, err)
	images := fleetImages(t)

	var full []string
	for _, img := range images {
		ref, err := name.ParseReference(img)
		require.NoError(t, err, img)
		full = append(full, ref.Name())
		assert.Contains(t, recorded, ref.Name(), "the entrypoints file has no entry for %s", img)
	}
	for k := range recorded {
		assert.Contains(t, full, k, "the entrypoints file records an image no manifest runs")
	}

	// Each image is a multi-platform index whose linux/amd64 image holds
	// the recorded values, and whose linux/arm64 image does not. A
	// reference pinned by digest names a manifest no test can make again:
	// it is asked for at the digest of what was pushed.
	c, tr := registrytest.World(t)
	asked := map[string]string{}   // the reference resolved → as written
	digests := map[string]string{} // as written → the amd64 image's digest
	for _, img := range images {
		ref, err := name.ParseReference(img)
		require.NoError(t, err)
		rec := recorded[ref.Name()]
		amd := registrytest.Image(t, "linux/amd64", rec.Entrypoint, rec.Cmd)
		arm := registrytest.Image(t, "linux/arm64", []string{"/not-this-platform"}, nil)
		at, pushTo := img, img
		if _, ok := ref.(name.Digest); ok {
			pushTo = ref.Context().Tag("fleet").String()
		}
		pushed := registrytest.Push(t, pushTo, registrytest.Index(t, arm, amd), tr) // arm64 first: no resolver gets amd64 by chance
		if _, ok := ref.(name.Digest); ok {
			at = ref.Context().Digest(pushed.String()).String()
		}
		asked[at] = img
		d, err := amd.Digest()
		require.NoError(t, err)
		digests[img] = d.String()
	}
	before := c.Total()

	r := resolver(t, Options{})
	r.transport = tr
	for range 2 { // a second pass is answered from the first
		for at, img := range asked {
			got, err := r.Resolve(t.Context(), at)
			require.NoError(t, err, img)
			rec := recorded[mustFull(t, img)]
			assert.Equal(t, rec.Entrypoint, got.Entrypoint, "%s: entrypoint", img)
			assert.Equal(t, rec.Cmd, got.Cmd, "%s: cmd", img)
			assert.Equal(t, digests[img], got.Digest, "%s: digest", img)
		}
	}
	assert.Equal(t, 3*len(asked), c.Total()-before, "each image once: its index, its linux/amd64 manifest, its configuration")

	offline := resolver(t, Options{File: filepath.Join(fleet, "entrypoints.yaml"), NoRegistry: true})
	for _, img := range images {
		got, err := offline.Resolve(t.Context(), img)
		require.NoError(t, err, img)
		assert.Equal(t, recorded[mustFull(t, img)], got, img)
	}
}

func mustFull(t *testing.T, img string) string {
	t.Helper()
	ref, err := name.ParseReference(img)
	require.NoError(t, err, img)
	return ref.Name()
}
