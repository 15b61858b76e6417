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

// The README's conformance table is docs/conformance.md's, which another
// test checks against a fresh run of scripts/conformance.sh.
func TestReadmeConformanceTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	doc, err := os.ReadFile("docs/conformance.md")
	require.NoError(t, err)
	var table []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
		}
	}
	require.NotEmpty(t, table)
	assert.Contains(t, string(readme), "<!-- conformance: docs/conformance.md's table; a test keeps them equal -->\n"+
		strings.Join(table, "\n")+"\n", "copy docs/conformance.md's table into README.md")
}
