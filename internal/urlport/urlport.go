// Package urlport says which port a URL connects to: the one it names, or
// its scheme's default. The readiness probe dials it, the shutdown pairs
// URLs by it, and --check matches it to a sidecar's.
package urlport

import "net/url"

// Of is the port u connects to: its own, or the scheme's default, 443 for
// https and 80 for http (the only other scheme proxy-await takes).
func Of(u *url.URL) string {
	switch p := u.Port(); {
	case p != "":
		return p
	case u.Scheme == "https":
		return "443"
	}
	return "80"
}
