// modes.go: --install, the one mode of proxy-await's that runs no command,
// and the flags that became proxy-awaitctl's (tool.go).

package config

import (
	"errors"
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// Install is what --install reads: the directory to copy proxy-await into.
type Install struct {
	Dir string
}

// modeFlags are the modes' flags as the command line gives them.
type modeFlags struct {
	install string
	moved   []movedUse // proxy-awaitctl's flags, in the order given
}

// movedFlag is a flag that proxy-await took before its tooling became
// proxy-awaitctl's: given to proxy-await, it is a usage error whose hint is
// the proxy-awaitctl line that does what was asked.
type movedFlag struct {
	name   string
	isBool bool   // a subcommand's name, as --check was
	sub    string // the subcommand the flag belongs with
}

var movedFlags = []movedFlag{
	{"check", true, "check"},
	{"inject", true, "inject"},
	{"policy", true, "policy"},
	{"versions", false, "check"},
	{"image", false, "inject"},
	{"container", false, "inject"},
}

// movedUse is one use of a moved flag, and its value as written.
type movedUse struct {
	flag  movedFlag
	value string
}

// movedValue is a moved flag's value: it takes any word, and keeps it.
type movedValue struct {
	flag movedFlag
	uses *[]movedUse
}

func (v *movedValue) String() string { return "" }
func (v *movedValue) Type() string {
	if v.flag.isBool {
		return "bool"
	}
	return "string"
}
func (v *movedValue) Set(s string) error {
	*v.uses = append(*v.uses, movedUse{v.flag, s})
	return nil
}

// movedToTool is the usage error for proxy-awaitctl's flags given to
// proxy-await, with the line that does what they ask; nil when none was.
// rest is what follows the flags: the paths, as --check and --inject read
// them.
func (m *modeFlags) movedToTool(rest []string) error {
	if len(m.moved) == 0 {
		return nil
	}
	first := m.moved[0].flag
	sub, explicit := first.sub, false
	if i := slices.IndexFunc(m.moved, func(u movedUse) bool { return u.flag.isBool }); i >= 0 {
		sub, explicit = m.moved[i].flag.name, true
	}
	line := []string{ToolName, sub}
	for _, u := range m.moved {
		if !u.flag.isBool {
			line = append(line, "--"+u.flag.name, redact.Word(u.value))
		}
	}
	switch {
	case sub == "policy":
	case explicit && len(rest) > 0:
		for _, p := range rest {
			line = append(line, redact.Word(p))
		}
	default:
		line = append(line, "PATH...")
	}
	return usagef("run "+strings.Join(line, " "),
		"--%s is %s's now: proxy-await, the pod's entrypoint, reads no manifests", first.name, ToolName)
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

// chooseMode checks --install against the arguments. It says whether a
// mode is on: the checks that concern a command are then beside the point.
func (c *Config) chooseMode() (bool, error) {
	dir := c.modes.install
	switch {
	case dir == "":
		return false, nil
	case len(c.Command) > 0:
		return true, c.invalid("install", dir, "drop "+shown(redact.Word(c.Command[0]))+" and what follows it",
			"it copies proxy-await and runs no command")
	}
	c.Install = &Install{Dir: dir}
	return true, nil
}
