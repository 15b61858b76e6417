package wrapper

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

// The tests pass whatever signal dispositions they inherit: under nohup, or
// as a background job of a script, SIGHUP, SIGINT and SIGQUIT come ignored,
// and Supervise rightly leaves an inherited SIG_IGN in place. The tests that send
// those signals run again here, in this test binary started with the three
// ignored.
func TestSignalTestsPassWithSignalsIgnored(t *testing.T) {
	out, err := testchild.IgnoringSignals("^(TestEveryForwardedSignalReachesTheChild|TestRewrite|TestProcessGroup|TestSecondStopSignalEndsTheHold)$").
		CombinedOutput()
	require.NoError(t, err, "the signal tests, with SIGHUP, SIGINT and SIGQUIT ignored:\n%s", out)
	assert.Contains(t, string(out), "testchild: inherited as ignored (nohup, or a background job of a script), "+
		"now default for the processes the tests start: SIGHUP, SIGINT\n", "SIGQUIT has the Go runtime's handler from the start")
}
