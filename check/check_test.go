package check

import (
	"strings"
	"testing"
	"time"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "-" reads stdin, named <stdin> in findings.
func TestStdin(t *testing.T) {
	pod := `kind: Pod
metadata: {name: listed}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [proxy-await, --proxy, none, --kill-after, never, --, /app]
`
	findings, sum := Paths([]string{"-"}, Options{Stdin: strings.NewReader(pod)})
	require.Len(t, findings, 1)
	assert.Equal(t, `<stdin>:7: error: flags: Pod/listed container app: invalid value "never" for --kill-after: not a duration (use 250ms, 1m30s, 2d or seconds)`, findings[0].String())
	assert.Equal(t, Summary{Files: 1, Pods: 1, Containers: 1}, sum)

	findings, _ = Paths([]string{"-"}, Options{})
	assert.Equal(t, []Finding{{File: "<stdin>", Level: Error, Rule: "input", Message: "no standard input to read"}}, findings, "a library caller without Stdin")
}

// A script's commands are found wherever they sit, and their words are
// what the shell would make of them: quotes removed, variables and "$@"
// expanded; what the manifest does not hold is said so.
func TestScripts(t *testing.T) {
	vars := &manifest.Variables{Set: map[string]manifest.Variable{
		"D":     {Value: manifest.Value{Text: "5s", Known: true}, Line: 1},
		"EMPTY": {Value: manifest.Value{Text: "", Known: true}, Line: 2},
		"CM":    {Value: manifest.Value{From: "valueFrom ConfigMap c (key k), which the input does not hold"}, Line: 3},
	}}
	known := func(ws ...string) []manifest.Word {
		var out []manifest.Word
		for _, w := range ws {
			out = append(out, manifest.Word{Text: w, Known: true, Line: 1})
		}
		return out
	}
	for _, tc := range []struct {
		script string
		pos    []string
		want   invocation
		ok     bool
	}{
		{"exec proxy-await -t 1s -- /app", nil, invocation{args: known("-t", "1s", "--", "/app"), exec: true, line: 1}, true},
		{`set -e; cp a b && exec proxy-await --term-delay "$D" "$@"`, []string{"--", "/app", "x y"},
			invocation{args: known("--term-delay", "5s", "--", "/app", "x y"), exec: true, line: 1}, true},
		{`exec proxy-await "$@"`, nil, invocation{args: []manifest.Word{}, exec: true, line: 1}, true},
		{`exec proxy-await ${EMPTY:-1s} ${D-1s} "${D}"`, nil, invocation{args: known("1s", "5s", "5s"), exec: true, line: 1}, true},
		{`exec proxy-await 'a b' "c\"d" e\ f # comment`, nil, invocation{args: known("a b", `c"d`, "e f"), exec: true, line: 1}, true},
		{`PROXY_AWAIT_TERM_DELAY=3s exec -a pa proxy-await -- app`, nil,
			invocation{args: known("--", "app"), env: []assign{{"PROXY_AWAIT_TERM_DELAY", manifest.Word{Text: "3s", Known: true, Line: 1}}}, exec: true, line: 1}, true},
		{"proxy-await -- app | tee log", nil, invocation{args: known("--", "app"), line: 1, sub: inPipeline}, true},
		{"exec proxy-await -- app 2>&1 | tee log", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inPipeline}, true},
		{"(exec proxy-await -- app)", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inParentheses}, true},
		{"exec proxy-await -- app &\nwait", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inBackground}, true},
		{"true && exec proxy-await -- app || exit 1", nil, invocation{args: known("--", "app"), line: 1, exec: true}, true},
		{"x=$(exec proxy-await -- app)", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inSubstitution}, true},
		{"proxy-await -- app >/log 2>&1", nil, invocation{args: known("--", "app"), line: 1}, true},
		{"if [ -f /ready ]; then\n  exec proxy-await -- app\nfi", nil, invocation{args: []manifest.Word{{Text: "--", Known: true, Line: 2}, {Text: "app", Known: true, Line: 2}}, exec: true, line: 2}, true},
		{"main() {\n  exec env A=1 tini -- proxy-await -S -- app\n}\nmain", nil,
			invocation{args: []manifest.Word{{Text: "-S", Known: true, Line: 2}, {Text: "--", Known: true, Line: 2}, {Text: "app", Known: true, Line: 2}},
				env: []assign{{"A", manifest.Word{Text: "1", Known: true, Line: 2}}}, exec: true, line: 2}, true},
		{"cat <<EOF\nproxy-await -- nothing\nEOF\nexec dumb-init -- proxy-await -- app", nil,
			invocation{args: []manifest.Word{{Text: "--", Known: true, Line: 4}, {Text: "app", Known: true, Line: 4}}, exec: true, line: 4}, true},
		{"echo proxy-await; exec app", nil, invocation{}, false},
		{"# exec proxy-await -- app\nexec app", nil, invocation{}, false},
	} {
		var pos []manifest.Word
		for _, p := range tc.pos {
			pos = append(pos, manifest.Word{Text: p, Known: true})
		}
		sc := newScript(manifest.Scalar{Text: tc.script, Line: 1, Breaks: breaksOf(tc.script)}, vars, pos)
		var got invocation
		ok := false
		for _, cmd := range sc.commands() {
			if got, ok = commandInvocation(cmd); ok {
				break
			}
		}
		assert.Equal(t, tc.ok, ok, tc.script)
		if ok {
			assert.Equal(t, tc.want, got, tc.script)
		}
	}

	// What the manifest does not hold.
	sc := newScript(manifest.Scalar{Text: `X=1; exec proxy-await $CM $(date) ` + "`id`" + ` $X $UNSET "$1"`, Line: 1}, vars, nil)
	cmds := sc.commands()
	require.Len(t, cmds, 4, "X=1, date, id, exec proxy-await")
	assert.Equal(t, []command{{known("date"), inSubstitution}, {known("id"), inSubstitution}}, []command{{cmds[1].words, cmds[1].sub}, {cmds[2].words, cmds[2].sub}})
	inv, ok := commandInvocation(cmds[0])
	require.False(t, ok)
	inv, ok = commandInvocation(cmds[3])
	require.True(t, ok)
	var froms []string
	for _, w := range inv.args {
		if !w.Known {
			froms = append(froms, w.From)
		}
	}
	assert.Equal(t, []string{
		"the shell variable $CM, which comes from valueFrom ConfigMap c (key k), which the input does not hold",
		"$(date), which the shell computes when the pod starts",
		"`id`, which the shell computes when the pod starts",
		"the shell variable $X, which the script sets",
		"the shell variable $UNSET, which the manifest does not set (the image may)",
	}, froms)
}

