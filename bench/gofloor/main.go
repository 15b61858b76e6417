// Command gofloor is the benchmarks' reference for what any Go init costs:
// a static Go program that makes one signal.Notify call for every signal
// proxy-await forwards, then runs its arguments as a child, passes signals on
// and exits with its status. proxy-await's start-up and memory figures are read against it.
//
//	gofloor COMMAND [ARG...]
package main

import (
	"os"

	"github.com/proxy-await/proxy-await/bench/floor"
)

func main() { floor.Run(os.Args[1:]) }
