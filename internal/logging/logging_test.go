package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	var b bytes.Buffer
	log := New(&b, "text", Level(false, false))
	log.Info("proxy is ready", "event", "readiness_ready", "elapsed", 1234*time.Millisecond)
	log.Warn("careful", "event", "x", "error", "two words", "hint", "do this")
	log.Error("broken", "event", "y", "url", "http://user:secret@127.0.0.1:4191/shutdown")
	log.Debug("not shown", "event", "z")
	assert.Equal(t, `proxy-await: proxy is ready elapsed=1.234s
proxy-await: warning: careful error="two words" (hint: do this)
proxy-await: error: broken url=http://user:xxxxx@127.0.0.1:4191/shutdown
`, b.String())
}

// A hint is written as it is, unless it holds a control character or bytes
// that are not UTF-8: then it is quoted, as values are, so that what a file
// or a #! line holds never reaches the terminal raw.
func TestTextHintIsQuotedWhenItMustBe(t *testing.T) {
	var b bytes.Buffer
	log := New(&b, "text", Level(false, false))
	log.Error("bad", "event", "x", "hint", "install /bin/sh\x1b[2J in the image")
	log.Error("bad", "event", "x", "hint", "fix \xff")
	log.Error("bad", "event", "x", "hint", "café, with spaces: fine")
	assert.Equal(t, `proxy-await: error: bad (hint: "install /bin/sh\x1b[2J in the image")
proxy-await: error: bad (hint: "fix \xff")
proxy-await: error: bad (hint: café, with spaces: fine)
`, b.String())
}

func TestLevels(t *testing.T) {
	var b bytes.Buffer
	New(&b, "text", Level(true, false)).Debug("shown", "event", "z")
	assert.Equal(t, "proxy-await: debug: shown\n", b.String())
	b.Reset()
	quiet := New(&b, "text", Level(true, true))
	quiet.Info("hidden", "event", "z")
	quiet.Warn("hidden", "event", "z")
	quiet.Error("shown", "event", "z")
	assert.Equal(t, "proxy-await: error: shown\n", b.String(), "-q logs errors only, and wins over -v")
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	log := New(&b, "json", Level(false, false))
	log.Info("child exited", "event", "child_exited", "child_pid", 42, "exit_code", 3, "elapsed", 1500*time.Millisecond,
		"url", "http://a:b@127.0.0.1/x")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 1)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, "info", rec["level"])
	assert.Equal(t, "child exited", rec["msg"])
	assert.Equal(t, "child_exited", rec["event"])
	assert.EqualValues(t, 42, rec["child_pid"])
	assert.EqualValues(t, 3, rec["exit_code"])
	assert.EqualValues(t, 1500, rec["elapsed_ms"])
	assert.Equal(t, "http://a:xxxxx@127.0.0.1/x", rec["url"])
	_, err := time.Parse(time.RFC3339Nano, rec["time"].(string))
	assert.NoError(t, err)
}

// A URL attribute, one URL or a list, is printed without its password,
// whatever the password holds: a list is redacted URL by URL, so a comma
// in a password cannot split it.
func TestURLAttributesAreRedacted(t *testing.T) {
	list := []string{"http://u:pa,ss@127.0.0.1:1/ready", "http://127.0.0.1:2/ready?a=1,2"}
	var b bytes.Buffer
	log := New(&b, "text", Level(false, false))
	log.Info("one", "event", "x", "url", "http://u:p@ss,w@127.0.0.1/r")
	log.Info("list", "event", "x", "url", list)
	log.Info("other key", "event", "x", "ready_url", "http://u:pa,ss@127.0.0.1/r")
	assert.Equal(t, `proxy-await: one url=http://u:xxxxx@127.0.0.1/r
proxy-await: list url="http://u:xxxxx@127.0.0.1:1/ready,http://127.0.0.1:2/ready?a=1,2"
proxy-await: other key ready_url=http://u:xxxxx@127.0.0.1/r
`, b.String())

	b.Reset()
	log = New(&b, "json", Level(false, false))
	log.Info("list", "event", "x", "url", list, "ready_url", "http://u:p%zz@127.0.0.1/r")
	var rec map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &rec))
	assert.Equal(t, "http://u:xxxxx@127.0.0.1:1/ready,http://127.0.0.1:2/ready?a=1,2", rec["url"])
	assert.Equal(t, "http://xxxxx@127.0.0.1...", rec["ready_url"])
	assert.NotContains(t, b.String(), "pa,ss")
}
