package invocation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

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
		want   *Invocation
		ok     bool
	}{
		{"exec proxy-await -t 1s -- /app", nil, &Invocation{Args: known("-t", "1s", "--", "/app"), Exec: true, Line: 1}, true},
		{`set -e; cp a b && exec proxy-await --term-delay "$D" "$@"`, []string{"--", "/app", "x y"},
			&Invocation{Args: known("--term-delay", "5s", "--", "/app", "x y"), Exec: true, Line: 1}, true},
		{`exec proxy-await "$@"`, nil, &Invocation{Args: []manifest.Word{}, Exec: true, Line: 1}, true},
		{`exec proxy-await ${EMPTY:-1s} ${D-1s} "${D}"`, nil, &Invocation{Args: known("1s", "5s", "5s"), Exec: true, Line: 1}, true},
		{`exec proxy-await 'a b' "c\"d" e\ f # comment`, nil, &Invocation{Args: known("a b", `c"d`, "e f"), Exec: true, Line: 1}, true},
		{`PROXY_AWAIT_TERM_DELAY=3s exec -a pa proxy-await -- app`, nil,
			&Invocation{Args: known("--", "app"), Env: []Assign{{"PROXY_AWAIT_TERM_DELAY", manifest.Word{Text: "3s", Known: true, Line: 1}}}, Exec: true, Line: 1}, true},
		{"proxy-await -- app | tee log", nil, &Invocation{Args: known("--", "app"), Line: 1, Sub: inPipeline}, true},
		{"exec proxy-await -- app 2>&1 | tee log", nil, &Invocation{Args: known("--", "app"), Line: 1, Exec: true, Sub: inPipeline}, true},
		{"(exec proxy-await -- app)", nil, &Invocation{Args: known("--", "app"), Line: 1, Exec: true, Sub: inParentheses}, true},
		{"exec proxy-await -- app &\nwait", nil, &Invocation{Args: known("--", "app"), Line: 1, Exec: true, Sub: inBackground}, true},
		{"true && exec proxy-await -- app || exit 1", nil, &Invocation{Args: known("--", "app"), Line: 1, Exec: true}, true},
		{"x=$(exec proxy-await -- app)", nil, &Invocation{Args: known("--", "app"), Line: 1, Exec: true, Sub: inSubstitution}, true},
		{"proxy-await -- app >/log 2>&1", nil, &Invocation{Args: known("--", "app"), Line: 1}, true},
		{"if [ -f /ready ]; then\n  exec proxy-await -- app\nfi", nil, &Invocation{Args: []manifest.Word{{Text: "--", Known: true, Line: 2}, {Text: "app", Known: true, Line: 2}}, Exec: true, Line: 2}, true},
		{"main() {\n  exec env A=1 tini -- proxy-await -S -- app\n}\nmain", nil,
			&Invocation{Args: []manifest.Word{{Text: "-S", Known: true, Line: 2}, {Text: "--", Known: true, Line: 2}, {Text: "app", Known: true, Line: 2}},
				Env: []Assign{{"A", manifest.Word{Text: "1", Known: true, Line: 2}}}, Exec: true, Line: 2}, true},
		{"cat <<EOF\nproxy-await -- nothing\nEOF\nexec dumb-init -- proxy-await -- app", nil,
			&Invocation{Args: []manifest.Word{{Text: "--", Known: true, Line: 4}, {Text: "app", Known: true, Line: 4}}, Exec: true, Line: 4}, true},
		{"echo proxy-await; exec app", nil, nil, false},
		{"# exec proxy-await -- app\nexec app", nil, nil, false},
	} {
		var pos []manifest.Word
		for _, p := range tc.pos {
			pos = append(pos, manifest.Word{Text: p, Known: true})
		}
		sc := newScript(manifest.Scalar{Text: tc.script, Line: 1, Breaks: breaksOf(tc.script)}, vars, pos)
		var got *Invocation
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
	for _, w := range inv.Args {
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
// or one the caller knows, with its CMD where the container gives no
// args, as Kubernetes runs it), behind wrappers, or a shell script; a
// script file or another program is not proxy-await.
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
		images        Images
		want          []string
		shell         string
		ok            bool
	}{
		{"", scalars("/usr/local/bin/proxy-await"), scalars("-S", "--", "x"), nil, []string{"-S", "--", "x"}, "", true},
		{"ghcr.io/proxy-await/proxy-await:v1.2.3@sha256:abc", nil, scalars("--install", "/pa"), nil, []string{"--install", "/pa"}, "", true},
		{"localhost:5000/proxy-await", nil, scalars("-S"), nil, []string{"-S"}, "", true},
		{"registry.example.com/app:1", nil, scalars("-S"), nil, nil, "", false},
		{"registry.example.com/app:1", nil, scalars("/pa/proxy-await", "-S", "--", "x"), nil, []string{"-S", "--", "x"}, "", true},
		{"registry.example.com/app:1", nil, scalars("-S"), ImageTable{"registry.example.com/app:1": {Entrypoint: []string{"/proxy-await"}}}, []string{"-S"}, "", true},
		{"registry.example.com/app:1", nil, nil, ImageTable{"registry.example.com/app:1": {Entrypoint: []string{"/proxy-await"}, Cmd: []string{"--proxy", "none", "--", "/app"}}}, []string{"--proxy", "none", "--", "/app"}, "", true},
		{"registry.example.com/app:1", nil, scalars("-S", "--", "/app"), ImageTable{"registry.example.com/app:1": {Entrypoint: []string{"/proxy-await"}, Cmd: []string{"--proxy", "none"}}}, []string{"-S", "--", "/app"}, "", true},
		{"registry.example.com/app:1", nil, nil, ImageTable{"registry.example.com/app:1": {Cmd: []string{"sh", "-c", "exec proxy-await -S -- /app"}}}, []string{"-S", "--", "/app"}, "sh", true},
		{"registry.example.com/other:1", nil, scalars("-S"), ImageTable{"registry.example.com/app:1": {Entrypoint: []string{"/proxy-await"}}}, nil, "", false},
		{"", scalars("sh", "-e", "-c", "exec proxy-await -S"), nil, nil, []string{"-S"}, "sh", true},
		{"", scalars("/sbin/tini", "-s", "-p", "SIGKILL", "--", "exec", "proxy-await"), nil, nil, nil, "", false},
		{"", scalars("/usr/bin/dumb-init", "--rewrite", "15:3", "--", "gosu", "app", "proxy-await", "-S"), nil, nil, []string{"-S"}, "", true},
		{"", scalars("sh", "/entrypoint.sh"), nil, nil, nil, "", false},
		{"", scalars("/app"), scalars("proxy-await"), nil, nil, "", false},
	} {
		c := &manifest.Container{Image: tc.image, Command: tc.command, Args: tc.args, Vars: &manifest.Variables{Set: map[string]manifest.Variable{}}}
		inv, ok := Of(c, tc.images)
		assert.Equal(t, tc.ok, ok, "%+v", tc)
		if !ok {
			continue
		}
		var got []string
		for _, w := range inv.Args {
			got = append(got, w.Text)
		}
		assert.Equal(t, tc.want, got, "%+v", tc)
		assert.Equal(t, tc.shell, inv.Shell, "%+v", tc)
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
		assert.Equal(t, tc.want, PreStop(&manifest.Container{PreStop: tc.hook}).String(), "%+v", tc.hook)
	}
}

