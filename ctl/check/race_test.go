//go:build race

package check

// raceEnabled: the race detector slows the program some five to ten
// times, so a test of time does not hold it to a bound.
const raceEnabled = true
