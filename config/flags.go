// flags.go: the flags, their environment variables, and how the command
// line and the environment become a config.

package config

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// EnvPrefix starts the environment variable of every flag.
const EnvPrefix = "PROXY_AWAIT_"

// disableVars skip the readiness wait when set to a non-empty value; the last
// two are linkerd-await's.
var disableVars = []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"}

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
	c.Versions = map[string]Version{}

	c.Proxies = []string{"linkerd"}
	fs.Var(&proxyList{names: &c.Proxies}, "proxy", "presets for readiness and shutdown URLs, comma-separated: linkerd, istio, envoy, cloudsql, dapr, consul or none")
	fs.VarP((*port)(&c.Port), "port", "p", "admin `port` of the linkerd (default 4191) and envoy (default 15000) presets")
	fs.Var(&urlList{urls: &c.ReadyURLs}, "ready-url", "readiness `URL`, repeatable, replacing the preset's; all must answer 2xx")
	fs.Var(&urlList{urls: &c.ShutdownURLs, loopback: true}, "shutdown-url", "shutdown `URL` (loopback only), repeatable, replacing the preset's")
	fs.VarP((*duration)(&c.Backoff), "backoff", "b", "longest interval between two readiness probes")
	fs.Var((*duration)(&c.ProbeTimeout), "probe-timeout", "timeout of one readiness probe")
	fs.VarP((*duration)(&c.Timeout), "timeout", "t", "give up waiting for readiness after this long; 0 waits forever")
	fs.BoolVar(&c.TimeoutFatal, "timeout-fatal", true, "on readiness timeout exit 69; with =false start the command anyway")
	fs.BoolVarP(&c.Shutdown, "shutdown", "S", false, "POST the shutdown URLs when proxy-await exits (for Jobs and CronJobs)")
	fs.Var((*duration)(&c.ShutdownTimeout), "shutdown-timeout", "total time for the shutdown POSTs, retries included")
	fs.VarP(rewriteTable(c.Rewrite), "rewrite", "r", "deliver signal TO when FROM arrives (names or numbers), repeatable; TO=0 drops FROM")
	fs.BoolVarP(&c.ProcessGroup, "process-group", "g", false, "start the command in its own process group and signal the whole group")
	fs.Var((*duration)(&c.TermDelay), "term-delay", "hold a received SIGTERM this long while the command keeps serving")
	fs.Var((*duration)(&c.DrainQuiet), "drain-quiet", "with --term-delay: deliver SIGTERM once the command's listening sockets have had no traffic for this long")
	fs.Var((*duration)(&c.KillAfter), "kill-after", "SIGKILL the command this long after its termination signal; 0 never")
	fs.Var((*duration)(&c.WaitAll), "wait-all", "when the command exits, SIGTERM what it left running and wait this long before SIGKILL; 0 does not wait")
	fs.Var(exitCodeMap(c.ExitCodes), "exit-code-map", "exit with TO where the code would be FROM (0-255), repeatable, e.g. 143:0")
	fs.BoolVar(&c.Check, "check", false, "check the Kubernetes manifests in the files and directories given as arguments (- for stdin), then exit")
	fs.Var(versionList(c.Versions), "versions", "with --check: the cluster's releases, e.g. linkerd=2.20,istio=1.27,kubernetes=1.33")
	fs.Var((*dirValue)(&c.Install), "install", "copy proxy-await into `DIR` as DIR/proxy-await, then exit")
	fs.BoolVarP(&c.Verbose, "verbose", "v", false, "debug logging")
	fs.BoolVarP(&c.Quiet, "quiet", "q", false, "log errors only")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.BoolVarP(&c.Version, "version", "V", false, "print version, commit and Go version, then exit")
	fs.BoolVarP(&c.Help, "help", "h", false, "print this help, then exit")

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
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// Parse reads args (without the program name) and the environment.
// The command line wins over the environment; a bad value anywhere is a
// *usageError naming it. name is the name proxy-await was invoked by: as
// "scuttle" it also reads scuttle's variables (see scuttle.go).
func Parse(name string, args []string, getenv func(string) (string, bool)) (*Config, error) {
	c := &Config{given: map[string]given{}}
	fs := flagSet(c)
	scan := scanArgs(fs, args)
	fail := func(err error) (*Config, error) {
		var u *UsageError
		if errors.As(err, &u) {
			u.Format = knownFormat(scan, getenv)
		}
		return nil, err
	}
	if scan.err != nil {
		return fail(scan.err)
	}
	if err := fs.Parse(args); err != nil {
		return fail(flagError(err))
	}
	if c.Help || c.Version {
		return c, nil
	}
	for flag, value := range scan.values {
		c.given[flag] = given{value: value}
	}
	var envErr error
	fs.VisitAll(func(f *pflag.Flag) {
		name := envName(f)
		v, ok := getenv(name)
		if envErr != nil || name == "" || f.Changed || !ok || v == "" {
			return
		}
		if err := setFromEnv(f, v); err != nil {
			envErr = usagef(hintFor(err, f.Name), "invalid value %q for $%s (--%s): %v", v, name, f.Name, err)
		}
		f.Changed = true // set explicitly, if not on the command line
		c.given[f.Name] = given{value: v, env: name}
	})
	if envErr != nil {
		return fail(envErr)
	}
	c.Command = fs.Args()
	if name == "scuttle" {
		if err := applyScuttle(c, fs, getenv); err != nil {
			return fail(err)
		}
	}
	if v, ok := getenv("LINKERD_AWAIT_VERBOSE"); ok && v != "" && !fs.Changed("verbose") {
		c.Verbose = !falsy(v)
	}
	for _, name := range disableVars {
		if v, ok := getenv(name); ok && v != "" {
			c.Disabled = true
		}
	}
	c.PortSet = fs.Changed("port")
	if err := c.finish(); err != nil {
		return fail(err)
	}
	return c, nil
}

