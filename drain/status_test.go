package drain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The watch words why it found the listeners quiet: as pinned only when
// data from outside the pod came after the latest traffic.
func TestStatusReason(t *testing.T) {
	began := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	const quiet = 1500 * time.Millisecond
	const traffic = "no traffic for 1.5s"
	const pinned = "no new connection for 1.5s: only connections from outside the pod still send, and the endpoint removal does not move them"
	for _, tc := range []struct {
		name   string
		status Status
		pinned bool
		reason string
	}{
		{"no data from outside", Status{Armed: true, Quiet: quiet, LastTraffic: began}, false, traffic},
		{"data from outside after the traffic", Status{Armed: true, Quiet: quiet, LastTraffic: began, LastPinned: began.Add(time.Second)}, true, pinned},
		{"data from outside before the traffic", Status{Armed: true, Quiet: quiet, LastTraffic: began.Add(time.Second), LastPinned: began}, false, traffic},
		{"data from outside with the traffic", Status{Armed: true, Quiet: quiet, LastTraffic: began, LastPinned: began}, false, traffic},
		{"a watch that never saw the sockets", Status{Quiet: quiet, LastPinned: began}, false, traffic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.pinned, tc.status.Pinned())
			assert.Equal(t, tc.reason, tc.status.Reason())
		})
	}
}
