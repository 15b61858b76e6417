// prestop.go: how long a container's preStop hook takes, where it says.

package invocation

import (
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// Sleep is the program whose argument is how long a hook takes.
const Sleep = "sleep"

// PreStop is how long c's preStop hook takes when it says so: a sleep
// action, or an exec of sleep, also as the first statement of a shell
// script ("sleep 5 && nginx -s quit" sleeps 5s at least). Anything else
// counts 0.
func PreStop(c *manifest.Container) time.Duration {
	h := c.PreStop
	if h.Sleep > 0 {
		return h.Sleep
	}
	var argv []manifest.Word
	for _, it := range h.Exec {
		argv = append(argv, manifest.Known(it, 0))
	}
	if i, ok := ShellScript(argv); ok {
		argv = nil
		if cmds := newScript(manifest.Scalar{Text: h.Exec[i]}, &manifest.Variables{}, nil).commands(); len(cmds) > 0 {
			argv = cmds[0].words
		}
	}
	if len(argv) >= 2 && argv[0].Known && argv[1].Known && manifest.BaseName(argv[0].Text) == Sleep {
		return sleepTime(argv[1].Text)
	}
	return 0
}

// sleepTime reads sleep's argument: seconds, or a number with the suffix
// s, m, h or d; 0 if it is neither.
func sleepTime(s string) time.Duration {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, unit = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, unit = s[:len(s)-1], 24*time.Hour
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n > 1e6 || strings.ContainsAny(s, "eExXnN") {
		return 0
	}
	return time.Duration(n * float64(unit))
}
