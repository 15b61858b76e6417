// Package lifecycle is proxy-await from its command line to its exit code:
// configure, then either --install or the run: await
// the proxy, start the child, supervise it, shut the proxy down, and say the
// code to exit with. It wires the phases (config, readiness, wrapper,
// probes, shutdown) together, and it never exits itself: main does, with the
// code Main returns.
package lifecycle

import (
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"os"
	"path/filepath"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/install"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/logging"
)

// Main runs proxy-await as args (its name first, as os.Args) and environ
// say, on the process's own standard streams, and returns the code to exit
// with.
func Main(args, environ []string) int {
	// The standard library's logger is net/http's: its transport writes a
	// line of its own when a proxy sends what no probe asked for, and then
	// drops the connection. Every line on stderr is proxy-await's.
	stdlog.SetOutput(io.Discard)
	cfg, err := config.ParseEnviron(filepath.Base(args[0]), args[1:], environ)
	var usage *config.UsageError
	switch {
	case errors.As(err, &usage):
		usage.Report(os.Stderr, logging.Prefix)
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s%v\n", logging.Prefix, err)
		return exitcode.Internal
	case cfg.Help:
		config.PrintHelp(os.Stdout)
		return 0
	case cfg.Version:
		config.PrintVersion(os.Stdout)
		return 0
	}
	// The modes warn first thing; run warns once it has subscribed to
	// signals, so that a SIGPIPE its warning raises is its own.
	log := newLogger(cfg)
	if cfg.Install != nil {
		warn(cfg, log)
		return install.Into(cfg.Install.Dir, os.Stdout, log)
	}
	return run(cfg, log)
}
