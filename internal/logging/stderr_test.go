package logging

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A write to a pipe with no reader raises one SIGPIPE, which the output
// counts for the signal handling to claim; the writes after it raise none.
func TestOutputCountsTheSigpipeItRaises(t *testing.T) {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGPIPE, syscall.SIGUSR1)
	defer signal.Stop(c)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	defer w.Close()

	o := &Output{fd: int(w.Fd())}
	assert.False(t, o.RaisedSigpipe(), "nothing written yet")
	for _, line := range []string{"one\n", "two\n", "three\n"} {
		n, err := o.Write([]byte(line))
		assert.NoError(t, err, "a closed stderr is no error to the logger")
		assert.Equal(t, len(line), n)
	}
	// Collect the SIGPIPE and a SIGUSR1 sent after the writes (in either
	// order: the runtime hands pending signals over lowest number first),
	// then anything that arrives before a second SIGUSR1.
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	var got []os.Signal
	for !slices.Contains(got, os.Signal(syscall.SIGPIPE)) || !slices.Contains(got, os.Signal(syscall.SIGUSR1)) {
		got = append(got, next(t, c))
	}
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR1))
	for s := next(t, c); s != syscall.SIGUSR1; s = next(t, c) {
		got = append(got, s)
	}
	assert.ElementsMatch(t, []os.Signal{syscall.SIGPIPE, syscall.SIGUSR1}, got, "one SIGPIPE for three writes")
	assert.True(t, o.RaisedSigpipe(), "the SIGPIPE is ours")
	assert.False(t, o.RaisedSigpipe(), "and claimed once")
}

func next(t *testing.T, c <-chan os.Signal) os.Signal {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no signal within 20s")
		return nil
	}
}
