package proctree_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// Reading each process's parent from /proc/*/stat, as on kernels without
// children files, finds the same tree as the children files do; a command
// name with ") (" in it does not shift the fields.
func TestByParentFindsWhatChildrenFilesList(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	odd := filepath.Join(t.TempDir(), "x) (y")
	data, err := os.ReadFile(sleep)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(odd, data, 0o755))

	// sh, with a subshell that runs the odd sleep, and the odd sleep.
	cmd := exec.Command("/bin/sh", "-c", `("$1" 1000; :) & "$1" 1000 & wait`, "sh", odd)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})

	var listed []int
	if !testutil.Until(testutil.WaitLimit, func() bool {
		listed = proctree.DescendantsListed(cmd.Process.Pid)
		return len(listed) >= 3
	}) {
		t.Fatalf("the tree never grew to 3 processes: %v", listed)
	}
	assert.Len(t, listed, 3)
	assert.ElementsMatch(t, listed, proctree.DescendantsByParent(cmd.Process.Pid))
	assert.Equal(t, listed, proctree.Descendants(cmd.Process.Pid), "this kernel has children files")
}
