// Command proxy-await is a container entrypoint for pods with a service-mesh
// sidecar: it waits for the proxy to be ready, runs the application as its
// child with init-grade signal handling and zombie reaping, and shuts the
// proxy down when the application exits.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proxy-await/proxy-await/internal/exitcode"
)

func main() {
	cfg, err := parseConfig(filepath.Base(os.Args[0]), os.Args[1:], os.LookupEnv)
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintf(os.Stderr, "proxy-await: %s\n", usage.msg)
		if usage.hint != "" {
			fmt.Fprintf(os.Stderr, "proxy-await: hint: %s\n", usage.hint)
		}
		os.Exit(exitcode.Usage)
	case err != nil:
		fmt.Fprintf(os.Stderr, "proxy-await: %v\n", err)
		os.Exit(exitcode.Internal)
	case cfg.help:
		printHelp(os.Stdout)
		os.Exit(0)
	case cfg.version:
		printVersion(os.Stdout)
		os.Exit(0)
	}
	os.Exit(run(cfg, newLogger(cfg)))
}
