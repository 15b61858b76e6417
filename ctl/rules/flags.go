// flags.go: what proxy-await in a container would refuse at start, with
// the usage error it would print.

package rules

import (
	"errors"
	"fmt"
	"strings"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
)

const ruleFlags = "flags"

func init() {
	register(Rule{
		Name:        ruleFlags,
		Level:       Error,
		Summary:     "proxy-await would refuse its flags or variables at start; the message is its usage error",
		Fix:         "as the message says; a flag and its value written as one list element (`\"--timeout 60s\"`) are two elements",
		PolicyOmits: "its verdict is proxy-await's own parser of flags and variables, which CEL cannot run",
		container:   (*judge).flags,
	})
}

func (j *judge) flags() {
	if u, ok := j.set.Unknown["flags"]; ok {
		j.skip(ruleFlags, u)
		return
	}
	if j.set.All != nil {
		j.skip(ruleFlags, *j.set.All)
		return
	}
	if j.set.Err == nil {
		return
	}
	msg, h := usage(j.set.Err)
	line := j.set.ErrLine
	if w := j.set.Split; w != nil {
		fields := strings.Fields(w.Text)
		value := redact.Word(strings.Join(fields[1:], " ")) // as proxy-await's own messages show a value
		if w.Secret {
			value = redact.Mask
		}
		h = fmt.Sprintf("%q is one element of the list: a flag and its value are two, so split it: %q, %q (or write %s=%s)",
			fields[0]+" "+value, fields[0], value, fields[0], value)
		line = w.Line
	}
	j.report(ruleFlags, line, "%s", hint.Text(msg, h))
}

// usage is a usage error as a finding's message: its text and its hint.
func usage(err error) (string, string) {
	var u *config.UsageError
	if errors.As(err, &u) {
		return u.Error(), hint.Of(u)
	}
	return err.Error(), ""
}