// quit is the command a Job's script runs to stop Istio's sidecar.
const quit = "curl -XPOST http://127.0.0.1:15020/quitquitquit"

// runsQuit says whether the script's commands, as a Job's checks read them
// (the script's own, and what the shell runs for it), call quit.
func runsQuit(script string) bool {
	c := &manifest.Container{Command: []manifest.Scalar{{Text: "sh"}, {Text: "-c"}, {Text: script}}, Vars: &manifest.Variables{}}
	for _, cmd := range Commands(c, nil) {
		if cmd[0].Text == "curl" {
			return true
		}
	}
	return false
}

// Scripts that the shell runs for a script (eval's words, a trap's action,
// a nested sh -c) and command substitutions inside each other are read
// maxNesting deep, and no deeper: what is past that stays unknown.
func TestNestingIsBounded(t *testing.T) {
	evals := func(n int) string { return strings.Repeat("eval ", n) + quit }
	shells := func(n int) string {
		s := quit
		for range n {
			s = "sh -c '" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		return s
	}
	substitutions := func(n int) string { return "x=" + strings.Repeat("$(", n) + quit + strings.Repeat(")", n) }
	for name, script := range map[string]func(int) string{"eval": evals, "sh -c": shells, "$( )": substitutions} {
		assert.True(t, runsQuit(script(maxNesting)), "%s %d deep", name, maxNesting)
		assert.False(t, runsQuit(script(maxNesting+1)), "%s %d deep", name, maxNesting+1)
	}
}

// A script past maxScriptBytes is not parsed: its commands are not known,
// at the cost of a look at its length, whatever its nesting would have
// cost the parser.
func TestLongScriptsAreNotParsed(t *testing.T) {
	deep := strings.Repeat("(", maxScriptBytes) + quit + strings.Repeat(")", maxScriptBytes)
	assert.False(t, runsQuit(deep))
	assert.Empty(t, parse(deep).cmds)
	long := quit + strings.Repeat(" x", maxScriptBytes/2)
	assert.Empty(t, parse(long).cmds)
	assert.NotEmpty(t, parse(long[:maxScriptBytes]).cmds, "at the bound, it is parsed")
}
