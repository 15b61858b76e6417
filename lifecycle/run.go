package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/signals"
	"github.com/proxy-await/proxy-await/probes"
	"github.com/proxy-await/proxy-await/readiness"
	"github.com/proxy-await/proxy-await/shutdown"
	"github.com/proxy-await/proxy-await/wrapper"
)

func newLogger(c *config.Config) *slog.Logger {
	return logging.New(logging.Stderr, c.LogFormat, logging.Level(c.Verbose, c.Quiet))
}

// run is the lifecycle after configuration: await the proxy, run the child,
// shut the proxy down, and return the exit code. Without a command it only
// awaits the proxy.
func run(c *config.Config, log *slog.Logger) int {
	// The supervisor handles every signal from here on, and reaps. The log
	// writes to logging.Stderr, which knows the SIGPIPEs it raised.
	sup := wrapper.NewSupervisor(log, logging.Stderr)

	warn(c, log)
	probes, code, start := serveProbes(c, log)
	defer probes.Close()
	var proxy awaited
	if start {
		code, start, proxy = awaitProxy(c, log, sup)
	}
	if start && len(c.Command) > 0 { // no command: only wait
		probes.Started()
		code = superviseChild(c, log, sup, probes, proxy.ready)
	}
	code = mapExitCode(c, log, code)
	shutDown(c, log, code, proxy.answered)
	return code
}

// awaited is what the wait learnt of the proxy: the readiness URLs that
// answered at all, which tells the shutdown what a refused connection
// means, and those that answered 2xx, which --proxy-lost watches from the
// start.
type awaited struct {
	answered []string
	ready    []string
}

// awaitedOf is what res says of urls.
func awaitedOf(urls []string, res readiness.Result) awaited {
	a := awaited{answered: res.Answered}
	for _, u := range urls {
		if !slices.ContainsFunc(res.Pending, func(p readiness.Pending) bool { return p.URL == u }) {
			a.ready = append(a.ready, u)
		}
	}
	return a
}

// warn logs what the configuration ignored, once, now that the logger
// exists.
func warn(c *config.Config, log *slog.Logger) {
	for _, w := range c.Warnings {
		log.Warn(w.Error(), hint.Attrs([]any{"event", "config_warning"}, w.Hint)...)
	}
}

// mapExitCode applies --exit-code-map, last, to the code the run ends with.
func mapExitCode(c *config.Config, log *slog.Logger, code int) int {
	to, ok := c.ExitCodes[code]
	if !ok {
		return code
	}
	log.Info("exit code mapped", "event", "exit_code_mapped", "exit_code", code, "as", to)
	return to
}

// serveProbes serves the pod's probes on --probe-port from the start, so
// that the kubelet's startup probe is answered while the proxy is awaited.
// It says whether to go on and, if not, the exit code: a port that cannot be
// served would fail every probe of the pod.
func serveProbes(c *config.Config, log *slog.Logger) (srv *probes.Server, code int, start bool) {
	if c.ProbePort == 0 {
		return nil, 0, true
	}
	srv, err := probes.Listen(probes.Options{Port: uint16(c.ProbePort), App: c.AppProbe, Logger: log})
	if err != nil {
		log.Error("cannot serve the pod's probes", "event", "probes_failed", "probe_port", c.ProbePort,
			"error", err.Error(), "hint", "choose a --probe-port that nothing else in the pod listens on")
		return nil, exitcode.Internal, false
	}
	return srv, 0, true
}

// awaitProxy waits for readiness while sup handles the signals. It says
// whether to start the child and, if not, the exit code; and what it learnt
// of the proxy.
func awaitProxy(c *config.Config, log *slog.Logger, sup *wrapper.Supervisor) (code int, start bool, proxy awaited) {
	switch {
	case c.Disabled:
		log.Info("readiness wait disabled by the environment", "event", "readiness_skipped")
		return 0, true, awaited{}
	case len(c.ReadyURLs) == 0:
		log.Debug("no readiness URL: not waiting", "event", "readiness_skipped")
		return 0, true, awaited{}
	}
	ctx := context.Background()
	if c.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, c.Timeout)
		defer stop()
	}

	began := time.Now()
	log.Info("waiting for the proxy: "+c.ReadySource(), "event", "readiness_started", "url", c.ReadyURLs)
	var res readiness.Result
	var err error
	sig := sup.Await(ctx, func(ctx context.Context) {
		res, err = readiness.Await(ctx, readiness.Options{
			URLs:         c.ReadyURLs,
			MaxInterval:  c.Backoff,
			ProbeTimeout: c.ProbeTimeout,
			Timeout:      c.Timeout,
			Presets:      readyPresets(c),
			Logger:       log,
		})
	})
	proxy = awaitedOf(c.ReadyURLs, res)
	switch {
	case sig != 0:
		log.Info("termination signal while waiting for the proxy: not starting the command",
			"event", "readiness_interrupted", "signal", signals.Name(sig))
		return exitcode.SignalBase + int(sig), false, proxy
	case err == nil:
		log.Info("proxy is ready", "event", "readiness_ready", "elapsed", time.Since(began))
		return 0, true, proxy
	case !errors.Is(err, context.DeadlineExceeded):
		log.Error("readiness wait failed", "event", "internal_error", "error", err.Error())
		return exitcode.Internal, false, proxy
	}
	res.LogTimeout(log, c.Timeout, c.TimeoutFatal, len(c.Command) > 0)
	if c.TimeoutFatal {
		return exitcode.Unavailable, false, proxy
	}
	return 0, true, proxy
}

