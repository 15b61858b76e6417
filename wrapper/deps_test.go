package wrapper

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The supervisor gets what it needs of the other phases as values and
// small interfaces that the lifecycle wires (the proxy's watch, the
// probes, a lost proxy as internal/proxyloss says it): it links none of
// them, nor the configuration or the proxy table. go list says what this
// package links.
func TestSupervisorLinksNoOtherPhase(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "-deps", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/proxy-await/proxy-await/wrapper", "go list named not this package")
	var linked []string
	for _, d := range deps {
		switch strings.TrimPrefix(d, "github.com/proxy-await/proxy-await/") {
		case "readiness", "probes", "shutdown", "config", "proxies", "lifecycle":
			linked = append(linked, d)
		}
	}
	assert.Empty(t, linked, "the supervisor links another phase; the lifecycle wires them")
}