// setFromEnv sets f from its environment variable, where a repeatable flag
// always takes a comma-separated list.
func setFromEnv(f *pflag.Flag, v string) error {
	if l, ok := f.Value.(listValue); ok {
		return addItems(l, v, true)
	}
	return f.Value.Set(v)
}

// falsy reads LINKERD_AWAIT_VERBOSE as linkerd-await does: these words turn
// it off, any other non-empty value on.
func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "f", "false", "n", "no", "off":
		return true
	}
	return false
}

// knownFormat is the log format a usage error is printed in: --log-format's
// value if the command line gives one, else $PROXY_AWAIT_LOG_FORMAT's; a value
// that is not text or json (the error may be about it) means text.
func knownFormat(scan scanned, getenv func(string) (string, bool)) string {
	v, given := scan.values["log-format"]
	if !given {
		v, _ = getenv(EnvPrefix + "LOG_FORMAT")
	}
	if v == "json" {
		return "json"
	}
	return "text"
}

// scanned is what scanArgs found on the command line.
type scanned struct {
	values map[string]string // each flag's value as written, by long name
	err    error             // the first mistake found
}

// scanArgs walks the flags at the start of args as pflag will parse them,
// to catch what pflag would accept although no one means it: the word
// true or false after a boolean flag, which pflag takes as COMMAND
// ("--timeout-fatal false" would run the command false), and "--" or a flag
// after a flag that needs a value, which pflag takes as its value. It also
// names the known flag closest to an unknown one. On the way it notes each
// flag's value as written, for messages that quote it.
func scanArgs(fs *pflag.FlagSet, args []string) scanned {
	s := scanned{values: map[string]string{}}
	short := map[byte]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Shorthand != "" {
			short[f.Shorthand[0]] = f
		}
	})
	isFlag := func(a string) bool {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			return name == "" || fs.Lookup(name) != nil
		}
		return len(a) > 1 && a[0] == '-' && short[a[1]] != nil
	}
	// valueOf takes f's value from the next argument.
	valueOf := func(f *pflag.Flag, i *int) {
		if *i+1 >= len(args) || isFlag(args[*i+1]) {
			s.err = usagef(fmt.Sprintf("write --%s=%s", f.Name, example(f)), "--%s needs a value", f.Name)
			return
		}
		*i++
		s.values[f.Name] = args[*i]
	}
	// isBool says whether f is a boolean flag and, if it is, notes its use
	// and, when f ends its argument (last), checks the word after it.
	isBool := func(f *pflag.Flag, last bool, i int) bool {
		if f.Value.Type() != "bool" {
			return false
		}
		s.values[f.Name] = f.NoOptDefVal
		if last && i+1 < len(args) {
			if w := args[i+1]; strings.EqualFold(w, "true") || strings.EqualFold(w, "false") {
				s.err = usagef(fmt.Sprintf("write --%s=%s, or put -- before a command named %s", f.Name, strings.ToLower(w), w),
					"invalid value %q for --%s: a boolean flag takes its value only after =", w, f.Name)
			}
		}
		return true
	}
	for i := 0; i < len(args) && s.err == nil; i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			break // COMMAND starts here, or after "--"
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, value, hasValue := strings.Cut(long, "=")
			f := fs.Lookup(name)
			switch {
			case name == "" || name[0] == '-':
				return s // bad syntax, which pflag reports
			case f == nil:
				s.err = unknownFlag(fs, "--"+name, name)
			case hasValue:
				s.values[f.Name] = value
			case isBool(f, true, i):
			default:
				valueOf(f, &i)
			}
			continue
		}
		cluster := a[1:]
		if strings.HasPrefix(cluster, "test.") {
			continue // pflag leaves go test's flags alone
		}
		if name, _, _ := strings.Cut(cluster, "="); len(name) > 1 && fs.Lookup(name) != nil {
			// "-timeout=5s" would read as -t with the value "imeout=5s"
			s.err = usagef("did you mean --"+name+"?", "unknown flag -%s", name)
			break
		}
		for j := 0; j < len(cluster) && s.err == nil; j++ {
			f, rest := short[cluster[j]], cluster[j+1:]
			switch {
			case f == nil:
				s.err = unknownShorthand(fs, a, cluster[j])
			case len(rest) > 1 && rest[0] == '=': // -f=value
				s.values[f.Name] = rest[1:]
				j = len(cluster)
			case isBool(f, rest == "", i):
			case rest != "": // -fvalue
				s.values[f.Name] = rest
				j = len(cluster)
			default:
				valueOf(f, &i)
			}
		}
	}
	return s
}

