// config.go: the settings a run is made of, and the checks that need more
// than one flag at a time. flags.go declares the flags and Parse fills them
// in, from the command line (commandline.go) and the environment (env.go);
// values.go parses the values; presets.go reads the proxy table; errors.go and
// suggest.go word what is wrong.

package config

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/proxies"
)

// Config is everything the command line and the environment say: the
// settings of a run, or of --install, which runs
// nothing and reads only its own; and how to log.
type Config struct {
	Run
	Install *Install // --install; nil when not chosen

	Verbose   bool
	Quiet     bool
	LogFormat string
	Warnings  []*hint.Error // what is ignored, to log at the start

	modes      modeFlags         // the modes' flags as given, until the mode is known
	given      map[string]given  // by long flag name: how each flag was set
	readyFrom  string            // the variable that set ReadyURLs, as scuttle
	disabledBy string            // the first variable that set Disabled
	fromPreset map[string]string // the preset that supplied each URL it did
	owner      map[string]string // the proxy of each URL that a preset or scuttle's Envoy supplied: the preset, or $ENVOY_ADMIN_API

	Help    bool
	Version bool
}

// Run is what a run of proxy-await does: the proxy it awaits, the command
// it runs and supervises, and the shutdown.
type Run struct {
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
	KeepProxy       bool // --keep-proxy-on-failure: no shutdown when the run exits non-zero
	Rewrite         map[syscall.Signal]syscall.Signal
	ProcessGroup    bool
	TermDelay       time.Duration
	DrainQuiet      time.Duration
	DrainPorts      []uint16 // --drain-ports: watch these instead of the listeners found below proxy-await
	ProbePort       int      // --probe-port: serve the pod's probes here; 0 does not
	AppProbe        string   // --app-probe: the app's own check, "http://127.0.0.1:PORT/PATH" or "tcp:PORT"
	KillAfter       time.Duration
	WaitAll         time.Duration
	ProxyLost       time.Duration // --proxy-lost: stop the command once a readiness URL has failed this long; 0 never
	ExitCodes       map[int]int   // --exit-code-map: FROM -> TO
	Disabled        bool          // a disable variable is set: skip the readiness wait
	Command         []string      // empty: only wait for the proxy
}

// ReadySource says where the readiness URLs came from, for the line that
// starts the wait: "--proxy linkerd (the default)", "--proxy istio",
// "--proxy istio (from $PROXY_AWAIT_PROXY)", "--ready-url",
// "$PROXY_AWAIT_READY_URL" or, as scuttle, "$ENVOY_ADMIN_API". A pod that
// waits forever on the default preset's port then says so on its first line.
func (c *Config) ReadySource() string {
	switch g, ok := c.given["ready-url"]; {
	case ok && g.env != "":
		return "$" + g.env
	case ok:
		return "--ready-url"
	case c.readyFrom != "":
		return c.readyFrom
	}
	s := "--proxy " + strings.Join(c.Proxies, ",")
	switch g, ok := c.given["proxy"]; {
	case !ok:
		s += " (the default)"
	case g.env != "":
		s += " (from $" + g.env + ")"
	}
	return s
}

// given is a flag's value as the user wrote it, and the variable it came
// from ("" for the command line), for messages that quote it.
type given struct {
	value string
	env   string
}

// crossCheck checks what single flags cannot check alone and fills in the preset.
func (c *Config) crossCheck() error {
	if err := c.usePresets(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff", c.Backoff}, {"probe-timeout", c.ProbeTimeout}, {"shutdown-timeout", c.ShutdownTimeout}} {
		if d.v <= 0 {
			return c.invalid(d.name, d.v.String(), "", "must be more than 0")
		}
	}
	if err := c.checkDrain(); err != nil {
		return err
	}
	if err := c.finishProbes(); err != nil {
		return err
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c.invalid("log-format", c.LogFormat, "", "choose text or json")
	}
	if mode, err := c.chooseMode(); mode || err != nil {
		return err
	}
	if err := c.checkCommand(); err != nil {
		return err
	}
	return c.checkProxyLost()
}

// usePresets checks --port against the presets and fills in the presets'
// URLs where no flag gives them.
func (c *Config) usePresets() error {
	if c.PortSet {
		if len(c.Proxies) > 1 {
			return c.invalid("port", strconv.Itoa(c.Port), "give each proxy's URLs with --ready-url and --shutdown-url instead",
				"it applies to one preset, not to "+strings.Join(c.Proxies, ","))
		}
		switch p := proxies.Lookup(c.Proxies[0]); {
		case p == nil:
			return c.invalid("port", strconv.Itoa(c.Port), "set the URLs with --ready-url and --shutdown-url instead",
				"the none preset has no URLs, so no port")
		case !p.AdminPort:
			// Not "no admin port": Istio's Envoy has one, 15000, which
			// is what a user who writes -p 15000 has in mind.
			return c.invalid("port", strconv.Itoa(c.Port), "for other ports, give --ready-url and --shutdown-url instead",
				fmt.Sprintf("the %s preset's ports are fixed (%s)", p.Preset, fixedPorts(p)))
		}
	} else if len(c.Proxies) == 1 {
		if p := proxies.Lookup(c.Proxies[0]); p != nil {
			c.Port = p.DefaultPort()
		}
	}
	readyGiven, shutdownGiven := c.ReadyURLs != nil, c.ShutdownURLs != nil
	c.fromPreset = map[string]string{}
	for _, name := range c.Proxies {
		p := proxies.Lookup(name)
		if p == nil {
			continue // none
		}
		port := 0
		if c.PortSet {
			port = c.Port
		}
		ready, shutdown := p.URLs(port)
		if !readyGiven {
			c.ReadyURLs = append(c.ReadyURLs, ready)
			c.fromPreset[ready], c.owner[ready] = name, name
		}
		if !shutdownGiven {
			c.ShutdownURLs = append(c.ShutdownURLs, shutdown)
			c.fromPreset[shutdown], c.owner[shutdown] = name, name
		}
	}
	return nil
}

