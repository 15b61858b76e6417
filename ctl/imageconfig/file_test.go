package imageconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes text to a file named base in a temporary directory and
// gives its path.
func writeFile(t *testing.T, base, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), base)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// An entrypoints file is YAML or JSON; its keys are known in full.
func TestParseEntrypoints(t *testing.T) {
	want := Entrypoints{
		"index.docker.io/library/nginx:1.27": {Image: "index.docker.io/library/nginx:1.27",
			Entrypoint: []string{"/docker-entrypoint.sh"}, Cmd: []string{"nginx", "-g", "daemon off;"}},
		"gcr.io/google-samples/microservices-demo/frontend:v0.10.3": {Image: "gcr.io/google-samples/microservices-demo/frontend:v0.10.3",
			Entrypoint: []string{"/src/server"}},
	}
	for name, text := range map[string]string{
		"yaml": `# comments are kept out
nginx:1.27:
  entrypoint: [/docker-entrypoint.sh]
  cmd:
  - nginx
  - -g
  - daemon off;
docker.io/library/nginx:1.27: {entrypoint: [/docker-entrypoint.sh], cmd: [nginx, -g, "daemon off;"]}
gcr.io/google-samples/microservices-demo/frontend:v0.10.3:
  entrypoint: [/src/server]
  cmd: null
`,
		"json": `{"nginx:1.27": {"entrypoint": ["/docker-entrypoint.sh"], "cmd": ["nginx", "-g", "daemon off;"]},
 "gcr.io/google-samples/microservices-demo/frontend:v0.10.3": {"entrypoint": ["/src/server"]}}`,
	} {
		got, err := ParseEntrypoints([]byte(text))
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
	empty, err := ParseEntrypoints(nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
}

// A mistake in the file stops the run with its line, rather than reading
// as an image that runs nothing.
func TestParseEntrypointsRefuses(t *testing.T) {
	for _, tc := range []struct{ text, err string }{
		{"- nginx:1.27\n", `line 1: want a mapping of image reference to its "entrypoint" and "cmd" lists, such as nginx:1.27: {entrypoint: [/docker-entrypoint.sh], cmd: [nginx, -g, daemon off;]}`},
		{"nginx:1.27:\n  entryPoint: [/x]\n", `line 2: nginx:1.27: unknown key "entryPoint": an entry has only "entrypoint" and "cmd"`},
		{"nginx:1.27:\n  entrypoint: /docker-entrypoint.sh\n", `line 2: nginx:1.27: entrypoint: want a list of words, as the image's configuration has it (exec form)`},
		{"Not An Image:\n  cmd: [x]\n", `line 1: "Not An Image" is not an image reference: `},
		{"nginx:1.27: {cmd: [a]}\ndocker.io/library/nginx:1.27: {cmd: [b]}\n", `line 2: docker.io/library/nginx:1.27 is index.docker.io/library/nginx:1.27, whose entry on line 1 says otherwise: keep one`},
		{"a:1: {cmd: [a]}\n---\nb:1: {cmd: [b]}\n", `more than one document: keep every image in one mapping`},
	} {
		_, err := ParseEntrypoints([]byte(tc.text))
		require.Error(t, err, tc.text)
		assert.Contains(t, err.Error(), tc.err, tc.text)
	}
}

func TestNewReadsTheEntrypointsFile(t *testing.T) {
	_, err := New(Options{File: filepath.Join(t.TempDir(), "missing.yaml")})
	assert.ErrorContains(t, err, "--entrypoints: open ")
	bad := writeFile(t, "bad.yaml", "nginx: [x]\n")
	_, err = New(Options{File: bad})
	assert.ErrorContains(t, err, "--entrypoints "+bad+": line 1: nginx: want a mapping")
}
