// config.go: the settings a run is made of, and the checks that need more
// than one flag at a time. flags.go fills them in; values.go parses the
// values; presets.go knows the proxies.
//
// Every usage error reads the same way: one line that says what is wrong
// and quotes the flag or variable with the whole value as written
// (`invalid value "5q" for --timeout: not a duration ...`), then, when the
// fix is known, a hint that says what to do, lower case, with flags written
// as on the command line (`write --timeout-fatal=false ...`).

package config

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/drain"
)

// Config is everything the command line and the environment say.
type Config struct {
	Proxies         []string // presets, in the order given
	Port            int
	PortSet         bool // --port or its variable was given, even as 0
	ReadyURLs       []string
	ShutdownURLs    []string
	Backoff         time.Duration
	ProbeTimeout    time.Duration
	Timeout         time.Duration
	TimeoutFatal    bool
	Shutdown        bool
	ShutdownTimeout time.Duration
	ShutdownOnlyOK  bool // skip the shutdown when the command failed (scuttle's NEVER_KILL_ISTIO_ON_FAILURE)
	Rewrite         map[syscall.Signal]syscall.Signal
	ProcessGroup    bool
	TermDelay       time.Duration
	DrainQuiet      time.Duration
	KillAfter       time.Duration
	WaitAll         time.Duration
	ExitCodes       map[int]int // --exit-code-map: FROM -> TO
	Verbose         bool
	Quiet           bool
	LogFormat       string
	Disabled        bool     // a disable variable is set: skip the readiness wait
	Command         []string // empty: only wait for the proxy

	Check    bool               // --check: lint the manifests at Paths, run nothing
	Paths    []string           // --check's arguments
	Versions map[string]Version // --versions: the cluster's releases, by name
	Install  string             // --install: copy proxy-await into this directory, run nothing

	given map[string]given // by long flag name: how each flag was set

	Help    bool
	Version bool
}

// given is a flag's value as the user wrote it, and the variable it came
// from ("" for the command line), for messages that quote it.
type given struct {
	value string
	env   string
}

// Given says whether the flag called name was set, on the command line or
// by its variable, rather than left at its default.
func (c *Config) Given(name string) bool {
	_, ok := c.given[name]
	return ok
}

// UsageError is a bad command line or environment: exit 2 with msg, and a
// hint when one helps. format is the log format to print it in, as far as
// the command line and environment said before the error.
type UsageError struct {
	Msg    string
	Hint   string
	Format string
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(hint, format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// invalid is the usage error for flag's value, quoted as the user wrote it
// (current when it was not written but derived), naming the variable it came
// from if it did: `invalid value "0" for $PROXY_AWAIT_BACKOFF (--backoff): ...`.
func (c *Config) invalid(flag, current, hint, reason string) error {
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
func (c *Config) finish() error {
	if c.PortSet {
		if len(c.Proxies) > 1 {
			return c.invalid("port", strconv.Itoa(c.Port), "give each proxy's URLs with --ready-url and --shutdown-url instead",
				"it applies to one preset, not to "+strings.Join(c.Proxies, ","))
		}
		if presets[c.Proxies[0]].port == 0 {
			return c.invalid("port", strconv.Itoa(c.Port), "set the URLs with --ready-url and --shutdown-url instead",
				fmt.Sprintf("the %s preset has no admin port", c.Proxies[0]))
		}
	} else if len(c.Proxies) == 1 {
		c.Port = presets[c.Proxies[0]].port
	}
	readyGiven, shutdownGiven := c.ReadyURLs != nil, c.ShutdownURLs != nil
	for _, name := range c.Proxies {
		p := presets[name]
		port := p.port
		if c.PortSet {
			port = c.Port
		}
		if !readyGiven && p.ready != "" {
			c.ReadyURLs = append(c.ReadyURLs, presetURL(p.ready, port))
		}
		if !shutdownGiven && p.shutdown != "" {
			c.ShutdownURLs = append(c.ShutdownURLs, presetURL(p.shutdown, port))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff", c.Backoff}, {"probe-timeout", c.ProbeTimeout}, {"shutdown-timeout", c.ShutdownTimeout}} {
		if d.v <= 0 {
			return c.invalid(d.name, d.v.String(), "", "must be more than 0")
		}
	}
	if c.DrainQuiet > 0 {
		if !drain.Supported {
			return c.invalid("drain-quiet", c.DrainQuiet.String(), "", "it reads the child's sockets from /proc and works on Linux only")
		}
		if c.TermDelay == 0 {
			return c.invalid("drain-quiet", c.DrainQuiet.String(), "set --term-delay to the longest the hold may last",
				"it needs --term-delay as its upper bound")
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c.invalid("log-format", c.LogFormat, "", "choose text or json")
	}
	if mode, err := c.modes(); mode || err != nil {
		return err
	}
	switch {
	case len(c.Command) == 0 && c.Shutdown:
		// Without COMMAND proxy-await only waits, for an init container or a
		// hook: the proxy it waited for must stay up.
		return c.invalid("shutdown", "true", "put the command after --, or drop --shutdown to only wait for the proxy",
			"there is no command to run before the shutdown")
	case len(c.Command) > 0 && c.Command[0] == "":
		return usagef("give the command's name or path", "the command is an empty string")
	}
	return nil
}
