// shell-form.go: proxy-await under sh -c without exec, where the shell is
// the container's PID 1 and gets the kubelet's SIGTERM, and proxy-await
// never sees it. That matters only when proxy-await runs a command:
// --install, and a wait without COMMAND, end before any signal.

package rules

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/invocation"
)

const ruleShellForm = "shell-form"

func init() {
	register(Rule{
		Name:  ruleShellForm,
		Level: Error,
		Summary: "proxy-await runs its COMMAND under `sh -c` without `exec`, or with an `exec` that replaces only a subshell (in a pipeline, `( ... )`, `&`): " +
			"the shell is PID 1 and gets the kubelet's SIGTERM (not for `--install` or a wait without COMMAND, whose signals do not matter; " +
			"not for a script whose only statement is proxy-await's command run by `bash` or BusyBox's `sh`, which exec such a command themselves; a warning under `sh` or `ash`, which may be dash, which does not)",
		Fix:       "`exec proxy-await ...` as a statement of the script itself, or no shell",
		Policy:    true,
		container: (*judge).shellForm,
	})
}

func (j *judge) shellForm() {
	if j.inv.Shell == "" || j.inv.Exec && j.inv.Sub == "" {
		return
	}
	if j.cfg != nil && (j.cfg.Install != nil || len(j.cfg.Command) == 0) {
		return
	}
	if j.cfg == nil && !j.runsCommand() {
		return
	}
	if j.inv.Exec {
		j.report(ruleShellForm, j.inv.Line, "exec proxy-await runs %s under %s -c, where exec replaces only that subshell: the shell stays PID 1 and gets the kubelet's SIGTERM, not proxy-await; make exec proxy-await ... a statement of the script itself, outside any pipe, ( ... ) or &",
			j.inv.Sub, j.inv.Shell)
		return
	}
	switch {
	case j.inv.Lone && slices.Contains(invocation.ExecsLone, j.inv.Shell):
		return // the shell execs it: proxy-await is PID 1
	case j.inv.Lone && slices.Contains(invocation.MayExecLone, j.inv.Shell):
		j.reportAs(Warning, ruleShellForm, j.inv.Line, "proxy-await runs under %s -c without exec, the script's only command: bash and BusyBox's sh exec such a command themselves, but dash, which %s may be (Debian's is), keeps the shell, which then gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ..., or run it under bash",
			j.inv.Shell, j.inv.Shell)
		return
	}
	j.report(ruleShellForm, j.inv.Line, "proxy-await runs under %s -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell",
		j.inv.Shell)
}

// runsCommand says, from its words alone, whether proxy-await is given a
// command to run: words after "--", and no --install.
func (j *judge) runsCommand() bool {
	for i, w := range j.inv.Args {
		if strings.HasPrefix(w.Text, "--install") {
			return false
		}
		if w.Text == "--" {
			return i+1 < len(j.inv.Args)
		}
	}
	return false
}
