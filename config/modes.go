// modes.go: --check, --inject, --policy and --install, the modes that run
// no command, the values only they take, and the settings each mode gets.

package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/proxies"
)

// Check is what --check reads: the manifests' paths, the cluster's
// releases, and how to print the findings.
type Check struct {
	Paths    []string                   // files and directories of manifests, - for stdin
	Versions map[string]proxies.Version // --versions: the cluster's releases, by name
	JSON     bool                       // --log-format json: one object per finding
}

// Inject is what --inject reads: the manifests' paths, the cluster's
// releases, the image its init container runs, the containers to adopt,
// and how to print what it skips.
type Inject struct {
	Paths      []string                   // files and directories of manifests, - for stdin
	Versions   map[string]proxies.Version // --versions: the cluster's releases, by name
	Image      string                     // --image: the proxy-await-install init container's
	Containers []string                   // --container: the containers to adopt, by name; nil for every one
	JSON       bool                       // --log-format json: one object per container skipped
}

// Policy is what --policy reads: the cluster's releases.
type Policy struct {
	Versions map[string]proxies.Version
}

// Install is what --install reads: the directory to copy proxy-await into.
type Install struct {
	Dir string
}

// modeFlags are the modes' flags as the command line gives them.
type modeFlags struct {
	check      bool
	inject     bool
	policy     bool
	versions   map[string]proxies.Version
	image      string
	containers []string
	install    string
}

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

// imageValue is an image reference: not empty, no white space.
type imageValue string

func (v *imageValue) String() string  { return string(*v) }
func (v *imageValue) Type() string    { return "IMAGE" }
func (v *imageValue) example() string { return ImageRepository + ":v1.2.3" }
func (v *imageValue) Set(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return fmt.Errorf("not an image reference, as in %s", v.example())
	}
	*v = imageValue(s)
	return nil
}

// nameList is --container: a container's name a use, repeatable.
type nameList struct{ names *[]string }

func (l nameList) String() string  { return strings.Join(*l.names, ",") }
func (l nameList) Type() string    { return "NAME" }
func (l nameList) example() string { return "app" }
func (l nameList) Set(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n,") {
		return fmt.Errorf("not a container's name")
	}
	*l.names = append(*l.names, s)
	return nil
}

// chooseMode checks the modes' flags (--check, --inject, --policy,
// --install, and --versions, --image and --container, which only some take)
// against each other and the arguments, which --check and --inject read as
// their paths. It says whether a mode is on: the checks that concern a
// command are then beside the point.
func (c *Config) chooseMode() (bool, error) {
	m := c.modes
	var on []string
	for _, mode := range []struct {
		name string
		on   bool
	}{{"--check", m.check}, {"--inject", m.inject}, {"--policy", m.policy}, {"--install", m.install != ""}} {
		if mode.on {
			on = append(on, mode.name)
		}
	}
	switch {
	case len(on) > 1:
		return true, usagef("run proxy-await once for each", "%s and %s cannot be used together", on[0], on[1])
	case m.install != "" && len(c.Command) > 0:
		return true, c.invalid("install", m.install, "drop "+shown(redact.Word(c.Command[0]))+" and what follows it",
			"it copies proxy-await and runs no command")
	case m.policy && len(c.Command) > 0:
		return true, usagef("drop "+shown(redact.Word(c.Command[0]))+" and what follows it",
			"--policy reads no PATH and runs no command: it writes the policy to stdout")
	case len(m.versions) > 0 && !m.check && !m.inject && !m.policy:
		return false, c.invalid("versions", versionList(m.versions).String(), "add --check and the manifests to check",
			"it applies only with --check, --inject or --policy")
	case m.image != "" && !m.inject:
		return len(on) > 0, c.invalid("image", m.image, "add --inject and the manifests to adopt proxy-await in",
			"it applies only with --inject")
	case len(m.containers) > 0 && !m.inject:
		return len(on) > 0, c.invalid("container", nameList{&m.containers}.String(), "add --inject and the manifests to adopt proxy-await in",
			"it applies only with --inject")
	case (m.check || m.inject) && len(c.Command) == 0:
		return true, usagef("give files or directories of manifests, or - for stdin", "%s needs a PATH to read", on[0])
	case m.check:
		c.Check = &Check{Paths: c.Command, Versions: m.versions, JSON: c.LogFormat == "json"}
		c.Command = nil
	case m.inject:
		c.Inject = &Inject{Paths: c.Command, Versions: m.versions, Image: cmp.Or(m.image, ReleaseImage()),
			Containers: m.containers, JSON: c.LogFormat == "json"}
		c.Command = nil
	case m.policy:
		c.Policy = &Policy{Versions: m.versions}
	case m.install != "":
		c.Install = &Install{Dir: m.install}
	}
	return len(on) > 0, nil
}
