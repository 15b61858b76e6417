// Command proxy-await is a container entrypoint for pods with a service-mesh
// sidecar: it waits for the proxy to be ready, runs the application as its
// child with init-grade signal handling and zombie reaping, and shuts the
// proxy down when the application exits. Without an application to run, it
// only waits.
package main

import (
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/proxy-await/proxy-await/check"
	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/install"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/logging"
)

func main() {
	// The standard library's logger is net/http's: its transport writes a
	// line of its own when a proxy sends what no probe asked for, and then
	// drops the connection. Every line on stderr is proxy-await's.
	stdlog.SetOutput(io.Discard)
	cfg, err := config.ParseEnviron(filepath.Base(os.Args[0]), os.Args[1:], os.Environ())
	var usage *config.UsageError
	switch {
	case errors.As(err, &usage):
		reportUsage(os.Stderr, usage)
		os.Exit(exitcode.Usage)
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s%v\n", logging.Prefix, err)
		os.Exit(exitcode.Internal)
	case cfg.Help:
		config.PrintHelp(os.Stdout)
		os.Exit(0)
	case cfg.Version:
		config.PrintVersion(os.Stdout)
		os.Exit(0)
	}
	// The modes warn first thing; run warns once it has subscribed to
	// signals, so that a SIGPIPE its warning raises is its own.
	log := newLogger(cfg)
	switch {
	case cfg.Check:
		warn(cfg, log)
		os.Exit(check.Run(cfg, os.Stdin, os.Stdout, log))
	case cfg.Install != "":
		warn(cfg, log)
		os.Exit(install.Run(cfg.Install, os.Stdout, log))
	}
	os.Exit(run(cfg, log))
}

// reportUsage prints a usage error to w: under --log-format json one record
// with the event usage_error, else the message and a hint line.
func reportUsage(w io.Writer, u *config.UsageError) {
	if u.Format == "json" {
		logging.New(w, "json", slog.LevelError).Error(u.Error(), hint.Attrs([]any{"event", "usage_error"}, hint.Of(u))...)
		return
	}
	fmt.Fprintf(w, "%s%s\n", logging.Prefix, u.Error())
	if h := hint.Of(u); h != "" {
		fmt.Fprintf(w, "%shint: %s\n", logging.Prefix, h)
	}
}
