package shutdown

// Targets are the given URLs, each of an unknown proxy with no readiness
// URL: a refused connection means "gone" only after one reached it.
func Targets(urls ...string) []Target {
	t := make([]Target, len(urls))
	for i, u := range urls {
		t[i] = Target{URL: u}
	}
	return t
}
