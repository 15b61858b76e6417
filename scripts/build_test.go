package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `make build` stamps the version as the release does: the variables that
// .goreleaser.yaml's ldflags set, with the values goreleaser gives them (the
// tag without its v, the full commit, the commit's time in UTC), from git;
// outside a git checkout of this tree, with nothing, so that --version says
// (devel) and unknown rather than another repository's commit.
func TestMakeBuildStampsTheVersion(t *testing.T) {
	release := map[string]string{} // variable -> goreleaser's template field
	for _, m := range regexp.MustCompile(`-X (\S+)=\{\{ \.(\w+) \}\}`).FindAllStringSubmatch(readFile(t, ".goreleaser.yaml"), -1) {
		release[m[1]] = m[2]
	}
	require.Len(t, release, 3, ".goreleaser.yaml's ldflags")

	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	want := map[string]string{"Version": "", "FullCommit": "", "CommitDate": ""}
	if git("rev-parse", "--show-toplevel") == wd {
		unix, err := strconv.ParseInt(git("log", "-1", "--format=%ct"), 10, 64)
		require.NoError(t, err)
		want = map[string]string{
			"Version":    strings.TrimPrefix(git("describe", "--tags", "--always", "--dirty"), "v"),
			"FullCommit": git("rev-parse", "HEAD"),
			"CommitDate": time.Unix(unix, 0).UTC().Format(time.RFC3339),
		}
		require.NotEmpty(t, want["FullCommit"])
	} else {
		t.Logf("not a git checkout of this tree: the stamp is empty")
	}

	// stamped is what `make build` passes to -X, run in dir (dry: make -n).
	stamped := func(dir string) map[string]string {
		makefile, err := filepath.Abs("Makefile")
		require.NoError(t, err)
		out, err := exec.Command("make", "-n", "--no-print-directory", "-f", makefile, "-C", dir, "bin/proxy-await").CombinedOutput()
		require.NoError(t, err, "%s", out)
		var build string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, " build ") && strings.HasSuffix(line, " .") {
				build = line
			}
		}
		require.NotEmpty(t, build, "make -n bin/proxy-await runs no go build:\n%s", out)
		got := map[string]string{}
		for _, m := range regexp.MustCompile(`-X (\S+)=(\S*)`).FindAllStringSubmatch(build, -1) {
			got[m[1]] = strings.TrimSuffix(m[2], "'")
		}
		return got
	}
	got := stamped(wd)
	for variable, field := range release {
		assert.Equal(t, want[field], got[variable], "%s (goreleaser's .%s)", variable, field)
	}
	assert.Len(t, got, len(release), "make build stamps variables the release does not: %v", got)

	// A tree that is no git checkout, here one below no repository.
	empty := stamped(t.TempDir())
	for variable := range release {
		v, ok := empty[variable]
		assert.True(t, ok && v == "", "outside a checkout, %s is %q, not empty", variable, v)
	}
}

// readFile is the text of a file, by its path from the root.
func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(data)
}

// The release, `make build` and make e2e build proxy-await with the same
// build tags (net/http without HTTP/2): what the tests and the cluster run
// is what users get.
func TestBuildsShareTheirTags(t *testing.T) {
	release := regexp.MustCompile(`-tags=(\S+)`).FindStringSubmatch(readFile(t, ".goreleaser.yaml"))
	require.NotNil(t, release, ".goreleaser.yaml builds with -tags=")
	out, err := exec.Command("make", "-n", "--no-print-directory", "bin/proxy-await").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), " -tags '"+release[1]+"' ", "make build")
	assert.Regexp(t, `go build -trimpath -tags `+regexp.QuoteMeta(release[1])+` -o "\$BIN/proxy-await" \.`, readFile(t, "e2e/build.sh"), "make e2e")
}
