package check

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory is read for its manifest files: a FIFO or a device that
// happens to be called *.yaml is named as no manifest, never opened, which
// would wait for a writer for ever. A link to a manifest is read as the
// manifest.
func TestDirectoryReadsOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "a.yaml"), 0o644))
	pod := `kind: Pod
metadata: {name: shell}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [sh, -c, "proxy-await --proxy none -- /app"]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(pod), 0o644))
	require.NoError(t, os.Symlink("b.yaml", filepath.Join(dir, "c.yaml")))

	done := make(chan []string, 1)
	go func() { done <- lines(t, "", dir) }()
	select {
	case got := <-done:
		finding := ":7: error: shell-form: Pod/shell container app: proxy-await runs under sh -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell"
		assert.Equal(t, []string{
			filepath.Join(dir, "a.yaml") + ": error: input: not a regular file",
			filepath.Join(dir, "b.yaml") + finding,
			filepath.Join(dir, "c.yaml") + finding,
		}, got)
	case <-time.After(20 * time.Second):
		t.Fatal("--check still reading the directory after 20s")
	}
}
