// Package lifecycle is proxy-await from its command line to its exit code:
// configure, then either a mode's job (--check, --inject, --policy,
// --install) or the run: await
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
	"log/slog"
	"os"
	"path/filepath"

	"github.com/proxy-await/proxy-await/check"
	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/inject"
	"github.com/proxy-await/proxy-await/install"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/policy"
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
		reportUsage(os.Stderr, usage)
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
	switch {
	case cfg.Check != nil:
		warn(cfg, log)
		return check.Run(cfg.Check, os.Stdin, os.Stdout, log)
	case cfg.Inject != nil:
		warn(cfg, log)
		code, err := inject.Run(cfg.Inject, os.Stdin, os.Stdout, os.Stderr, log)
		if errors.As(err, &usage) {
			reportUsage(os.Stderr, usage)
		}
		return code
	case cfg.Policy != nil:
		warn(cfg, log)
		return policy.Run(cfg.Policy, os.Stdout, log)
	case cfg.Install != nil:
		warn(cfg, log)
		return install.Run(cfg.Install.Dir, os.Stdout, log)
	}
	return run(cfg, log)
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
