package process

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nobody is the uid and gid the tests run proxy-await as where another user
// must, as an application container that runs as non-root would.
const nobody = "65534"

// openDir is a new directory that every user can read and search, as an
// emptyDir is, under a parent they can search too.
func openDir(t *testing.T) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "proxy-await-install")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	dir := filepath.Join(parent, "pa")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chmod(parent, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// asNobody runs a command as another user, without root's privileges.
func asNobody(name string, args ...string) *exec.Cmd {
	return exec.Command("setpriv", append([]string{"--reuid=" + nobody, "--regid=" + nobody, "--clear-groups", "--", name}, args...)...)
}

// --install copies the running binary, byte for byte, to DIR/proxy-await,
// mode 0755 whatever the umask, prints the path and exits 0; another user
// can then run the copy; a second install replaces it and leaves no
// temporary file behind.
func (Tests) TestInstall(t *testing.T) {
	dir := openDir(t)
	want := filepath.Join(dir, "proxy-await")
	for range 2 {
		p := startCmd(t, exec.Command("sh", "-c", `umask 077; exec "$0" --install "$1"`, proxyAwaitBin, dir), nil)
		assert.Equal(t, want, p.next())
		assert.Equal(t, 0, p.wait())
		assert.Empty(t, p.restLines)
		assert.Empty(t, p.stderr.String())
	}
	st, err := os.Stat(want)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode())
	got, err := os.ReadFile(want)
	require.NoError(t, err)
	self, err := os.ReadFile(proxyAwaitBin)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(self, got), "the copy differs from the binary")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")

	p := startCmd(t, asNobody(want, "--version"), nil)
	assert.Regexp(t, `^proxy-await `, p.next())
	assert.Regexp(t, `^commit `, p.next())
	assert.Equal(t, 0, p.wait())
}

// A directory that is missing, a file, or not writable for the user that
// runs --install: one line naming the directory, the reason and what to
// do; exit 73; nothing written.
func (Tests) TestInstallCannotWrite(t *testing.T) {
	dir := openDir(t)
	p := startPA(t, nil, "--install", dir) // a copy that nobody may run
	assert.Equal(t, 0, p.wait())
	pa := filepath.Join(dir, "proxy-await")
	readOnly := openDir(t) // root's, 0755
	file := filepath.Join(dir, "proxy-await")

	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
		want string
	}{
		{"missing", exec.Command(pa, "--install", "/nonexistent/pa"),
			`proxy-await: error: cannot install proxy-await dir=/nonexistent/pa error="no such file or directory" (hint: mount a volume there, such as an emptyDir, or create the directory)`},
		{"a file", exec.Command(pa, "--install", file),
			`proxy-await: error: cannot install proxy-await dir=` + file + ` error="not a directory" (hint: give the directory to copy proxy-await into)`},
		{"not writable", asNobody(pa, "--install", readOnly),
			`proxy-await: error: cannot install proxy-await dir=` + readOnly + ` error="permission denied" (hint: mount a writable volume there, such as an emptyDir, or run as a user who may write to it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startCmd(t, tc.cmd, nil)
			assert.Equal(t, 73, p.wait())
			assert.Empty(t, p.restLines, "stdout")
			assert.Equal(t, tc.want+"\n", p.stderr.String())
		})
	}
	entries, err := os.ReadDir(readOnly)
	require.NoError(t, err)
	assert.Empty(t, entries)

	// A volume too small for the binary, as an emptyDir's sizeLimit on
	// memory is: the temporary file is removed, nothing is left behind.
	t.Run("full", func(t *testing.T) {
		small := openDir(t)
		p := startCmd(t, exec.Command("unshare", "-m", "sh", "-c",
			`mount -t tmpfs -o size=1m tmpfs "$1" || exit 99; "$0" --install "$1"; code=$?; echo "left: $(ls -A "$1")"; exit $code`, pa, small), nil)
		assert.Equal(t, "left: ", p.next())
		assert.Equal(t, 73, p.wait())
		assert.Equal(t, `proxy-await: error: cannot install proxy-await dir=`+small+` error="no space left on device" (hint: give the volume room for the binary (a sizeLimit on an emptyDir counts it))`+"\n",
			p.stderr.String())
	})

	// Under --log-format json the line is one JSON object.
	p = startCmd(t, exec.Command(pa, "--log-format", "json", "--install", "/nonexistent/pa"), nil)
	assert.Equal(t, 73, p.wait())
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.stderr.String()), &rec), p.stderr.String())
	delete(rec, "time")
	assert.Equal(t, map[string]any{"level": "error", "msg": "cannot install proxy-await", "event": "install_failed",
		"dir": "/nonexistent/pa", "error": "no such file or directory",
		"hint": "mount a volume there, such as an emptyDir, or create the directory"}, rec)
}

// DIR/proxy-await is a directory: the line names that entry, not DIR, and
// the reason; exit 73; nothing is written, no temporary file is left, and
// the directory is as it was.
func (Tests) TestInstallOverADirectory(t *testing.T) {
	dir := openDir(t)
	entry := filepath.Join(dir, "proxy-await")
	require.NoError(t, os.Mkdir(entry, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(entry, "kept"), []byte("kept\n"), 0o644))

	p := startPA(t, nil, "--install", dir)
	assert.Equal(t, 73, p.wait())
	assert.Empty(t, p.restLines, "stdout")
	assert.Equal(t, `proxy-await: error: cannot install proxy-await dir=`+dir+` path=`+entry+` error="is a directory"`+
		` (hint: remove that directory, or install into it: --install `+entry+`)`+"\n", p.stderr.String())

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")
	assert.True(t, entries[0].IsDir())
	kept, err := os.ReadFile(filepath.Join(entry, "kept"))
	require.NoError(t, err)
	assert.Equal(t, "kept\n", string(kept))

	// Said before the copy starts: on a volume too small for the binary
	// the reason is still the directory, not the lack of room.
	small := openDir(t)
	p = startCmd(t, exec.Command("unshare", "-m", "sh", "-c",
		`mount -t tmpfs -o size=1m tmpfs "$1" && mkdir "$1/proxy-await" || exit 99; "$0" --install "$1"`, proxyAwaitBin, small), nil)
	assert.Equal(t, 73, p.wait())
	assert.Equal(t, `proxy-await: error: cannot install proxy-await dir=`+small+` path=`+small+`/proxy-await error="is a directory"`+
		` (hint: remove that directory, or install into it: --install `+small+`/proxy-await)`+"\n", p.stderr.String())
}