// checkDrain checks --drain-quiet and --drain-ports against the flags they
// need.
func (c *Config) checkDrain() error {
	if c.DrainQuiet > 0 {
		if runtime.GOOS != "linux" { // the drain reads /proc and sock_diag: drain.Supported
			return c.invalid("drain-quiet", c.DrainQuiet.String(), "", "it reads the child's sockets from /proc and works on Linux only")
		}
		if c.TermDelay == 0 {
			return c.invalid("drain-quiet", c.DrainQuiet.String(), "set --term-delay to the longest the hold may last",
				"it needs --term-delay as its upper bound")
		}
	}
	if len(c.DrainPorts) > 0 && c.DrainQuiet == 0 {
		return c.invalid("drain-ports", portList{&c.DrainPorts}.String(), "set --drain-quiet to the quiet period, and --term-delay",
			"it only applies with --drain-quiet")
	}
	return nil
}

// checkCommand checks the flags that need a command, or -S.
func (c *Config) checkCommand() error {
	switch {
	case len(c.Command) == 0 && c.ProbePort != 0:
		return c.invalid("probe-port", strconv.Itoa(c.ProbePort), "put the command after --, or drop --probe-port to only wait for the proxy",
			"it serves the probes of a command, and there is none")
	case len(c.Command) == 0 && c.Shutdown:
		// Without COMMAND proxy-await only waits, for an init container or a
		// hook: the proxy it waited for must stay up. The message names the
		// flag, not a value "true" that the user of -S never wrote.
		flag := "--shutdown"
		if g := c.given["shutdown"]; g.env != "" {
			flag = "$" + g.env + " (--shutdown)"
		}
		return usagef("put the command after --, or drop --shutdown to only wait for the proxy",
			"%s without a command: there is no command to run before the shutdown", flag)
	case c.KeepProxy && !c.Shutdown:
		// Harmless for the proxy, but a Job that relies on it would hang
		// once its command succeeds: said at once, rather than found later.
		flag := "--keep-proxy-on-failure"
		if g := c.given["keep-proxy-on-failure"]; g.env != "" {
			flag = "$" + g.env + " (--keep-proxy-on-failure)"
		}
		return usagef("add -S to shut the proxy down once the command succeeds, or drop --keep-proxy-on-failure",
			"%s without --shutdown: without -S the proxy is never shut down, so a Job whose command succeeds never completes", flag)
	}
	return nil
}

// checkProxyLost checks --proxy-lost against what it watches: a command
// that runs, and a readiness URL that the wait found ready. Without them it
// would never fire, and a Job that relies on it would hang as before; with
// a disable variable there is no proxy, and it is ignored with a warning.
func (c *Config) checkProxyLost() error {
	if c.ProxyLost == 0 {
		return nil
	}
	d := c.ProxyLost.String()
	switch {
	case len(c.Command) == 0:
		return c.invalid("proxy-lost", d, "put the command after --, or drop --proxy-lost to only wait for the proxy",
			"it stops a command whose proxy is lost, and there is none")
	case len(c.ReadyURLs) == 0:
		return c.invalid("proxy-lost", d, "name the proxy with --proxy or give its --ready-url, or drop --proxy-lost",
			"there is no readiness URL to watch (--proxy none)")
	case c.Disabled:
		// The variable says the pod runs without its proxy: there is none
		// to lose, and a pod that sets it must still start.
		c.Warnings = append(c.Warnings, warnf("unset $"+c.disabledBy+" to watch the proxy",
			"--proxy-lost %s is ignored: $%s skips the readiness wait, so there is no proxy to watch", d, c.disabledBy))
		c.ProxyLost = 0
	}
	return nil
}

// finishProbes checks --probe-port and --app-probe together: the app's check
// is only made for the probes proxy-await serves, and a port the drain
// watches by number would count the kubelet's probes as traffic.
func (c *Config) finishProbes() error {
	if c.AppProbe != "" && c.ProbePort == 0 {
		return c.invalid("app-probe", c.AppProbe, "set --probe-port to the port the pod's probes point at",
			"it is the check behind --probe-port")
	}
	for _, p := range c.DrainPorts {
		if c.ProbePort != 0 && int(p) == c.ProbePort {
			return c.invalid("probe-port", strconv.Itoa(c.ProbePort), "serve the probes on a port of their own",
				"it is one of --drain-ports, so the kubelet's probes would be traffic")
		}
	}
	return nil
}
