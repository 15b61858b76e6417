package lifecycle_test

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

// sigIgn runs `sh -c "TRAP; exec proxy-await --proxy none -- grep SigIgn
// /proc/self/status"` and returns the child's mask of ignored signals.
func sigIgn(t *testing.T, trap string) uint64 {
	t.Helper()
	cmd := exec.Command("sh", "-c", trap+`; exec "$0" --proxy none -- grep SigIgn /proc/self/status`, proxyAwaitBin)
	q := startCmd(t, cmd, nil)
	line := q.expect("SigIgn:")
	assert.Equal(t, 0, q.wait())
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "SigIgn:")), 16, 64)
	require.NoError(t, err, "%q", line)
	return mask
}

// The child keeps the SIG_IGN that proxy-await inherited for SIGHUP and
// SIGINT, as it would without proxy-await between them.
func TestInheritedIgnoredSignalsStayIgnored(t *testing.T) {
	const hupInt = 1<<(syscall.SIGHUP-1) | 1<<(syscall.SIGINT-1)
	assert.Equal(t, uint64(hupInt), sigIgn(t, "trap '' HUP INT")&hupInt, "HUP and INT stay ignored in the child")
	assert.Zero(t, sigIgn(t, "trap - HUP INT")&hupInt, "nothing ignored is nothing ignored")
}

// Under nohup, a hangup of the whole process group (a terminal closing)
// reaches proxy-await and the child; neither does anything with it, so the
// child dies of the SIGTERM that follows: 143, not 129.
func TestNohupKeepsTheChildAliveOnHangup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	require.NoError(t, err, "nohup is missing: install coreutils")
	cmd := exec.Command(nohup, append([]string{proxyAwaitBin, "--proxy", "none"}, child("idle")...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := startCmd(t, cmd, nil)
	assert.Equal(t, "ready", p.next())
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGHUP))
	p.signal(syscall.SIGTERM)
	assert.Equal(t, 128+int(syscall.SIGTERM), p.wait())
}

// The tests pass whatever signal dispositions they inherit: under nohup, or
// as a background job of a script, SIGHUP, SIGINT and SIGQUIT come ignored,
// and proxy-await rightly keeps them ignored for itself and its child. Tests
// that send SIGINT, or that count on SIGHUP's default in the processes they
// start, run again here, in this test binary started with the three ignored.
func TestSignalTestsPassWithSignalsIgnored(t *testing.T) {
	out, err := testchild.IgnoringSignals("^(TestTerminationWhileWaiting|TestInheritedIgnoredSignalsStayIgnored)$").CombinedOutput()
	require.NoError(t, err, "the signal tests, with SIGHUP, SIGINT and SIGQUIT ignored:\n%s", out)
	assert.NotContains(t, string(out), "no tests to run", "the pattern names the tests")
	assert.Contains(t, string(out), "testchild: inherited as ignored (nohup, or a background job of a script), "+
		"now default for the processes the tests start: SIGHUP, SIGINT\n", "SIGQUIT has the Go runtime's handler from the start")
}
