// Package proxyloss is what the watch of the proxies (readiness.Watch) tells
// the supervisor (wrapper) when one is lost (--proxy-lost), so that neither
// of the two imports the other: the lifecycle hands the one to the other.
package proxyloss

import "time"

// Loss is a proxy lost: one readiness URL whose every probe has failed for
// --proxy-lost.
type Loss struct {
	URL     string
	Failing time.Duration // since its first failed probe was sent
	Err     error         // its last probe's error
}