// example is a value to show in the hint for a flag given without one.
func example(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "duration":
		return "30s"
	case "port":
		return "4191"
	case "URL":
		return "http://127.0.0.1:4191/ready"
	case "FROM:TO":
		return "TERM:USR1"
	}
	if f.DefValue != "" {
		return f.DefValue
	}
	return "VALUE"
}

// unknownFlag is the error for --name, with the closest known flag.
func unknownFlag(fs *pflag.FlagSet, written, name string) error {
	hint := "see --help for the flags"
	if near := closestFlag(fs, name); near != "" {
		hint = "did you mean --" + near + "?"
	}
	return usagef(hint, "unknown flag %s", shown(written))
}

// unknownShorthand is the error for the letter c in the argument a: a long
// flag's name written after one dash ("-shutdown") gets the long flag.
func unknownShorthand(fs *pflag.FlagSet, a string, c byte) error {
	hint := "see --help for the flags"
	name, _, _ := strings.Cut(a[1:], "=")
	if near := closestFlag(fs, name); near != "" && len(name) > 1 {
		hint = "did you mean --" + near + "?"
	}
	if len(a) == 2 {
		return usagef(hint, "unknown flag %s", shown(a))
	}
	return usagef(hint, "unknown flag %s in %s", shown("-"+string(rune(c))), shown(a))
}

// closestFlag is the long flag name nearest to name in edit distance
// (ignoring case), or one that name begins; "" if none is near enough to be
// what was meant.
func closestFlag(fs *pflag.FlagSet, name string) string {
	name = strings.ToLower(name)
	best, bestDist := "", 0
	fs.VisitAll(func(f *pflag.Flag) {
		d := levenshtein(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = min(d, 1) // "--ready" for --ready-url
		}
		if best == "" || d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	if bestDist > max(2, len(name)/3) {
		return ""
	}
	return best
}

// levenshtein is the number of single-byte insertions, deletions and
// substitutions that turn a into b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// shown is s as a message shows it: quoted if it has a control character or
// anything but ASCII, so that a message stays one line of plain text.
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return strconv.Quote(s)
		}
	}
	return s
}

// flagError turns an error from pflag into a usage error whose message
// starts with what is wrong and names the flag: `invalid value "5q" for
// --timeout: ...`, `--timeout needs a value`. scanArgs has caught unknown
// flags and missing values already; this is the fallback for both.
func flagError(err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		return usagef(hintFor(err, invalid.GetFlag().Name), "invalid value %q for --%s: %v", invalid.GetValue(), invalid.GetFlag().Name, errors.Unwrap(err))
	}
	var missing *pflag.ValueRequiredError
	if errors.As(err, &missing) {
		return usagef(fmt.Sprintf("write --%s=%s", missing.GetFlag().Name, example(missing.GetFlag())), "--%s needs a value", missing.GetFlag().Name)
	}
	return usagef("see --help for the flags", "%s", shown(err.Error()))
}

// hintFor is the hint a value's parser attached to its error, if any, with
// FLAG standing for the flag's name.
func hintFor(err error, flag string) string {
	var h *hinted
	if errors.As(err, &h) {
		return strings.ReplaceAll(h.hint, "FLAG", "--"+flag)
	}
	return ""
}