// breaksOf is where each line of a literal block starts.
func breaksOf(s string) []int {
	var out []int
	for i := 0; i < len(s)-1; i++ {
		if s[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// How a container runs proxy-await: its command, args alone on an image
// without an entrypoint, its image's entrypoint (proxy-await's own image,
// or one the caller knows), behind wrappers, or a shell script; a script
// file or another program is not proxy-await.
func TestInvocationOf(t *testing.T) {
	scalars := func(ss ...string) []manifest.Scalar {
		var out []manifest.Scalar
		for _, s := range ss {
			out = append(out, manifest.Scalar{Text: s, Line: 1})
		}
		return out
	}
	for _, tc := range []struct {
		image         string
		command, args []manifest.Scalar
		entry         func(string) []string
		want          []string
		shell         string
		ok            bool
	}{
		{"", scalars("/usr/local/bin/proxy-await"), scalars("-S", "--", "x"), nil, []string{"-S", "--", "x"}, "", true},
		{"ghcr.io/proxy-await/proxy-await:v1.2.3@sha256:abc", nil, scalars("--install", "/pa"), nil, []string{"--install", "/pa"}, "", true},
		{"localhost:5000/proxy-await", nil, scalars("-S"), nil, []string{"-S"}, "", true},
		{"registry.example.com/app:1", nil, scalars("-S"), nil, nil, "", false},
		{"registry.example.com/app:1", nil, scalars("/pa/proxy-await", "-S", "--", "x"), nil, []string{"-S", "--", "x"}, "", true},
		{"registry.example.com/app:1", nil, scalars("-S"), func(string) []string { return []string{"/proxy-await"} }, []string{"-S"}, "", true},
		{"", scalars("sh", "-e", "-c", "exec proxy-await -S"), nil, nil, []string{"-S"}, "sh", true},
		{"", scalars("/sbin/tini", "-s", "-p", "SIGKILL", "--", "exec", "proxy-await"), nil, nil, nil, "", false},
		{"", scalars("/usr/bin/dumb-init", "--rewrite", "15:3", "--", "gosu", "app", "proxy-await", "-S"), nil, nil, []string{"-S"}, "", true},
		{"", scalars("sh", "/entrypoint.sh"), nil, nil, nil, "", false},
		{"", scalars("/app"), scalars("proxy-await"), nil, nil, "", false},
	} {
		c := &manifest.Container{Image: tc.image, Command: tc.command, Args: tc.args, Vars: &manifest.Variables{Set: map[string]manifest.Variable{}}}
		inv, ok := invocationOf(c, tc.entry)
		assert.Equal(t, tc.ok, ok, "%+v", tc)
		var got []string
		for _, w := range inv.args {
			got = append(got, w.Text)
		}
		assert.Equal(t, tc.want, got, "%+v", tc)
		assert.Equal(t, tc.shell, inv.shell, "%+v", tc)
	}
}

// preStop time is read where the hook says it: a sleep action, sleep, or a
// script that starts with sleep.
func TestPreStopTime(t *testing.T) {
	for _, tc := range []struct {
		hook manifest.Hook
		want string
	}{
		{manifest.Hook{Sleep: 7 * time.Second}, "7s"},
		{manifest.Hook{Exec: []string{"sleep", "5"}}, "5s"},
		{manifest.Hook{Exec: []string{"/bin/sleep", "1m"}}, "1m0s"},
		{manifest.Hook{Exec: []string{"sleep", "0.5"}}, "500ms"},
		{manifest.Hook{Exec: []string{"sh", "-c", "sleep 3; nginx -s quit"}}, "3s"},
		{manifest.Hook{Exec: []string{"nginx", "-s", "quit"}}, "0s"},
		{manifest.Hook{}, "0s"},
		{manifest.Hook{Exec: []string{"sleep", "infinity"}}, "0s"},
	} {
		assert.Equal(t, tc.want, dur(preStopOf(&manifest.Container{PreStop: tc.hook})), "%+v", tc.hook)
	}
}
