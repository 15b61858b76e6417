// flags.go: the flags, and Parse: how the command line and the
// environment become a config.

package config

import (
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// flagSet declares proxy-await's flags on a new FlagSet bound to c.
func flagSet(c *Config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("proxy-await", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}

	c.Backoff = 20 * time.Millisecond
	c.ProbeTimeout = time.Second
	c.ShutdownTimeout = 5 * time.Second
	c.Rewrite = map[syscall.Signal]syscall.Signal{}
	c.ExitCodes = map[int]int{}

	c.Proxies = []string{defaultPreset()}
	fs.Var(&proxyList{names: &c.Proxies}, "proxy", "presets for readiness and shutdown URLs, comma-separated: "+orList(presetNames()))
	fs.VarP((*port)(&c.Port), "port", "p", portUsage())
	fs.Var(&urlList{urls: &c.ReadyURLs}, "ready-url", "readiness `URL`, repeatable, replacing the preset's; all must answer 2xx")
	fs.Var(&urlList{urls: &c.ShutdownURLs, loopback: true}, "shutdown-url", "shutdown `URL` (loopback only), repeatable, replacing the preset's")
	fs.VarP((*duration)(&c.Backoff), "backoff", "b", "longest interval between two readiness probes")
	fs.Var((*duration)(&c.ProbeTimeout), "probe-timeout", "timeout of one readiness probe")
	fs.VarP((*duration)(&c.Timeout), "timeout", "t", "give up waiting for readiness after this long; 0 waits forever")
	c.TimeoutFatal = true
	boolFlag(fs, &c.TimeoutFatal, "timeout-fatal", "", "on readiness timeout exit 69; with =false start the command anyway")
	boolFlag(fs, &c.Shutdown, "shutdown", "S", "POST the shutdown URLs when proxy-await exits (for Jobs and CronJobs)")
	fs.Var((*duration)(&c.ShutdownTimeout), "shutdown-timeout", "total time for the shutdown POSTs, retries included")
	boolFlag(fs, &c.KeepProxy, "keep-proxy-on-failure", "", "with -S: when the exit code is not 0, leave the proxy running for the container's restart (restartPolicy: OnFailure)")
	fs.VarP(&rewriteTable{to: c.Rewrite, rules: map[syscall.Signal]string{}}, "rewrite", "r", "deliver signal TO when FROM arrives (names or numbers), repeatable; TO=0 drops FROM")
	boolFlag(fs, &c.ProcessGroup, "process-group", "g", "start the command in its own process group and signal the whole group")
	fs.Var((*duration)(&c.TermDelay), "term-delay", "hold the stop signal (the first SIGTERM, SIGINT or SIGQUIT) this long while the command keeps serving")
	fs.Var((*duration)(&c.DrainQuiet), "drain-quiet", "with --term-delay: deliver the stop signal once the listening sockets below proxy-await have had no traffic for this long, or longer while new connections come further apart")
	fs.Var(portList{&c.DrainPorts}, "drain-ports", "with --drain-quiet: watch these local TCP ports instead, comma-separated")
	fs.Var((*probePort)(&c.ProbePort), "probe-port", "serve the pod's probes on `PORT` (/ready, /live, /startup), so that the drain never counts them as traffic")
	fs.Var((*appProbe)(&c.AppProbe), "app-probe", "with --probe-port: the app's own check, http://127.0.0.1:PORT/PATH (2xx is healthy) or tcp:PORT")
	fs.Var((*duration)(&c.KillAfter), "kill-after", "SIGKILL the command this long after its stop signal; 0 never")
	fs.Var((*duration)(&c.WaitAll), "wait-all", "when the command exits, SIGTERM what it left running and wait this long before SIGKILL; 0 does not wait")
	fs.Var((*duration)(&c.ProxyLost), "proxy-lost", "while the command runs, stop it and exit 69 once a proxy's readiness has failed this long; 0 never")
	fs.Var(&exitCodeMap{codes: c.ExitCodes, rules: map[int]string{}}, "exit-code-map", "exit with TO where the code would be FROM (0-255), repeatable, e.g. 143:0")
	for _, m := range movedFlags {
		f := fs.VarPF(&movedValue{m, &c.modes.moved}, m.name, "", "")
		if m.isBool {
			f.NoOptDefVal = "true"
		}
		f.Hidden = true
	}
	fs.Var((*dirValue)(&c.modes.install), "install", "copy proxy-await into `DIR` as DIR/proxy-await, then exit")
	boolFlag(fs, &c.Verbose, "verbose", "v", "debug logging")
	boolFlag(fs, &c.Quiet, "quiet", "q", "log errors only")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	boolFlag(fs, &c.Version, "version", "V", "print version, commit and Go version, then exit")
	boolFlag(fs, &c.Help, "help", "h", "print this help, then exit")

	fs.VisitAll(func(f *pflag.Flag) {
		if env := envName(f); env != "" {
			f.Usage += " [$" + env + "]"
		}
	})
	return fs
}

// boolFlag declares a boolean flag with *p as its default: given alone it
// is true, and it takes a value only after "=".
func boolFlag(fs *pflag.FlagSet, p *bool, name, short, usage string) {
	fs.VarPF((*boolean)(p), name, short, usage).NoOptDefVal = "true"
}

// Parse reads args (without the program name) and the environment.
// The command line wins over the environment; a bad value anywhere is a
// *UsageError naming it. name is the name proxy-await was invoked by: as
// "scuttle" it also reads scuttle's variables (see scuttle.go).
func Parse(name string, args []string, getenv func(string) (string, bool)) (*Config, error) {
	getenv = trimmed(getenv)
	c := &Config{given: map[string]given{}, owner: map[string]string{}}
	fs := flagSet(c)
	cl := &commandLine{given: c.given, logFormat: &c.LogFormat, fs: fs, args: args}
	fail := func(err error) (*Config, error) {
		var u *UsageError
		if errors.As(err, &u) {
			u.Format = cl.format(getenv)
		}
		return nil, err
	}
	if err := cl.parse(); err != nil {
		return fail(err)
	}
	if c.Help || c.Version {
		return c, nil
	}
	if err := c.modes.movedToTool(fs.Args()); err != nil {
		return fail(err)
	}
	if err := c.fromEnv(fs, getenv); err != nil {
		return fail(err)
	}
	c.Command = fs.Args()
	if name == "scuttle" {
		if err := applyScuttle(c, fs, getenv); err != nil {
			return fail(err)
		}
	}
	c.fromLinkerdAwait(fs, getenv)
	c.PortSet = fs.Changed("port")
	if err := c.crossCheck(); err != nil {
		return fail(err)
	}
	return c, nil
}
