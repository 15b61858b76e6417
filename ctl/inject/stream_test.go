package inject

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingWriter keeps the sizes of the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes []int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.Buffer.Write(p)
}

// A file's text goes out as its documents are done, and a large document
// (a List of a whole namespace) once it is verified, in the order of the
// input, in writes of a document or so: none held to the end.
func TestWritesAsItGoes(t *testing.T) {
	dir := t.TempDir()
	// An alias in its first item has the List read whole (manifest's
	// lists.go): one document, pending until its file is read.
	list := largeList(1600)
	list = bytes.Replace(list, []byte("namespace: shop}"), []byte("namespace: shop, labels: &web {app: web}}"), 1)
	list = bytes.Replace(list, []byte("selector: {matchLabels: {app: web}}"), []byte("selector: {matchLabels: *web}"), 1)
	require.Greater(t, len(list), smallDocument, "the List is verified after its file's parse")
	small := manyDocuments(3)
	first := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(first, append(append(append([]byte{}, small...), "---\n"...), append(list, small...)...), 0o644))
	second := filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(second, small, 0o644))
	var w countingWriter
	r := Paths(t.Context(), []string{first, second}, Options{Image: "registry.example.com/proxy-await:1", Out: &w})
	require.NoError(t, r.WriteErr)
	require.Equal(t, 1600+9, r.Adopted)

	// The objects, in their order: each document's text in its place.
	names := regexp.MustCompile(`(?m)^ *(?:- )?(?:kind: (\w+)|metadata: \{name: ([^,}]+))`)
	objects := func(text []byte) (out []string) {
		for _, m := range names.FindAllSubmatch(text, -1) {
			out = append(out, string(m[1])+string(m[2]))
		}
		return out
	}
	input, err := os.ReadFile(first)
	require.NoError(t, err)
	want := append(objects(input), objects(small)...)
	require.Len(t, want, 12+1+2*1600+12+12, "kinds and names: 6 objects, a List of 1600, 6, 6")
	assert.Equal(t, want, objects(w.Bytes()))
	require.Len(t, r.Written, 2)
	assert.Equal(t, objects(small), objects(w.Bytes()[r.Written[1].Start:r.Written[1].End]), "where the second file is")
	for _, n := range w.writes {
		assert.Less(t, n, 4*len(list), "a write of more than the List's text")
	}
	assert.Greater(t, len(w.writes), 9, "written in one go")
}

// Once the writer fails, nothing more is offered to it, and the error is
// the result's.
func TestStopsWritingOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, os.WriteFile(path, manyDocuments(5), 0o644))
	w := &failAfter{n: 2}
	r := Paths(t.Context(), []string{path, path}, Options{Image: "registry.example.com/proxy-await:1", Out: w})
	require.ErrorIs(t, r.WriteErr, io.ErrShortWrite)
	assert.Equal(t, 3, w.calls, "writes after the failed one")
}

type failAfter struct{ n, calls int }

func (w *failAfter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.n {
		return 0, io.ErrShortWrite
	}
	return len(p), nil
}
