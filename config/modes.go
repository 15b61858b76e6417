// modes.go: --check and --install, the modes that run no command, and the
// values only they take.

package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/proxies"
)

// versionList is the --versions flag: NAME=V items, comma-separated on the
// command line too; the names are those whose releases the proxy table
// knows to differ (proxies.ReleaseNames).
type versionList map[string]proxies.Version

func (l versionList) Type() string    { return "NAME=V[,...]" }
func (l versionList) example() string { return "linkerd=2.20" }
func (l versionList) String() string {
	var items []string
	for name, v := range l {
		items = append(items, name+"="+v.String())
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}
func (l versionList) Set(s string) error        { return addItems(l, s, l.splitsOnCommandLine()) }
func (l versionList) splitsOnCommandLine() bool { return true }
func (l versionList) add(item string) error {
	name, v, ok := strings.Cut(item, "=")
	if !ok {
		return hint.New(fmt.Errorf("want NAME=VERSION, as in linkerd=2.20, not %s", shown(item)),
			"write FLAG linkerd=2.20,istio=1.27,kubernetes=1.33")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if names := proxies.ReleaseNames(); !slices.Contains(names, name) {
		return hint.New(fmt.Errorf("unknown name %s", shown(name)), "name one of "+strings.Join(names, ", "))
	}
	ver, err := parseVersion(strings.TrimSpace(v))
	if err != nil {
		return err
	}
	l[name] = ver
	return nil
}

// parseVersion reads MAJOR.MINOR, with an optional leading v and an
// optional .PATCH that makes no difference to --check.
func parseVersion(s string) (proxies.Version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return proxies.Version{}, fmt.Errorf("version %s is not MAJOR.MINOR, as in 2.20", shown(s))
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || !isDigits(p) {
			return proxies.Version{}, fmt.Errorf("version %s is not MAJOR.MINOR, as in 2.20", shown(s))
		}
		n[i] = v
	}
	return proxies.Version{Major: n[0], Minor: n[1]}, nil
}

// dirValue is a directory name: not empty.
type dirValue string

func (d *dirValue) String() string  { return string(*d) }
func (d *dirValue) Type() string    { return "DIR" }
func (d *dirValue) example() string { return "/pa" }
func (d *dirValue) Set(s string) error {
	if s == "" {
		return errors.New("empty directory name")
	}
	*d = dirValue(s)
	return nil
}

// modes checks --check, --versions and --install against each other and
// the arguments, which --check reads as its paths. It says whether a mode
// is on: the checks that concern a command are then beside the point.
func (c *Config) modes() (bool, error) {
	switch {
	case c.Check && c.Install != "":
		return true, usagef("run proxy-await once for each", "--check and --install cannot be used together")
	case c.Install != "" && len(c.Command) > 0:
		return true, c.invalid("install", c.Install, "drop "+shown(redact.Word(c.Command[0]))+" and what follows it",
			"it copies proxy-await and runs no command")
	case len(c.Versions) > 0 && !c.Check:
		return false, c.invalid("versions", versionList(c.Versions).String(), "add --check and the manifests to check",
			"it applies only with --check")
	case c.Check && len(c.Command) == 0:
		return true, usagef("give files or directories of manifests, or - for stdin", "--check needs a PATH to read")
	case c.Check:
		c.Paths, c.Command = c.Command, nil
	}
	return c.Check || c.Install != "", nil
}
