package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
)

// The README's usage block is the real --help, word for word.
func TestReadmeUsageIsHelp(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "<!-- usage: this block is `proxy-await --help`; a test keeps them equal -->\n```text\n")
	require.True(t, ok, "README.md has no usage block")
	block, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	var help bytes.Buffer
	config.PrintHelp(&help)
	assert.Equal(t, help.String(), block, "update README.md's usage block from `proxy-await --help`")
}

// The README's conformance table is docs/conformance.md's, whose
// proxy-await column TestConformanceTable checks against a fresh run.
func TestReadmeConformanceTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	doc, err := os.ReadFile("docs/conformance.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "<!-- conformance: docs/conformance.md's table; a test keeps proxy-await's column equal -->\n")
	require.True(t, ok, "README.md has no conformance table")
	table, _, _ = strings.Cut(table, "\n\n")
	assert.Equal(t, conformanceColumn(t, string(doc), 4), conformanceColumn(t, table, 4),
		"copy docs/conformance.md's table into README.md")
}

// readmeSection is the text of the README's top-level section heading, up
// to the next one.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## "+heading+"\n")
	require.True(t, ok, "README.md has no %s section", heading)
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// Every event name the code logs is in the README's Logs table, so that a
// log pipeline author finds each one there.
func TestReadmeListsEveryEvent(t *testing.T) {
	logs := readmeSection(t, "Logs")
	for _, name := range loggedEvents(t) {
		assert.Contains(t, logs, "`"+name+"`", "README.md's Logs table has no row for the event %s", name)
	}
}

// loggedEvents finds every `"event", "NAME"` attribute in proxy-await's own
// (non-test) Go files.
func loggedEvents(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`"event", "([a-z_]+)"`)
	seen := map[string]bool{}
	for _, dir := range []string{".", "readiness", "shutdown", "wrapper", "drain", "internal/logging", "install", "check"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range re.FindAllStringSubmatch(string(data), -1) {
				seen[m[1]] = true
			}
		}
	}
	require.NotEmpty(t, seen)
	return slices.Sorted(maps.Keys(seen))
}
