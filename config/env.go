// env.go: the environment variables: each flag's, linkerd-await's, and
// warnings for the ones proxy-await does not read.

package config

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
)

// EnvPrefix starts the environment variable of every flag.
const EnvPrefix = "PROXY_AWAIT_"

// disableVars skip the readiness wait when set to a non-empty value; the last
// two are linkerd-await's.
var disableVars = []string{"PROXY_AWAIT_DISABLED", "LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED"}

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
// command line only: the commands (--help, --version), --install, and the
// flags that are proxy-awaitctl's now. A variable left in a pod's
// environment must never turn the application's start into a help text, a
// copy, or a usage error.
func commandLineOnly(name string) bool {
	switch name {
	case "help", "version", "check", "inject", "image", "container", "policy", "install", "versions":
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
			switch i := slices.IndexFunc(movedFlags, func(m movedFlag) bool { return m.name == flag }); {
			case strings.TrimSpace(vars[name]) == "":
			case i >= 0:
				out = append(out, warnf("unset it: "+ToolName+" "+movedFlags[i].sub+" reads manifests, on a laptop or in CI",
					"variable $%s: ignored, --%s is %s's, and proxy-await reads no manifests", name, flag, ToolName))
			default:
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

// falsy reads LINKERD_AWAIT_VERBOSE as linkerd-await does: these words turn
// it off, any other non-empty value on.
func falsy(v string) bool {
	switch strings.ToLower(v) {
	case "0", "f", "false", "n", "no", "off":
		return true
	}
	return false
}

// fromEnv sets each flag not on the command line from its variable, and
// stops at the first bad value.
func (c *Config) fromEnv(fs *pflag.FlagSet, getenv func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		name := envName(f)
		v, ok := getenv(name)
		if err != nil || name == "" || f.Changed || !ok || v == "" {
			return
		}
		if bad := setFromEnv(f, v); bad != nil {
			shown := shownValue(f, v, true)
			var list *listError
			if errors.As(bad, &list) {
				shown = list.shown
			}
			err = usagef(hintFor(bad, f.Name), "invalid value %q for $%s (--%s): %v", shown, name, f.Name, bad)
		}
		f.Changed = true // set explicitly, if not on the command line
		c.given[f.Name] = given{value: shownValue(f, v, true), env: name}
	})
	return err
}

// fromLinkerdAwait reads linkerd-await's variables: LINKERD_AWAIT_VERBOSE,
// unless --verbose is set, and its disable variables.
func (c *Config) fromLinkerdAwait(fs *pflag.FlagSet, getenv func(string) (string, bool)) {
	if v, ok := getenv("LINKERD_AWAIT_VERBOSE"); ok && v != "" && !fs.Changed("verbose") {
		c.Verbose = !falsy(v)
	}
	for _, name := range disableVars {
		if v, ok := getenv(name); ok && v != "" {
			c.Disabled = true
			if c.disabledBy == "" {
				c.disabledBy = name
			}
		}
	}
}
