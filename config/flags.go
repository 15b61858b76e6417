// flags.go: the flags, their environment variables, and how the command
// line and the environment become a config.

package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/editdistance"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
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
	c.TimeoutFatal = true
	boolFlag(fs, &c.TimeoutFatal, "timeout-fatal", "", "on readiness timeout exit 69; with =false start the command anyway")
	boolFlag(fs, &c.Shutdown, "shutdown", "S", "POST the shutdown URLs when proxy-await exits (for Jobs and CronJobs)")
	fs.Var((*duration)(&c.ShutdownTimeout), "shutdown-timeout", "total time for the shutdown POSTs, retries included")
	boolFlag(fs, &c.KeepProxy, "keep-proxy-on-failure", "", "with -S: when the exit code is not 0, leave the proxy running for the container's restart (restartPolicy: OnFailure)")
	fs.VarP(&rewriteTable{to: c.Rewrite, rules: map[syscall.Signal]string{}}, "rewrite", "r", "deliver signal TO when FROM arrives (names or numbers), repeatable; TO=0 drops FROM")
	boolFlag(fs, &c.ProcessGroup, "process-group", "g", "start the command in its own process group and signal the whole group")
	fs.Var((*duration)(&c.TermDelay), "term-delay", "hold the stop signal (the first SIGTERM, SIGINT or SIGQUIT) this long while the command keeps serving")
	fs.Var((*duration)(&c.DrainQuiet), "drain-quiet", "with --term-delay: deliver the stop signal once the listening sockets below proxy-await have had no traffic for this long")
	fs.Var(portList{&c.DrainPorts}, "drain-ports", "with --drain-quiet: watch these local TCP ports instead, comma-separated")
	fs.Var((*probePort)(&c.ProbePort), "probe-port", "serve the pod's probes on `PORT` (/ready, /live, /startup), so that the drain never counts them as traffic")
	fs.Var((*appProbe)(&c.AppProbe), "app-probe", "with --probe-port: the app's own check, http://127.0.0.1:PORT/PATH (2xx is healthy) or tcp:PORT")
	fs.Var((*duration)(&c.KillAfter), "kill-after", "SIGKILL the command this long after its stop signal; 0 never")
	fs.Var((*duration)(&c.WaitAll), "wait-all", "when the command exits, SIGTERM what it left running and wait this long before SIGKILL; 0 does not wait")
	fs.Var(&exitCodeMap{codes: c.ExitCodes, rules: map[int]string{}}, "exit-code-map", "exit with TO where the code would be FROM (0-255), repeatable, e.g. 143:0")
	boolFlag(fs, &c.Check, "check", "", "check the Kubernetes manifests in the files and directories given as arguments (- for stdin), then exit")
	fs.Var(versionList(c.Versions), "versions", "with --check: the cluster's releases, e.g. linkerd=2.20,istio=1.27,kubernetes=1.33")
	fs.Var((*dirValue)(&c.Install), "install", "copy proxy-await into `DIR` as DIR/proxy-await, then exit")
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

// envName is the variable that supplies a flag's default; "" for the flags
// read from the command line only (commandLineOnly).
func envName(f *pflag.Flag) string {
	if commandLineOnly(f.Name) {
		return ""
	}
	return envOf(f.Name)
}

// envOf is the variable named after the flag called name.
func envOf(name string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// commandLineOnly says whether the flag called name is read from the
// command line only: the commands (--help, --version) and the modes
// (--check, --install and --versions, which only --check takes). A variable
// left in a pod's environment must never turn the application's start into
// a help text, a check of its own words or a copy.
func commandLineOnly(name string) bool {
	switch name {
	case "help", "version", "check", "install", "versions":
		return true
	}
	return false
}

// ParseEnviron is Parse with the environment as os.Environ gives it. It
// also warns of each variable that starts with PROXY_AWAIT_ but is none that
// proxy-await reads: a misspelt PROXY_AWAIT_TERMDELAY would otherwise lose
// its setting without a word, and a PROXY_AWAIT_CHECK would seem to be
// obeyed.
func ParseEnviron(name string, args, environ []string) (*Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars[k]; !dup { // the first wins, as with os.Getenv
			vars[k] = v
		}
	}
	c, err := Parse(name, args, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil || c.Help || c.Version {
		return c, err
	}
	c.Warnings = append(unknownVariables(vars), c.Warnings...)
	return c, nil
}

// unknownVariables warns of each variable of vars that starts with
// PROXY_AWAIT_ and is not one proxy-await reads: with the closest one that it
// reads, or, for a flag read from the command line only, with that flag
// when the variable is not empty (empty, it is as good as unset).
func unknownVariables(vars map[string]string) []*hint.Error {
	fs := flagSet(&Config{})
	known := map[string]bool{}
	commandLine := map[string]string{} // variable -> flag, for the flags without one
	var candidates []string            // as flag names: "term-delay" for PROXY_AWAIT_TERM_DELAY
	fs.VisitAll(func(f *pflag.Flag) {
		if env := envName(f); env != "" {
			known[env] = true
			candidates = append(candidates, f.Name)
		} else {
			commandLine[envOf(f.Name)] = f.Name
		}
	})
	for _, v := range disableVars {
		if name, ok := strings.CutPrefix(v, EnvPrefix); ok {
			known[v] = true
			candidates = append(candidates, strings.ToLower(name))
		}
	}
	var out []*hint.Error
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		rest, ok := strings.CutPrefix(name, EnvPrefix)
		if !ok || known[name] {
			continue
		}
		if flag, ok := commandLine[name]; ok {
			if strings.TrimSpace(vars[name]) != "" {
				out = append(out, warnf("unset it, and give --"+flag+" on the command line where it is meant",
					"variable $%s: ignored, --%s is read from the command line only", name, flag))
			}
			continue
		}
		hint := "see --help for the variables proxy-await reads"
		if near := closest(strings.ToLower(strings.ReplaceAll(rest, "_", "-")), candidates); near != "" {
			hint = "did you mean $" + EnvPrefix + strings.ToUpper(strings.ReplaceAll(near, "-", "_")) + "?"
		}
		out = append(out, warnf(hint, "unknown variable $%s: ignored", shown(redact.Word(name))))
	}
	return out
}

