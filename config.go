// config.go: the settings a run is made of, and the checks that need more
// than one flag at a time. flags.go fills them in; values.go parses the
// values; presets.go knows the proxies.
//
// Every usage error reads the same way: one line that says what is wrong
// and quotes the flag or variable with the whole value as written
// (`invalid value "5q" for --timeout: not a duration ...`), then, when the
// fix is known, a hint that says what to do, lower case, with flags written
// as on the command line (`write --timeout-fatal=false ...`).

package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/drain"
)

// config is everything the command line and the environment say.
type config struct {
	proxies         []string // presets, in the order given
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
	waitAll         time.Duration
	exitCodes       map[int]int // --exit-code-map: FROM -> TO
	verbose         bool
	quiet           bool
	logFormat       string
	disabled        bool     // a disable variable is set: skip the readiness wait
	command         []string // empty: only wait for the proxy

	given map[string]given // by long flag name: how each flag was set

	help    bool
	version bool
}

// given is a flag's value as the user wrote it, and the variable it came
// from ("" for the command line), for messages that quote it.
type given struct {
	value string
	env   string
}

// usageError is a bad command line or environment: exit 2 with msg, and a
// hint when one helps. format is the log format to print it in, as far as
// the command line and environment said before the error.
type usageError struct {
	msg    string
	hint   string
	format string
}

func (e *usageError) Error() string { return e.msg }

func usagef(hint, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), hint: hint}
}

// invalid is the usage error for flag's value, quoted as the user wrote it
// (current when it was not written but derived), naming the variable it came
// from if it did: `invalid value "0" for $PROXY_AWAIT_BACKOFF (--backoff): ...`.
func (c *config) invalid(flag, current, hint, reason string) error {
	g, ok := c.given[flag]
	if !ok {
		g.value = current
	}
	if g.env != "" {
		return usagef(hint, "invalid value %q for $%s (--%s): %s", g.value, g.env, flag, reason)
	}
	return usagef(hint, "invalid value %q for --%s: %s", g.value, flag, reason)
}

// finish checks what single flags cannot check alone and fills in the preset.
func (c *config) finish() error {
	if c.portSet {
		if len(c.proxies) > 1 {
			return c.invalid("port", strconv.Itoa(c.port), "give each proxy's URLs with --ready-url and --shutdown-url instead",
				"it applies to one preset, not to "+strings.Join(c.proxies, ","))
		}
		if presets[c.proxies[0]].port == 0 {
			return c.invalid("port", strconv.Itoa(c.port), "set the URLs with --ready-url and --shutdown-url instead",
				fmt.Sprintf("the %s preset has no admin port", c.proxies[0]))
		}
	} else if len(c.proxies) == 1 {
		c.port = presets[c.proxies[0]].port
	}
	readyGiven, shutdownGiven := c.readyURLs != nil, c.shutdownURLs != nil
	for _, name := range c.proxies {
		p := presets[name]
		port := p.port
		if c.portSet {
			port = c.port
		}
		if !readyGiven && p.ready != "" {
			c.readyURLs = append(c.readyURLs, presetURL(p.ready, port))
		}
		if !shutdownGiven && p.shutdown != "" {
			c.shutdownURLs = append(c.shutdownURLs, presetURL(p.shutdown, port))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff", c.backoff}, {"probe-timeout", c.probeTimeout}, {"shutdown-timeout", c.shutdownTimeout}} {
		if d.v <= 0 {
			return c.invalid(d.name, d.v.String(), "", "must be more than 0")
		}
	}
	if c.drainQuiet > 0 {
		if !drain.Supported {
			return c.invalid("drain-quiet", c.drainQuiet.String(), "", "it reads the child's sockets from /proc and works on Linux only")
		}
		if c.termDelay == 0 {
			return c.invalid("drain-quiet", c.drainQuiet.String(), "set --term-delay to the longest the hold may last",
				"it needs --term-delay as its upper bound")
		}
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return c.invalid("log-format", c.logFormat, "", "choose text or json")
	}
	switch {
	case len(c.command) == 0 && c.shutdown:
		// Without COMMAND proxy-await only waits, for an init container or a
		// hook: the proxy it waited for must stay up.
		return c.invalid("shutdown", "true", "put the command after --, or drop --shutdown to only wait for the proxy",
			"there is no command to run before the shutdown")
	case len(c.command) > 0 && c.command[0] == "":
		return usagef("give the command's name or path", "the command is an empty string")
	}
	return nil
}
