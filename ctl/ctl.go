// Package ctl is proxy-awaitctl from its command line to its exit code: the
// platform team's tool beside proxy-await. It reads the subcommand and its
// flags (config.ParseTool), then runs check, inject or policy, which read
// manifests, on laptops and in CI. Nothing of it is linked into
// proxy-await, the pod's entrypoint. It never exits itself: main does, with
// the code Main returns.
package ctl

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/inject"
	"github.com/proxy-await/proxy-await/ctl/policy"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/logging"
)

// prefix starts each of proxy-awaitctl's text lines on stderr.
const prefix = config.ToolName + ": "

// Main runs proxy-awaitctl as args (its name first, as os.Args) and
// environ say, on the process's own standard streams, and returns the code
// to exit with.
func Main(args, environ []string) int {
	return run(args, environ, os.Stdin, os.Stdout, os.Stderr)
}

func run(args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	t, err := config.ParseToolEnviron(args[1:], environ)
	var usage *config.UsageError
	switch {
	case errors.As(err, &usage):
		usage.Report(stderr, prefix)
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(stderr, "%s%v\n", prefix, err)
		return exitcode.Internal
	case t.Help:
		config.PrintToolHelp(stdout, t.Command)
		return 0
	case t.Version:
		config.PrintToolVersion(stdout)
		return 0
	}
	log := logging.NewNamed(prefix, stderr, t.LogFormat, logging.Level(t.Verbose, t.Quiet))
	for _, w := range t.Warnings {
		log.Warn(w.Error(), hint.Attrs([]any{"event", "config_warning"}, w.Hint)...)
	}
	switch {
	case t.Check != nil:
		return check.Main(t.Check, stdin, stdout, log)
	case t.Inject != nil:
		code, err := inject.Main(t.Inject, stdin, stdout, stderr, log)
		if errors.As(err, &usage) {
			usage.Report(stderr, prefix)
		}
		return code
	case t.Policy != nil:
		return policy.Main(t.Policy, stdout, log)
	}
	return internal(log, t.Command)
}

// internal is the code for a command that ParseTool accepted and Main
// does not run: a mistake of proxy-awaitctl's own.
func internal(log *slog.Logger, command string) int {
	log.Error("no command to run: "+command, "event", "internal_error")
	return exitcode.Internal
}
