package inject

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/exitcode"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A stdout that cannot be written is one error line and exit 1; the
// summary that says what was written is not logged.
func TestMainCannotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: x, command: [/a]}]\n"), 0o644))
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	code, err := Main(&config.Inject{Paths: []string{path}, Image: "registry.example.com/proxy-await:1.2.3"}, nil, failingWriter{}, &bytes.Buffer{}, log)
	require.NoError(t, err)
	assert.Equal(t, exitcode.Findings, code)
	assert.Contains(t, logged.String(), `msg="cannot write the manifests: no space left on device" event=inject_failed`)
	assert.NotContains(t, logged.String(), "inject_done")
}
