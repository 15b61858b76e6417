package drain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The quiet period is --drain-quiet unless new connections from outside the
// pod came further apart: then long enough that a hold of at most
// --term-delay ends while they still come once in 100 000 stops, and twice
// the longest gap.
func TestArrivalsQuiet(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	every := func(n int, gap time.Duration) []time.Time {
		var ts []time.Time
		for i := range n {
			ts = append(ts, t0.Add(time.Duration(i)*gap))
		}
		return ts
	}
	for _, tc := range []struct {
		name  string
		at    []time.Time
		floor time.Duration
		want  time.Duration
	}{
		{"none", nil, time.Second, time.Second},
		{"one: no gap to go by", every(1, time.Minute), time.Second, time.Second},
		{"busy: the floor", every(64, 20*time.Millisecond), time.Second, time.Second},
		{"quiet: (ln 100 000 + ln 40 gaps a minute) mean gaps", every(40, 1500*time.Millisecond), time.Second, 22803 * time.Millisecond},
		{"bursts: twice the longest gap", append(every(30, time.Millisecond), t0.Add(5*time.Second)), time.Second, 2 * (5*time.Second - 29*time.Millisecond)},
		{"the floor when longer", every(40, 100*time.Millisecond), 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a arrivals
			for _, at := range tc.at {
				a.add(at)
			}
			assert.Equal(t, tc.want, a.quiet(tc.floor, time.Minute))
		})
	}
}

// Reports come as connections close, not as they arrived: the arrivals are
// kept in order, and only the latest ones count.
func TestArrivalsOrderAndWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var a arrivals
	for _, s := range []int{3, 1, 2} {
		a.add(t0.Add(time.Duration(s) * time.Second))
	}
	n, mean, longest := a.gaps()
	require.Equal(t, 2, n)
	assert.Equal(t, time.Second, mean)
	assert.Equal(t, time.Second, longest)

	// A long gap long ago falls out once arrivalsKept later ones came.
	a = arrivals{}
	a.add(t0)
	for i := range arrivalsKept {
		a.add(t0.Add(time.Hour + time.Duration(i)*10*time.Millisecond))
	}
	n, _, longest = a.gaps()
	assert.Equal(t, arrivalsKept-1, n)
	assert.Equal(t, 10*time.Millisecond, longest)
}

// Once the clients connect so often that the quiet period is the floor, the
// watch may pause; the time it paused is no gap the clients made.
func TestArrivalsSettledAndPaused(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var a arrivals
	for i := range arrivalsKept - 1 {
		a.add(t0.Add(time.Duration(i) * 10 * time.Millisecond))
	}
	assert.False(t, a.settled(time.Second, time.Minute), "fewer than arrivalsKept")
	a.add(t0.Add(time.Duration(arrivalsKept-1) * 10 * time.Millisecond))
	assert.True(t, a.settled(time.Second, time.Minute))
	assert.False(t, a.settled(100*time.Millisecond, time.Minute), "a lower floor is not enough")

	a.resume()
	a.add(t0.Add(time.Minute))
	a.add(t0.Add(time.Minute + 10*time.Millisecond))
	n, _, longest := a.gaps()
	assert.Equal(t, arrivalsKept-2, n, "the gap across the pause does not count")
	assert.Equal(t, 10*time.Millisecond, longest)
}
