// config.go: the settings a run is made of, and the checks that need more
// than one flag at a time. flags.go fills them in; values.go parses the
// values; presets.go knows the proxies.

package main

import (
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/drain"
)

// config is everything the command line and the environment say.
type config struct {
	proxy           string
	port            int
	portSet         bool // --port or its variable was given, even as 0
	readyURLs       []string
	shutdownURLs    []string
	backoff         time.Duration
	probeTimeout    time.Duration
	timeout         time.Duration
	timeoutFatal    bool
	shutdown        bool
	shutdownTimeout time.Duration
	shutdownOnlyOK  bool // skip the shutdown when the command failed (scuttle's NEVER_KILL_ISTIO_ON_FAILURE)
	rewrite         map[syscall.Signal]syscall.Signal
	processGroup    bool
	termDelay       time.Duration
	drainQuiet      time.Duration
	killAfter       time.Duration
	verbose         bool
	quiet           bool
	logFormat       string
	disabled        bool // a disable variable is set: skip the readiness wait
	command         []string

	help    bool
	version bool
}

// usageError is a bad command line or environment: exit 2 with msg, and a
// hint when one helps.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(hint, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), hint: hint}
}

// finish checks what single flags cannot check alone and fills in the preset.
func (c *config) finish() error {
	p, ok := presets[c.proxy]
	if !ok {
		return usagef("choose linkerd, istio, envoy or none", "invalid value %q for --proxy: unknown proxy", c.proxy)
	}
	if c.portSet {
		if p.port == 0 {
			return usagef("--port applies to the linkerd and envoy presets; use --ready-url and --shutdown-url",
				"invalid value %q for --port: the %s preset has no admin port", strconv.Itoa(c.port), c.proxy)
		}
		if c.port < 1 || c.port > 65535 {
			return usagef("", "invalid value %q for --port: not a port number (1-65535)", strconv.Itoa(c.port))
		}
	} else {
		c.port = p.port
	}
	if c.readyURLs == nil && p.ready != "" {
		c.readyURLs = []string{presetURL(p.ready, c.port)}
	}
	if c.shutdownURLs == nil && p.shutdown != "" {
		c.shutdownURLs = []string{presetURL(p.shutdown, c.port)}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff", c.backoff}, {"probe-timeout", c.probeTimeout}, {"shutdown-timeout", c.shutdownTimeout}} {
		if d.v <= 0 {
			return usagef("", "invalid value %q for --%s: must be more than 0", d.v.String(), d.name)
		}
	}
	if c.drainQuiet > 0 {
		if !drain.Supported {
			return usagef("", "invalid value %q for --drain-quiet: it reads the child's sockets from /proc and works on Linux only", c.drainQuiet.String())
		}
		if c.termDelay == 0 {
			return usagef("set --term-delay to the longest the hold may last",
				"invalid value %q for --drain-quiet: it needs --term-delay as its upper bound", c.drainQuiet.String())
		}
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return usagef("", "invalid value %q for --log-format: choose text or json", c.logFormat)
	}
	if len(c.command) == 0 {
		return usagef("usage: proxy-await [FLAGS] [--] COMMAND [ARG...]; see --help", "no command given")
	}
	if c.command[0] == "" {
		return usagef("", "the command is an empty string")
	}
	return nil
}
