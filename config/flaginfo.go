// flaginfo.go: the flags as data, for a caller that reads proxy-await's
// command lines without running them (--check).

package config

import "github.com/spf13/pflag"

// FlagInfo is what a reader of a command line needs of a flag: its names,
// its variable, whether it is a boolean (which takes no separate value),
// and a value that it accepts.
type FlagInfo struct {
	Name, Shorthand, Env string
	Bool                 bool
	Example              string
}

// Flags are proxy-await's flags, in --help's order; not the flags that are
// proxy-awaitctl's now, which proxy-await only names in a usage error.
func Flags() []FlagInfo {
	var out []FlagInfo
	flagSet(&Config{}).VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		out = append(out, FlagInfo{Name: f.Name, Shorthand: f.Shorthand, Env: envName(f),
			Bool: f.Value.Type() == "bool", Example: example(f)})
	})
	return out
}

// DisableVars are the variables that, set to anything, skip the readiness
// wait.
func DisableVars() []string { return append([]string(nil), disableVars...) }
