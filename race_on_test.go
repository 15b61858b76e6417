//go:build race

package main

// raceEnabled builds the binary under test with -race too, so the race
// detector watches proxy-await itself, not only the test process.
const raceEnabled = true
