package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/wrapper"
)

// Exit codes that are proxy-await's own; the child's come from wrapper.
const (
	exitUsage    = 2  // bad flags, as Go's flag package and most CLIs do
	exitTimeout  = 69 // EX_UNAVAILABLE (sysexits.h): the proxy never became ready
	exitInternal = 70 // EX_SOFTWARE (sysexits.h): a bug or a failing system call
)

// envPrefix starts the environment variable of every flag.
const envPrefix = "PROXY_AWAIT_"

// disableVars skip the readiness wait when set to a non-empty value; the last
// two are linkerd-await's.
var disableVars = []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"}

// preset is a proxy's admin endpoints.
type preset struct {
	port     int    // default admin port; 0 when --port does not apply
	ready    string // readiness URL, with %d for the port
	shutdown string // shutdown URL, with %d for the port
}

var presets = map[string]preset{
	"linkerd": {port: 4191, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/shutdown"},
	"istio":   {ready: "http://127.0.0.1:15021/healthz/ready", shutdown: "http://127.0.0.1:15020/quitquitquit"},
	"envoy":   {port: 15000, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/quitquitquit"},
	"none":    {},
}

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
	fs.Var((*duration)(&c.drainQuiet), "drain-quiet", "with --term-delay: deliver SIGTERM once no new connection has come for this long")
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
		if !wrapper.DrainSupported {
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

func presetURL(format string, port int) string {
	if strings.Contains(format, "%d") {
		return fmt.Sprintf(format, port)
	}
	return format
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

// duration is a flag value in Go syntax ("250ms", "1m30s") that also takes
// "d" for days and a bare integer for seconds, as linkerd-await does.
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }
func (d *duration) Type() string   { return "duration" }
func (d *duration) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

const day = 24 * time.Hour

func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if strings.HasPrefix(s, "-") {
		return 0, errors.New("must not be negative")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, errors.New("must not be negative")
		}
		if n > int64(1<<63-1)/int64(time.Second) {
			return 0, errors.New("duration out of range")
		}
		return time.Duration(n) * time.Second, nil
	}
	var days time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 || strings.ContainsAny(s[:i], "eEnN+-xXpP_") {
			return 0, fmt.Errorf("not a duration (use 250ms, 1m30s, 2d or seconds)")
		}
		if n*float64(day) >= 1<<63 { // float64(1<<63-1) rounds up to 1<<63

			return 0, errors.New("duration out of range")
		}
		days, rest = time.Duration(n*float64(day)), s[i+1:]
		if rest == "" {
			return days, nil
		}
	}
	if strings.HasPrefix(rest, "-") {
		return 0, errors.New("must not be negative")
	}
	v, err := time.ParseDuration(rest)
	if err != nil {
		return 0, fmt.Errorf("not a duration (use 250ms, 1m30s, 2d or seconds)")
	}
	if v > 1<<63-1-days {
		return 0, errors.New("duration out of range")
	}
	return days + v, nil
}

// urlList is a repeatable URL flag; a comma-separated value adds several.
// The first value set replaces the preset's list.
type urlList struct {
	urls     *[]string
	loopback bool // shutdown URLs must stay inside the pod
}

func (u *urlList) String() string { return strings.Join(*u.urls, ",") }
func (u *urlList) Type() string   { return "URL" }
func (u *urlList) Set(s string) error {
	for _, raw := range strings.Split(s, ",") {
		if err := checkURL(raw, u.loopback); err != nil {
			return err
		}
		*u.urls = append(*u.urls, raw)
	}
	return nil
}

// checkURL accepts http and https URLs with a host; with loopback, only a
// host inside the pod (127.0.0.0/8, ::1, localhost): a proxy takes shutdown
// requests from its own pod only, and nothing else should be told to stop.
func checkURL(raw string, loopback bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not an http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme must be http or https")
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("not a port number: %s", p)
		}
	}
	if loopback && !isLoopback(u.Hostname()) {
		return fmt.Errorf("host %s is not loopback: a proxy accepts shutdown only from inside the pod", u.Hostname())
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isLoopback(host string) bool {
	if isASCII(host) && strings.EqualFold(host, "localhost") {
		return true // ASCII only: "localhoſt" folds to "localhost" too
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// rewriteTable is the --rewrite flag: FROM:TO rules, repeatable, comma-separated.
type rewriteTable map[syscall.Signal]syscall.Signal

func (r rewriteTable) Type() string { return "FROM:TO" }
func (r rewriteTable) String() string {
	var rules []string
	for from, to := range r {
		rules = append(rules, fmt.Sprintf("%s:%d", wrapper.SignalName(from), int(to)))
	}
	slices.Sort(rules)
	return strings.Join(rules, ",")
}
func (r rewriteTable) Set(s string) error {
	for _, rule := range strings.Split(s, ",") {
		from, to, err := wrapper.ParseRewrite(rule)
		if err != nil {
			return err
		}
		r[from] = to
	}
	return nil
}
