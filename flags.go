// flags.go: the flags, their environment variables, and how the command
// line and the environment become a config.

package main

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag.
const envPrefix = "PROXY_AWAIT_"

// disableVars skip the readiness wait when set to a non-empty value; the last
// two are linkerd-await's.
var disableVars = []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"}

// flagSet declares proxy-await's flags on a new FlagSet bound to c.
func flagSet(c *config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("proxy-await", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}

	c.backoff = 20 * time.Millisecond
	c.probeTimeout = time.Second
	c.shutdownTimeout = 5 * time.Second
	c.rewrite = map[syscall.Signal]syscall.Signal{}

	fs.StringVar(&c.proxy, "proxy", "linkerd", "preset for readiness and shutdown URLs: linkerd, istio, envoy or none")
	fs.IntVarP(&c.port, "port", "p", 0, "admin `port` of the linkerd (default 4191) and envoy (default 15000) presets")
	fs.Var(&urlList{urls: &c.readyURLs}, "ready-url", "readiness `URL`, repeatable, replacing the preset's; all must answer 2xx")
	fs.Var(&urlList{urls: &c.shutdownURLs, loopback: true}, "shutdown-url", "shutdown `URL` (loopback only), repeatable, replacing the preset's")
	fs.VarP((*duration)(&c.backoff), "backoff", "b", "longest interval between two readiness probes")
	fs.Var((*duration)(&c.probeTimeout), "probe-timeout", "timeout of one readiness probe")
	fs.VarP((*duration)(&c.timeout), "timeout", "t", "give up waiting for readiness after this long; 0 waits forever")
	fs.BoolVar(&c.timeoutFatal, "timeout-fatal", true, "on readiness timeout exit 69; with =false start the command anyway")
	fs.BoolVarP(&c.shutdown, "shutdown", "S", false, "POST the shutdown URLs when proxy-await exits (for Jobs and CronJobs)")
	fs.Var((*duration)(&c.shutdownTimeout), "shutdown-timeout", "total time for the shutdown POSTs, retries included")
	fs.VarP(rewriteTable(c.rewrite), "rewrite", "r", "deliver signal TO when FROM arrives (names or numbers), repeatable; TO=0 drops FROM")
	fs.BoolVarP(&c.processGroup, "process-group", "g", false, "start the command in its own process group and signal the whole group")
	fs.Var((*duration)(&c.termDelay), "term-delay", "hold a received SIGTERM this long while the command keeps serving")
	fs.Var((*duration)(&c.drainQuiet), "drain-quiet", "with --term-delay: deliver SIGTERM once the command's listening sockets have had no traffic for this long")
	fs.Var((*duration)(&c.killAfter), "kill-after", "SIGKILL the command this long after its termination signal; 0 never")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "debug logging")
	fs.BoolVarP(&c.quiet, "quiet", "q", false, "log errors only")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.version, "version", false, "print version, commit and Go version, then exit")
	fs.BoolVarP(&c.help, "help", "h", false, "print this help, then exit")

	fs.VisitAll(func(f *pflag.Flag) {
		if env := envName(f); env != "" {
			f.Usage += " [$" + env + "]"
		}
	})
	return fs
}

// envName is the variable that supplies a flag's default; "" for flags that
// are commands rather than settings.
func envName(f *pflag.Flag) string {
	if f.Name == "help" || f.Name == "version" {
		return ""
	}
	return envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// parseConfig reads args (without the program name) and the environment.
// The command line wins over the environment; a bad value anywhere is a
// *usageError naming it. name is the name proxy-await was invoked by: as
// "scuttle" it also reads scuttle's variables (see scuttle.go).
func parseConfig(name string, args []string, getenv func(string) (string, bool)) (*config, error) {
	c := &config{}
	fs := flagSet(c)
	if err := fs.Parse(args); err != nil {
		return nil, flagError(err)
	}
	if c.help || c.version {
		return c, nil
	}
	var envErr error
	fs.VisitAll(func(f *pflag.Flag) {
		name := envName(f)
		v, ok := getenv(name)
		if envErr != nil || name == "" || f.Changed || !ok || v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			envErr = usagef("", "invalid value %q for $%s (--%s): %v", v, name, f.Name, err)
		}
		f.Changed = true // set explicitly, if not on the command line
	})
	if envErr != nil {
		return nil, envErr
	}
	if name == "scuttle" {
		if err := applyScuttle(c, fs, getenv); err != nil {
			return nil, err
		}
	}
	if v, ok := getenv("LINKERD_AWAIT_VERBOSE"); ok && v != "" && !fs.Changed("verbose") {
		c.verbose = true
	}
	for _, name := range disableVars {
		if v, ok := getenv(name); ok && v != "" {
			c.disabled = true
		}
	}
	c.command = fs.Args()
	c.portSet = fs.Changed("port")
	return c, c.finish()
}

// flagError rewords pflag's errors as SPEC.md's one-line messages.
func flagError(err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		return usagef("", "invalid value %q for --%s: %v", invalid.GetValue(), invalid.GetFlag().Name, errors.Unwrap(err))
	}
	var missing *pflag.ValueRequiredError
	if errors.As(err, &missing) {
		return usagef("see --help", "flag --%s needs a value", missing.GetFlag().Name)
	}
	return usagef("see --help", "%v", err)
}
