// Command proxy-await is a container entrypoint for pods with a service-mesh
// sidecar: it waits for the proxy to be ready, runs the application as its
// child with init-grade signal handling and zombie reaping, and shuts the
// proxy down when the application exits. Without an application to run, it
// only waits.
//
// Everything it does is package lifecycle's; main only exits, with the code
// the lifecycle returns, and nothing else in proxy-await calls os.Exit.
package main

import (
	"os"

	"github.com/proxy-await/proxy-await/lifecycle"
)

func main() {
	os.Exit(lifecycle.Main(os.Args, os.Environ()))
}
