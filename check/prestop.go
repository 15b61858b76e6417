// prestop.go: how long a container's preStop hook takes, where it says.

package check

import (
	"strconv"
	"strings"
	"time"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// preStopOf is how long c's preStop hook takes when it says so: a sleep
// action, or an exec of sleep (also under sh -c). Anything else counts 0.
func preStopOf(c *manifest.Container) time.Duration {
	h := c.PreStop
	if h.Sleep > 0 {
		return h.Sleep
	}
	argv := h.Exec
	var words []manifest.Word
	for _, it := range argv {
		words = append(words, manifest.Word{Text: it, Known: true})
	}
	if i, ok := shellScript(words); ok {
		argv = strings.Fields(argv[i]) // "sleep 5 && nginx -s quit" sleeps 5s at least
	}
	if len(argv) >= 2 && manifest.BaseName(argv[0]) == "sleep" {
		return sleepTime(strings.TrimRight(argv[1], ";&|"))
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