// Parse reads args (without the program name) and the environment.
// The command line wins over the environment; a bad value anywhere is a
// *usageError naming it. name is the name proxy-await was invoked by: as
// "scuttle" it also reads scuttle's variables (see scuttle.go).
func Parse(name string, args []string, getenv func(string) (string, bool)) (*Config, error) {
	getenv = trimmed(getenv)
	c := &Config{given: map[string]given{}, owner: map[string]string{}}
	fs := flagSet(c)
	scan := scanArgs(fs, args)
	fail := func(err error) (*Config, error) {
		var u *UsageError
		if errors.As(err, &u) {
			u.Format = knownFormat(args, scan, getenv)
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
		c.given[flag] = given{value: shownValue(fs.Lookup(flag), value, false)}
	}
	var envErr error
	fs.VisitAll(func(f *pflag.Flag) {
		name := envName(f)
		v, ok := getenv(name)
		if envErr != nil || name == "" || f.Changed || !ok || v == "" {
			return
		}
		if err := setFromEnv(f, v); err != nil {
			shown := shownValue(f, v, true)
			var list *listError
			if errors.As(err, &list) {
				shown = list.shown
			}
			envErr = usagef(hintFor(err, f.Name), "invalid value %q for $%s (--%s): %v", shown, name, f.Name, err)
		}
		f.Changed = true // set explicitly, if not on the command line
		c.given[f.Name] = given{value: shownValue(f, v, true), env: name}
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
	if err := c.crossCheck(); err != nil {
		return fail(err)
	}
	return c, nil
}

// trimmed is getenv with every value trimmed of the white space around it:
// a YAML block scalar ends a value with a newline, and a space after "=" is
// easy to miss.
func trimmed(getenv func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := getenv(name)
		return strings.TrimSpace(v), ok
	}
}

// setFromEnv sets f from its environment variable, where a repeatable flag
// always takes a comma-separated list.
func setFromEnv(f *pflag.Flag, v string) error {
	switch l := f.Value.(type) {
	case *urlList:
		return l.addList(v)
	case listValue:
		return addItems(l, v, true)
	}
	return f.Value.Set(v)
}

// shownValue is v, a value of f as written (a list, from the environment),
// as a message may quote it: a URL flag's value without its password
// (package redact), and any other flag's value too, which may be a URL
// given to the wrong flag.
func shownValue(f *pflag.Flag, v string, list bool) string {
	if _, ok := f.Value.(*appProbe); ok {
		return redact.URL(v)
	}
	switch _, ok := f.Value.(*urlList); {
	case ok && list:
		return redact.URLs(urlItems(v))
	case ok:
		return redact.URL(v)
	}
	return redact.Word(v)
}

// falsy reads LINKERD_AWAIT_VERBOSE as linkerd-await does: these words turn
// it off, any other non-empty value on.
func falsy(v string) bool {
	switch strings.ToLower(v) {
	case "0", "f", "false", "n", "no", "off":
		return true
	}
	return false
}

// knownFormat is the log format a usage error is printed in: --log-format's
// value if the command line gives one, else $PROXY_AWAIT_LOG_FORMAT's; a value
// that is not text or json (the error may be about it) means text. When the
// reading of the command line stopped at a mistake, a --log-format after the
// mistake counts too: where the flags end is then unknown, and a log
// pipeline that reads JSON gets JSON whatever the order of the flags.
func knownFormat(args []string, scan scanned, getenv func(string) (string, bool)) string {
	v, given := scan.values["log-format"]
	if scan.err != nil {
		for i := 0; i < len(args) && args[i] != "--"; i++ {
			if value, ok := strings.CutPrefix(args[i], "--log-format="); ok {
				v, given = value, true
			} else if args[i] == "--log-format" && i+1 < len(args) {
				v, given = args[i+1], true
			}
		}
	}
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
				s.err = unknownFlag(fs, a, name)
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
		if name, _, hasValue := strings.Cut(cluster, "="); len(name) > 1 && (fs.Lookup(name) != nil || hasValue && longName(name, short)) {
			// "-timeout=5s" would read as -t with the value "imeout=5s",
			// and "-ready_url=URL" as -r with "eady_url=URL"
			s.err = unknownFlag(fs, "-"+name, name)
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

// exampler is a flag value that knows a value to show in a hint: one that
// the flag takes and that means what the flag is for.
type exampler interface{ example() string }

// example is a value to show in the hint for a flag given without one: the
// value type's example, else the flag's default.
func example(f *pflag.Flag) string {
	if e, ok := f.Value.(exampler); ok {
		return e.example()
	}
	return f.DefValue
}

// unknownFlag is the error for the argument a, a flag called name, with the
// closest known flag. It quotes a up to its "=" when name can be a flag's
// (the value may be a URL with a password), else a as redact shows a word.
func unknownFlag(fs *pflag.FlagSet, a, name string) error {
	hint := "see --help for the flags"
	if near := closestFlag(fs, name); near != "" {
		hint = "did you mean --" + near + "?"
	}
	written, _, _ := strings.Cut(a, "=")
	if !isName(name) {
		written = redact.Word(a)
	}
	return usagef(hint, "unknown flag %s", shown(written))
}

// longName says whether name, what follows the one dash of an argument
// "-name=VALUE", is a long flag's name written after one dash: a name, and
// not short flags that take the value, booleans but for the last letter
// ("-gS=false", "-vt=5s").
func longName(name string, short map[byte]*pflag.Flag) bool {
	if !isName(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		f := short[name[i]]
		if f == nil || i < len(name)-1 && f.Value.Type() != "bool" {
			return true
		}
	}
	return false
}

// isName says whether s can be a flag's name: letters, digits, "-", "_"
// and ".". It holds no ":", so no password of a URL starts in it.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return s != ""
}

// unknownShorthand is the error for the letter c in the argument a: a long
// flag's name written after one dash ("-shutdown") gets the long flag. It
// quotes a as redact shows a word: "-Shttp://u:secret@..." holds a URL.
func unknownShorthand(fs *pflag.FlagSet, a string, c byte) error {
	hint := "see --help for the flags"
	name, _, _ := strings.Cut(a[1:], "=")
	if near := closestFlag(fs, name); near != "" && len(name) > 1 {
		hint = "did you mean --" + near + "?"
	}
	if len(a) == 2 {
		return usagef(hint, "unknown flag %s", shown(a))
	}
	return usagef(hint, "unknown flag %s in %s", shown("-"+string(rune(c))), shown(redact.Word(a)))
}

// closestFlag is the long flag name nearest to name (see closest).
func closestFlag(fs *pflag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return closest(name, names)
}

// closest is the candidate nearest to name in edit distance (ignoring
// case), or one that name begins; "" if none is near enough to be what was
// meant.
func closest(name string, candidates []string) string {
	name = strings.ToLower(name)
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editdistance.Of(name, c)
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			d = min(d, 1) // "--ready" for --ready-url
		}
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist > max(2, len(name)/3) {
		return ""
	}
	return best
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
		f := invalid.GetFlag()
		return usagef(hintFor(err, f.Name), "invalid value %q for --%s: %v", shownValue(f, invalid.GetValue(), false), f.Name, errors.Unwrap(err))
	}
	var missing *pflag.ValueRequiredError
	if errors.As(err, &missing) {
		return usagef(fmt.Sprintf("write --%s=%s", missing.GetFlag().Name, example(missing.GetFlag())), "--%s needs a value", missing.GetFlag().Name)
	}
	var syntax *pflag.InvalidSyntaxError
	if errors.As(err, &syntax) {
		// Not past its "=": the value may be a URL with a password.
		a := syntax.GetSpecifiedFlag()
		name, _, _ := strings.Cut(a, "=")
		if !isName(strings.TrimLeft(name, "-")) {
			name = redact.Word(a)
		}
		return usagef("see --help for the flags", "bad flag syntax: %s", shown(name))
	}
	// pflag's other errors quote the argument whole.
	words := strings.Fields(err.Error())
	for i, w := range words {
		words[i] = redact.Word(w)
	}
	return usagef("see --help for the flags", "%s", shown(strings.Join(words, " ")))
}

// hintFor is the hint a value's parser attached to its error, if any, with
// FLAG standing for the flag's name.
func hintFor(err error, flag string) string {
	return strings.ReplaceAll(hint.Of(err), "FLAG", "--"+flag)
}
