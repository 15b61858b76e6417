package config

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// --version prints what the build stamped (make build and the release set
// version, commit and date with -X), and drops goreleaser's placeholders
// for what it did not know.
func TestPrintVersion(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)

	version, commit, date = "1.2.3", "4804ffc232c5c050911ec5ca4ee5738dc71f77fc", "2026-11-26T22:35:16Z"
	var out strings.Builder
	PrintVersion(&out)
	assert.Equal(t, "proxy-await 1.2.3\ncommit 4804ffc232c5c050911ec5ca4ee5738dc71f77fc, built 2026-11-26T22:35:16Z, "+runtime.Version()+"\n", out.String())

	// A test binary records no version and no VCS settings of its own.
	version, commit, date = "", "none", "0001-01-01T00:00:00Z"
	out.Reset()
	PrintVersion(&out)
	assert.Equal(t, "proxy-await (devel)\ncommit unknown, built unknown, "+runtime.Version()+"\n", out.String())
}
