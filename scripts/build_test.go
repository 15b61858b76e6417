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
	"go.yaml.in/yaml/v3"
)

// The commands `make build` and the release build, each with its make target.
var commands = map[string]string{"proxy-await": "bin/proxy-await", "proxy-awaitctl": "bin/proxy-awaitctl"}

// releaseStamps is, for each build of .goreleaser.yaml by its id, the
// variables its ldflags set with -X and the goreleaser template field each
// gets.
func releaseStamps(t *testing.T) map[string]map[string]string {
	var cfg struct {
		Builds []struct {
			ID      string   `yaml:"id"`
			LDFlags []string `yaml:"ldflags"`
		} `yaml:"builds"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(readFile(t, ".goreleaser.yaml")), &cfg))
	stamps := map[string]map[string]string{}
	for _, b := range cfg.Builds {
		stamps[b.ID] = map[string]string{}
		for _, m := range regexp.MustCompile(`-X (\S+)=\{\{ \.(\w+) \}\}`).FindAllStringSubmatch(strings.Join(b.LDFlags, " "), -1) {
			stamps[b.ID][m[1]] = m[2]
		}
	}
	return stamps
}

// The release builds both commands and stamps each with the same version
// variables, which config holds for both.
func TestReleaseStampsBothCommands(t *testing.T) {
	stamps := releaseStamps(t)
	require.Len(t, stamps, len(commands), ".goreleaser.yaml's builds: %v", stamps)
	for name := range commands {
		require.Contains(t, stamps, name, ".goreleaser.yaml builds no %s", name)
		assert.Len(t, stamps[name], 3, "%s's ldflags", name)
		assert.Equal(t, stamps["proxy-await"], stamps[name], "%s is stamped as proxy-await is", name)
	}
}

// `make build` stamps the version as the release does: the variables that
// .goreleaser.yaml's ldflags set, with the values goreleaser gives them (the
// tag without its v, the full commit, the commit's time in UTC), from git;
// outside a git checkout of this tree, with nothing, so that --version says
// (devel) and unknown rather than another repository's commit. Both
// commands alike.
func TestMakeBuildStampsTheVersion(t *testing.T) {
	release := releaseStamps(t)["proxy-await"] // variable -> goreleaser's template field
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

	// stamped is what `make build` passes to -X when it builds target, run
	// in dir (dry: make -n).
	stamped := func(dir, target string) map[string]string {
		makefile, err := filepath.Abs("Makefile")
		require.NoError(t, err)
		out, err := exec.Command("make", "-n", "--no-print-directory", "-f", makefile, "-C", dir, target).CombinedOutput()
		require.NoError(t, err, "%s", out)
		var build string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, " build ") && strings.Contains(line, " -o "+target+" ") {
				build = line
			}
		}
		require.NotEmpty(t, build, "make -n %s runs no go build:\n%s", target, out)
		got := map[string]string{}
		for _, m := range regexp.MustCompile(`-X (\S+)=(\S*)`).FindAllStringSubmatch(build, -1) {
			got[m[1]] = strings.TrimSuffix(m[2], "'")
		}
		return got
	}
	for _, target := range commands {
		got := stamped(wd, target)
		for variable, field := range release {
			assert.Equal(t, want[field], got[variable], "%s: %s (goreleaser's .%s)", target, variable, field)
		}
		assert.Len(t, got, len(release), "make %s stamps variables the release does not: %v", target, got)

		// A tree that is no git checkout, here one below no repository.
		empty := stamped(t.TempDir(), target)
		for variable := range release {
			v, ok := empty[variable]
			assert.True(t, ok && v == "", "%s: outside a checkout, %s is %q, not empty", target, variable, v)
		}
	}
}

// readFile is the text of a file, by its path from the root.
func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(data)
}

// The release, `make build`, make e2e and make bench build proxy-await
// with the same build tags (net/http without HTTP/2) and the same compiler
// flags, in the same order (no inlining but in the runtime: for a package
// two patterns match, the later wins): what the tests, the cluster and the
// benchmarks run is what users get. make e2e builds it, and proxy-awaitctl,
// by the Makefile's own rules, into its cache.
func TestBuildsShareTheirFlags(t *testing.T) {
	var cfg struct {
		Builds []struct {
			ID      string   `yaml:"id"`
			Flags   []string `yaml:"flags"`
			GCFlags []string `yaml:"gcflags"`
		} `yaml:"builds"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(readFile(t, ".goreleaser.yaml")), &cfg))
	var tags, gcflags string
	for _, b := range cfg.Builds {
		if b.ID != "proxy-await" {
			continue
		}
		for _, f := range b.Flags {
			if v, ok := strings.CutPrefix(f, "-tags="); ok {
				tags = v
			}
		}
		var each []string
		for _, f := range b.GCFlags {
			each = append(each, "-gcflags="+f)
		}
		gcflags = strings.Join(each, " ")
	}
	require.NotEmpty(t, tags, ".goreleaser.yaml builds proxy-await with -tags=")
	require.NotEmpty(t, gcflags, ".goreleaser.yaml builds proxy-await with gcflags")

	out, err := exec.Command("make", "-n", "--no-print-directory", "bin/proxy-await").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), " -tags '"+tags+"' "+gcflags+" ", "make build")
	assert.Regexp(t, `make -s BIN="\$BIN" \\\n\s+"\$BIN/proxy-await" "\$BIN/proxy-awaitctl"`, readFile(t, "e2e/build.sh"), "make e2e")
	bench := readFile(t, "bench/run.sh")
	assert.Equal(t, []string{"tags=" + tags, "gcflags=(" + gcflags + ")"},
		regexp.MustCompile(`(?m)^(?:tags|gcflags)=.*$`).FindAllString(bench, -1), "make bench")
}
