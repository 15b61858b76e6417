// Command stamp prints the wall-clock time in nanoseconds since the epoch as
// its first act, then exits. The benchmarks run it as the command behind a
// wrapper to learn when the command started.
package main

import (
	"os"
	"strconv"
	"time"
)

func main() {
	now := time.Now().UnixNano()
	os.Stdout.Write(strconv.AppendInt(nil, now, 10))
	os.Stdout.Write([]byte{'\n'})
}
