package drain

import (
	"math"
	"slices"
	"time"
)

// arrivals are the times of the latest new connections from outside the pod
// to the watched listeners, oldest first: the traffic that the endpoint
// removal stops. The quiet period is derived from them (quiet), so that a
// pod whose clients open a connection every few seconds is not taken for
// quiet between two of them while kube-proxy still sends it new ones.
type arrivals struct {
	at  []time.Time
	seg []int // each arrival's stretch of watching: a gap counts only within one
	cur int   // the stretch now
}

const (
	// arrivalsKept is how many of the latest arrivals the quiet period is
	// derived from.
	arrivalsKept = 64
	// missOdds is how seldom a hold may end while the connections still
	// come: once in 100 000 stops.
	missOdds = 1e5
	// burstFactor times the longest gap seen covers traffic that comes in
	// bursts, whose long gaps a mean understates.
	burstFactor = 2
)

// add records a new connection that last received data (or was accepted)
// at t; reports come in the order the connections close, not in the order
// they arrived.
func (a *arrivals) add(t time.Time) {
	i, _ := slices.BinarySearchFunc(a.at, t, time.Time.Compare)
	a.at = slices.Insert(a.at, i, t)
	a.seg = slices.Insert(a.seg, i, a.cur)
	if drop := len(a.at) - arrivalsKept; drop > 0 {
		a.at = slices.Delete(a.at, 0, drop)
		a.seg = slices.Delete(a.seg, 0, drop)
	}
}

// resume begins a new stretch of watching after a pause: the time between
// the last arrival before it and the first after is no gap the clients
// made.
func (a *arrivals) resume() { a.cur++ }

// gaps returns how many gaps between the arrivals there are, their mean and
// the longest.
func (a *arrivals) gaps() (n int, mean, longest time.Duration) {
	var sum time.Duration
	for i := 1; i < len(a.at); i++ {
		if a.seg[i] != a.seg[i-1] {
			continue
		}
		g := a.at[i].Sub(a.at[i-1])
		n, sum, longest = n+1, sum+g, max(longest, g)
	}
	if n == 0 {
		return 0, 0, 0
	}
	return n, sum / time.Duration(n), longest
}

// settled says whether the arrivals are as many as are kept and ask for no
// more than floor: the clients connect so often that a while more of them
// would teach nothing, and the watch may stop reading their reports for a
// while (learnPause).
func (a *arrivals) settled(floor, bound time.Duration) bool {
	return len(a.at) == arrivalsKept && a.quiet(floor, bound) == floor
}

// quiet is the quiet period the arrivals call for, and never less than
// floor (--drain-quiet). Connections that come at random at the rate r the
// mean gap shows leave a gap longer than q with odds exp(-r q), and a hold
// of at most bound (--term-delay) sees at most r bound gaps: q = (ln(r
// bound) + ln(missOdds)) / r makes a hold that ends while they still come
// as rare as 1 in missOdds. Traffic in bursts, whose long pauses a mean
// understates, gets burstFactor times the longest gap. With fewer than two
// arrivals there is no gap to go by, and floor stands: a pod whose traffic
// comes only from inside it (a sidecar proxy's pooled connections) ends
// its hold when that traffic stops.
func (a *arrivals) quiet(floor, bound time.Duration) time.Duration {
	n, mean, longest := a.gaps()
	if n == 0 || mean <= 0 {
		return max(floor, burstFactor*longest)
	}
	rate := 1 / mean.Seconds()
	odds := math.Log(missOdds) + math.Log(max(1, rate*bound.Seconds()))
	derived := time.Duration(math.Ceil(odds / rate * float64(time.Second)))
	return max(floor, burstFactor*longest, derived.Round(time.Millisecond))
}
