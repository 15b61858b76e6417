package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	printHelp(&help)
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
