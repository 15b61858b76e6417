package shutdown

import (
	"net"
	"net/netip"
	"strings"

	"github.com/proxy-await/proxy-await/config"
)

// Pair makes a Target of each shutdown URL: its proxy's preset and that
// proxy's readiness URLs, which tell a proxy gone from a missing endpoint,
// so another proxy's must never be among them. They are the readiness URLs
// of the same proxy where the configuration says which that is (a preset's,
// or scuttle's Envoy's); else, when the readiness and shutdown URLs were all
// given by hand and as many of each, the readiness URL at the same
// position; else only those on the same host and port. A shutdown URL may
// get none: it is then judged by its own host and port.
func Pair(ready, shut []config.ProxyURL) []Target {
	byPosition := len(ready) == len(shut) && allByHand(ready) && allByHand(shut)
	out := make([]Target, len(shut))
	for i, s := range shut {
		t := Target{URL: s.URL, Preset: s.Preset}
		if s.Proxy != "" {
			for _, r := range ready {
				if !r.ByHand && r.Proxy == s.Proxy {
					t.Ready = append(t.Ready, r.URL)
				}
			}
		}
		switch {
		case t.Ready != nil:
		case byPosition:
			t.Ready = []string{ready[i].URL}
		default:
			for _, r := range ready {
				if sameAddr(r.URL, s.URL) {
					t.Ready = append(t.Ready, r.URL)
				}
			}
		}
		out[i] = t
	}
	return out
}

func allByHand(urls []config.ProxyURL) bool {
	for _, u := range urls {
		if !u.ByHand {
			return false
		}
	}
	return true
}

// sameAddr says whether two URLs connect to the same host and port (the
// scheme's when the URL names none); every loopback name is the pod's own
// host.
func sameAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(hostPort(a))
	hb, pb, errB := net.SplitHostPort(hostPort(b))
	if errA != nil || errB != nil || pa != pb {
		return false
	}
	return loopback(ha) && loopback(hb) || strings.EqualFold(ha, hb)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