// superviseChild runs the command to its end and returns its exit code; with
// --proxy-lost, while the readiness URLs are watched, ready being those
// that the wait found ready.
func superviseChild(c *config.Config, log *slog.Logger, sup *wrapper.Supervisor, probes *probes.Server, ready []string) int {
	cfg := wrapper.Config{
		Args:         c.Command,
		Rewrite:      c.Rewrite,
		ProcessGroup: c.ProcessGroup,
		TermDelay:    c.TermDelay,
		DrainQuiet:   c.DrainQuiet,
		DrainPorts:   c.DrainPorts,
		KillAfter:    c.KillAfter,
		WaitAll:      c.WaitAll,
	}
	if probes != nil { // served on --probe-port
		cfg.Probes = probes
	}
	if watch := watchProxy(c, log, ready); watch != nil {
		defer watch.Stop() // the supervisor ends it; here too if the child never started
		cfg.Proxy = watch
	}
	code, err := sup.Supervise(cfg)
	var startErr *wrapper.StartError
	switch {
	case errors.As(err, &startErr):
		log.Error("cannot start the command", hint.Attrs([]any{"event", "child_start_failed", "error", err.Error(),
			"exit_code", startErr.Code}, hint.Of(err))...)
		return startErr.Code
	case err != nil:
		log.Error("supervision failed", "event", "internal_error", "error", err.Error())
		return exitcode.Internal
	}
	return code
}

// watchProxy starts, with --proxy-lost, the watch of every readiness URL,
// each from its first 2xx (ready have answered one); nil without.
func watchProxy(c *config.Config, log *slog.Logger, ready []string) *readiness.Watcher {
	if c.ProxyLost == 0 {
		return nil
	}
	return readiness.Watch(readiness.WatchOptions{URLs: c.ReadyURLs, Ready: ready, Lost: c.ProxyLost,
		ProbeTimeout: c.ProbeTimeout, Logger: log})
}

// shutDown POSTs the shutdown URLs with -S, unless --keep-proxy-on-failure
// keeps the proxy for the container's restart: the code is final before the
// shutdown, and with --keep-proxy-on-failure it decides, as the kubelet
// decides on a restart. The POSTs' outcome is logged, never fatal.
// answered are the readiness URLs that the proxy answered: with each
// shutdown URL's proxy and its readiness URLs, they tell a proxy that has
// exited already from one whose shutdown endpoint is missing.
func shutDown(c *config.Config, log *slog.Logger, code int, answered []string) {
	switch {
	case !c.Shutdown:
	case c.KeepProxy && code != 0:
		log.Info("the run failed: leaving the proxy running for the container's restart",
			"event", "shutdown_skipped", "exit_code", code)
	case len(c.ShutdownURLs) == 0:
		log.Debug("no shutdown URL: nothing to POST", "event", "shutdown_skipped")
	default:
		_ = shutdown.Post(context.Background(), shutdown.Options{
			Targets:  shutdown.Pair(c.ProxyURLs(c.ReadyURLs), c.ProxyURLs(c.ShutdownURLs)),
			Answered: answered,
			Timeout:  c.ShutdownTimeout,
			Logger:   log,
		})
	}
}

// readyPresets names the preset of each readiness URL that has one, for
// the hints that name a proxy's likely cause.
func readyPresets(c *config.Config) map[string]string {
	m := map[string]string{}
	for _, u := range c.ReadyURLs {
		if p := c.PresetOf(u); p != "" {
			m[u] = p
		}
	}
	return m
}
