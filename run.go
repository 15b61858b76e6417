package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/readiness"
	"github.com/proxy-await/proxy-await/shutdown"
	"github.com/proxy-await/proxy-await/wrapper"
)

func newLogger(c *config) *slog.Logger {
	return logging.New(os.Stderr, c.logFormat, logging.Level(c.verbose, c.quiet))
}

// run is the lifecycle after configuration: await the proxy, run the child,
// shut the proxy down, and return the exit code. Without a command it only
// awaits the proxy.
func run(c *config, log *slog.Logger) int {
	// Subscribe before anything else, so that no signal goes unhandled. The
	// subscription is never undone: the process exits right after run, and
	// undoing it costs half a millisecond on every exit.
	sigs := wrapper.Notify()

	code, start := awaitProxy(c, log, sigs)
	if start && len(c.command) > 0 { // no command: only wait
		code = runChild(c, log, sigs)
	}
	switch {
	case c.shutdown && c.shutdownOnlyOK && code != 0:
		log.Info("command failed: leaving the proxy running", "event", "shutdown_skipped", "exit_code", code)
	case c.shutdown:
		shutdownProxy(c, log)
	}
	return code
}

// awaitProxy waits for readiness. It says whether to start the child and, if
// not, the exit code.
func awaitProxy(c *config, log *slog.Logger, sigs <-chan os.Signal) (code int, start bool) {
	switch {
	case c.disabled:
		log.Info("readiness wait disabled by the environment", "event", "readiness_skipped")
		return 0, true
	case len(c.readyURLs) == 0:
		log.Debug("no readiness URL: not waiting", "event", "readiness_skipped")
		return 0, true
	}
	// cancel ends the wait on a termination signal; --timeout on its own.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if c.timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, c.timeout)
		defer stop()
	}

	began := time.Now()
	log.Info("waiting for the proxy", "event", "readiness_started", "url", strings.Join(c.readyURLs, ","))
	done := make(chan error, 1)
	go func() {
		done <- readiness.Await(ctx, readiness.Options{
			URLs:         c.readyURLs,
			MaxInterval:  c.backoff,
			ProbeTimeout: c.probeTimeout,
			Logger:       log,
		})
	}()
	for {
		select {
		case err := <-done:
			elapsed := time.Since(began)
			switch {
			case err == nil:
				log.Info("proxy is ready", "event", "readiness_ready", "elapsed", elapsed)
				return 0, true
			case !errors.Is(err, context.DeadlineExceeded):
				log.Error("readiness wait failed", "event", "internal_error", "error", err.Error())
				return exitcode.Internal, false
			case c.timeoutFatal:
				log.Error("proxy not ready: giving up", "event", "readiness_timeout", "timeout", c.timeout,
					"hint", "raise --timeout, or set --timeout-fatal=false to start the command anyway")
				return exitcode.Unavailable, false
			default:
				log.Warn("proxy not ready: starting the command anyway", "event", "readiness_timeout",
					"timeout", c.timeout)
				return 0, true
			}
		case sig := <-sigs:
			s := sig.(syscall.Signal)
			switch {
			case s == syscall.SIGCHLD:
				continue // an orphan reparented to PID 1: reaped once the child runs
			case !wrapper.IsTermination(s):
				log.Debug("signal ignored while waiting for the proxy", "event", "signal_dropped",
					"signal", wrapper.SignalName(s))
				continue
			}
			cancel()
			<-done
			log.Info("termination signal while waiting for the proxy: not starting the command",
				"event", "readiness_interrupted", "signal", wrapper.SignalName(s))
			return exitcode.SignalBase + int(s), false
		}
	}
}

// runChild runs the command to its end and returns its exit code.
func runChild(c *config, log *slog.Logger, sigs <-chan os.Signal) int {
	code, err := wrapper.Run(wrapper.Config{
		Args:         c.command,
		Rewrite:      c.rewrite,
		ProcessGroup: c.processGroup,
		TermDelay:    c.termDelay,
		DrainQuiet:   c.drainQuiet,
		KillAfter:    c.killAfter,
		Logger:       log,
	}, sigs)
	var startErr *wrapper.StartError
	switch {
	case errors.As(err, &startErr):
		log.Error("cannot start the command", "event", "child_start_failed", "error", err.Error(),
			"exit_code", startErr.Code)
		return startErr.Code
	case err != nil:
		log.Error("supervision failed", "event", "internal_error", "error", err.Error())
		return exitcode.Internal
	}
	return code
}

// shutdownProxy POSTs the shutdown URLs; its outcome is logged, never fatal.
func shutdownProxy(c *config, log *slog.Logger) {
	if len(c.shutdownURLs) == 0 {
		log.Debug("no shutdown URL: nothing to POST", "event", "shutdown_skipped")
		return
	}
	_ = shutdown.Post(context.Background(), c.shutdownURLs, c.shutdownTimeout, log)
}
