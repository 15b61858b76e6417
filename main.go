// Command proxy-await is a container entrypoint for pods with a service-mesh
// sidecar: it waits for the proxy to be ready, runs the application as its
// child with init-grade signal handling and zombie reaping, and shuts the
// proxy down when the application exits. Without an application to run, it
// only waits.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/logging"
)

func main() {
	cfg, err := parseConfig(filepath.Base(os.Args[0]), os.Args[1:], os.LookupEnv)
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		reportUsage(usage)
		os.Exit(exitcode.Usage)
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s%v\n", logging.Prefix, err)
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

// reportUsage prints a usage error: under --log-format json one record with
// the event usage_error, else the message and a hint line.
func reportUsage(u *usageError) {
	if u.format == "json" {
		attrs := []any{"event", "usage_error"}
		if u.hint != "" {
			attrs = append(attrs, "hint", u.hint)
		}
		logging.New(os.Stderr, "json", slog.LevelError).Error(u.msg, attrs...)
		return
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", logging.Prefix, u.msg)
	if u.hint != "" {
		fmt.Fprintf(os.Stderr, "%shint: %s\n", logging.Prefix, u.hint)
	}
}
