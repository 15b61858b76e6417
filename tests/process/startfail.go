package process

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// A script that cannot start says which file is wrong and what to do, in
// one line without Go's "fork/exec": a missing interpreter is named; a #!
// line that ends in a carriage return (Windows line endings) is reported as
// that, naming the script, not as a missing /bin/sh; and what a #! line
// holds reaches the log quoted, in the hint as in the error field, so that
// an escape sequence in it never reaches the terminal raw.
func (Tests) TestStartFailureOfAScript(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          func(script string) string // the first line on stderr
	}{
		{"missing interpreter", "#!/nonexistent/interp\necho never\n", func(script string) string {
			return `proxy-await: error: cannot start the command error="` + script +
				`: its interpreter /nonexistent/interp does not exist" exit_code=127` +
				` (hint: fix the script's #! line, or install /nonexistent/interp in the image)`
		}},
		{"Windows line endings", "#!/bin/sh\r\necho never\r\n", func(script string) string {
			return `proxy-await: error: cannot start the command error="` + script +
				`: its #! line ends in a carriage return: the script has Windows line endings (CRLF)" exit_code=127` +
				` (hint: convert ` + script + ` to Unix line endings (LF), with dos2unix or sed -i 's/\r$//')`
		}},
		{"control characters", "#!/nonexistent/in\x1b[2Jterp\necho never\n", func(script string) string {
			return `proxy-await: error: cannot start the command error="` + script +
				`: its interpreter /nonexistent/in\x1b[2Jterp does not exist" exit_code=127` +
				` (hint: "fix the script's #! line, or install /nonexistent/in\x1b[2Jterp in the image")`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "job.sh")
			require.NoError(t, os.WriteFile(script, []byte(tc.content), 0o755))
			p := startPA(t, nil, "--proxy", "none", "--", script)
			assert.Equal(t, 127, p.wait())
			assert.NotContains(t, p.stderr.String(), "\x1b")
			assert.Equal(t, tc.want(script), strings.SplitN(p.stderr.String(), "\n", 2)[0])
		})
	}
}

// `-- ""` is a command that is not found, as a shell says (127), not a usage
// error: like any command that cannot start, it comes after the wait and
// before the shutdown, which a Job needs to complete.
func (Tests) TestEmptyCommandIsNotFound(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-stay-up")
	p := startPA(t, nil, steadyProbe, "10s", "-S", "--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown"), "--", "")
	assert.Equal(t, 127, p.wait())
	assert.Regexp(t, `^proxy-await: waiting for the proxy: --ready-url url=\S+\n`+
		`proxy-await: proxy is ready elapsed=\S+\n`+
		regexp.QuoteMeta(`proxy-await: error: cannot start the command error="the command is an empty string: not found"`+
			` exit_code=127 (hint: give the command's name or path)`)+"\n"+
		`proxy-await: proxy shutdown requested url=\S+ status=200 elapsed=\S+\n$`, p.stderr.String())
	assert.Equal(t, 1, fp.Count("GET", "/ready"))
	assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
}
