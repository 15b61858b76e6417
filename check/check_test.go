package check

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
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
	assert.Equal(t, []Finding{inputFinding(stdinName, 0, "no standard input to read")}, findings, "a library caller without Stdin")
}

// The parser's errors give the line that is wrong, whether yaml.v3's
// scanner or its parser found it (they count lines differently), counted
// from the file's start.
func TestNotYAMLLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"a: b\n\tc: d\n", "x.yaml:2: error: input: not YAML: found a tab character that violates indentation"},
		{"a: [b\nc: d\n", "x.yaml:2: error: input: not YAML: did not find expected ',' or ']'"},
		{"kind: Pod\n---\nkind: Pod\n---\na: b\nc: [d\ne: f\n", "x.yaml:6: error: input: not YAML: did not find expected ',' or ']'"},
		{"a: *nowhere\n", "x.yaml:1: error: input: not YAML: unknown anchor 'nowhere' referenced"},
		{"kind: Pod\n---\n- a\nb: c\n", "x.yaml:3: error: input: not YAML: did not find expected '-' indicator"},
	} {
		in := newInput(Options{})
		in.parseFile("x.yaml", []byte(tc.text), false)
		if assert.Len(t, in.findings, 1, "%q", tc.text) {
			assert.Equal(t, tc.want, in.findings[0].String(), "%q", tc.text)
		}
	}
}

// splitDocuments cuts at document markers only: "---" and "..." at the
// start of a line, and a "---" after a directive stays with it.
func TestSplitDocuments(t *testing.T) {
	type doc struct {
		text string
		line int
	}
	split := func(s string) []doc {
		var out []doc
		for _, p := range splitDocuments([]byte(s)) {
			out = append(out, doc{string(p.text), p.line})
		}
		return out
	}
	assert.Equal(t, []doc{{"a: 1\n", 0}, {"--- # x\nb: 2\n", 1}, {"---\n", 3}}, split("a: 1\n--- # x\nb: 2\n---\n"))
	assert.Equal(t, []doc{{"a: 1\n...\n", 0}, {"b: |\n  ---x\n  --- not a marker: indented\n", 2}}, split("a: 1\n...\nb: |\n  ---x\n  --- not a marker: indented\n"))
	assert.Equal(t, []doc{{"a: 1\n", 0}, {"%YAML 1.2\n---\nb: 2", 1}}, split("a: 1\n%YAML 1.2\n---\nb: 2"))
	assert.Equal(t, []doc{{"a: 1\r\n", 0}, {"---\r\nb: 2\r\n", 1}}, split("\ufeffa: 1\r\n---\r\nb: 2\r\n"))
	assert.Equal(t, []doc{{"----\nb: 2\n", 0}}, split("----\nb: 2\n"))
}

// A document over the bounds is refused unparsed, at the cost of its text,
// and the file's other documents are still read: one over the size bound,
// one whose text holds too many nodes for its size. A List of 5000
// Deployments, as kubectl prints a large namespace, is read.
func TestLargeDocuments(t *testing.T) {
	big := "---\nkind: ConfigMap\ndata:\n  x: " + strings.Repeat("y", maxDocBytes) + "\n"
	dense := "---\nkind: ConfigMap\ndata: [" + strings.Repeat("1,", maxNodes/2) + "1]\n"
	data := []byte("kind: Pod\n" + big + dense + "---\nkind: Pod\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	in := newInput(Options{})
	in.parseFile("big.yaml", data, false)
	runtime.ReadMemStats(&after)
	var got []string
	for _, b := range in.findings {
		got = append(got, b.String())
	}
	assert.Equal(t, []string{
		fmt.Sprintf("big.yaml:2: error: input: a document of %d bytes, more than is read at once (16 MiB, or about 1000000 nodes): split it, a List into its items", len(big)),
		fmt.Sprintf("big.yaml:6: error: input: a document of %d bytes, more than is read at once (16 MiB, or about 1000000 nodes): split it, a List into its items", len(dense)),
	}, got)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated to refuse %d bytes", len(data))

	var list strings.Builder
	list.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 5000 {
		fmt.Fprintf(&list, `  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web-%d, namespace: shop}
    spec:
      template:
        metadata: {annotations: {linkerd.io/inject: enabled}}
        spec:
          containers:
            - name: web
              image: registry.example.com/web:1
              command: [proxy-await, --term-delay, 20s, --kill-after, 20s, --, /web]
`, i)
	}
	in = newInput(Options{})
	in.parseFile("list.yaml", []byte(list.String()), false)
	require.Empty(t, in.findings)
	assert.Len(t, in.pods, 5000)
}

// A block scalar's lines are no nodes: a ConfigMap of 1.3 MB whose data is
// a CSV (more commas and lines than a million nodes would allow if they
// counted) is read; what only looks like a block scalar to a reading of
// the text is not let through on that account.
func TestBlockScalarsAreNoNodes(t *testing.T) {
	var csv strings.Builder
	for csv.Len() < 1_300_000 {
		csv.WriteString("    1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0\n")
	}
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: table\ndata:\n  table.csv: |\n" + csv.String() + "  other: x\n"
	require.Greater(t, nodesAtMost([]byte(doc)), maxNodes, "the text alone would be refused")
	in := newInput(Options{})
	in.parseFile("csv.yaml", []byte(doc), false)
	assert.Empty(t, in.findings)

	// The same lines inside a quoted scalar that the text reading takes
	// for a block scalar's header: their commas are in a flow sequence.
	fake := "kind: ConfigMap\ndata:\n  a: \"x\n b: |\n  y\"\n  c: [" + strings.Repeat("1,", maxNodes) + "1]\n"
	in = newInput(Options{})
	in.parseFile("fake.yaml", []byte(fake), false)
	require.Len(t, in.findings, 1)
	assert.Contains(t, in.findings[0].Message, "more than is read at once")
}

// Reading is bounded in total: past maxInputBytes the input is refused,
// having cost only what was read of it, whether one file is larger or
// files that each are not add up to more.
func TestInputBound(t *testing.T) {
	dir := t.TempDir()
	sized := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
		return p
	}
	small := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(small, []byte("kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n"), 0o644))
	huge := sized("huge.yaml", maxInputBytes+1)
	findings, sum := Paths([]string{small, huge, small}, Options{})
	require.Len(t, findings, 1)
	assert.Equal(t, huge+": error: input: past 64 MiB of manifests in all, the most that is read: this and what follows is not read; check it in parts", findings[0].String())
	assert.Equal(t, 1, sum.Files)

	half, other := sized("half.yaml", maxInputBytes/2+1), sized("other.yaml", maxInputBytes/2+1)
	findings, sum = Paths([]string{half, other, small}, Options{})
	require.Len(t, findings, 2)
	assert.Contains(t, findings[0].Message, "more than is read at once", "the first half is read, and its document is over the bound")
	assert.Equal(t, other+": error: input: past 64 MiB of manifests in all, the most that is read: this and what follows is not read; check it in parts", findings[1].String())
	assert.Equal(t, 1, sum.Files)
}

// The kubelet expands $(VAR) in command, args and env values from the
// variables defined before (for env) or at all (for command and args); $$
// is a literal $. A reference that the manifest does not define, or whose
// value is not in the input, is unknown, with where it comes from.
func TestKubeletExpansion(t *testing.T) {
	e := &environment{vars: map[string]variable{
		"A":      {value{text: "a", known: true}, 1},
		"SECRET": {value{from: "valueFrom Secret app (key s), which the input does not hold"}, 2},
	}}
	for _, tc := range []struct {
		in, out string
		known   bool
		from    string
	}{
		{"$(A)", "a", true, ""},
		{"x$(A)y$(A)", "xaya", true, ""},
		{"$$(A)", "$(A)", true, ""},
		{"$(B)", "$(B)", false, "$(B), which the container's env does not define"},
		{"$(SECRET)", "$(SECRET)", false, "$(SECRET), which comes from valueFrom Secret app (key s), which the input does not hold"},
		{"$(A", "$(A", true, ""},
		{"$A $", "$A $", true, ""},
	} {
		v := e.expand(tc.in)
		assert.Equal(t, value{text: tc.out, known: tc.known, from: tc.from}, v, tc.in)
	}
	e.open = "envFrom ConfigMap x (which the input does not hold), if it sets it"
	assert.Equal(t, "$(B), which may come from "+e.open, e.expand("$(B)").from, "envFrom may define B")
}

// A script's commands are found wherever they sit, and their words are
// what the shell would make of them: quotes removed, variables and "$@"
// expanded; what the manifest does not hold is said so.
func TestScripts(t *testing.T) {
	vars := &environment{vars: map[string]variable{
		"D":     {value{text: "5s", known: true}, 1},
		"EMPTY": {value{text: "", known: true}, 2},
		"CM":    {value{from: "valueFrom ConfigMap c (key k), which the input does not hold"}, 3},
	}}
	known := func(ws ...string) []word {
		var out []word
		for _, w := range ws {
			out = append(out, word{text: w, known: true, line: 1})
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
		{`exec proxy-await "$@"`, nil, invocation{args: []word{}, exec: true, line: 1}, true},
		{`exec proxy-await ${EMPTY:-1s} ${D-1s} "${D}"`, nil, invocation{args: known("1s", "5s", "5s"), exec: true, line: 1}, true},
		{`exec proxy-await 'a b' "c\"d" e\ f # comment`, nil, invocation{args: known("a b", `c"d`, "e f"), exec: true, line: 1}, true},
		{`PROXY_AWAIT_TERM_DELAY=3s exec -a pa proxy-await -- app`, nil,
			invocation{args: known("--", "app"), env: []assign{{"PROXY_AWAIT_TERM_DELAY", word{text: "3s", known: true, line: 1}}}, exec: true, line: 1}, true},
		{"proxy-await -- app | tee log", nil, invocation{args: known("--", "app"), line: 1, sub: inPipeline}, true},
		{"exec proxy-await -- app 2>&1 | tee log", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inPipeline}, true},
		{"(exec proxy-await -- app)", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inParentheses}, true},
		{"exec proxy-await -- app &\nwait", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inBackground}, true},
		{"true && exec proxy-await -- app || exit 1", nil, invocation{args: known("--", "app"), line: 1, exec: true}, true},
		{"x=$(exec proxy-await -- app)", nil, invocation{args: known("--", "app"), line: 1, exec: true, sub: inSubstitution}, true},
		{"proxy-await -- app >/log 2>&1", nil, invocation{args: known("--", "app"), line: 1}, true},
		{"if [ -f /ready ]; then\n  exec proxy-await -- app\nfi", nil, invocation{args: []word{{text: "--", known: true, line: 2}, {text: "app", known: true, line: 2}}, exec: true, line: 2}, true},
		{"main() {\n  exec env A=1 tini -- proxy-await -S -- app\n}\nmain", nil,
			invocation{args: []word{{text: "-S", known: true, line: 2}, {text: "--", known: true, line: 2}, {text: "app", known: true, line: 2}},
				env: []assign{{"A", word{text: "1", known: true, line: 2}}}, exec: true, line: 2}, true},
		{"cat <<EOF\nproxy-await -- nothing\nEOF\nexec dumb-init -- proxy-await -- app", nil,
			invocation{args: []word{{text: "--", known: true, line: 4}, {text: "app", known: true, line: 4}}, exec: true, line: 4}, true},
		{"echo proxy-await; exec app", nil, invocation{}, false},
		{"# exec proxy-await -- app\nexec app", nil, invocation{}, false},
	} {
		var pos []word
		for _, p := range tc.pos {
			pos = append(pos, word{text: p, known: true})
		}
		sc := newScript(scalar{s: tc.script, line: 1, breaks: breaksOf(tc.script)}, vars, pos)
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
	sc := newScript(scalar{s: `X=1; exec proxy-await $CM $(date) ` + "`id`" + ` $X $UNSET "$1"`, line: 1}, vars, nil)
	cmds := sc.commands()
	require.Len(t, cmds, 4, "X=1, date, id, exec proxy-await")
	assert.Equal(t, []command{{known("date"), inSubstitution}, {known("id"), inSubstitution}}, []command{{cmds[1].words, cmds[1].sub}, {cmds[2].words, cmds[2].sub}})
	inv, ok := commandInvocation(cmds[0])
	require.False(t, ok)
	inv, ok = commandInvocation(cmds[3])
	require.True(t, ok)
	var froms []string
	for _, w := range inv.args {
		if !w.known {
			froms = append(froms, w.from)
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
	scalars := func(ss ...string) []scalar {
		var out []scalar
		for _, s := range ss {
			out = append(out, scalar{s: s, line: 1})
		}
		return out
	}
	for _, tc := range []struct {
		image         string
		command, args []scalar
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
		c := &container{image: tc.image, command: tc.command, args: tc.args, vars: &environment{vars: map[string]variable{}}}
		inv, ok := invocationOf(c, tc.entry)
		assert.Equal(t, tc.ok, ok, "%+v", tc)
		var got []string
		for _, w := range inv.args {
			got = append(got, w.text)
		}
		assert.Equal(t, tc.want, got, "%+v", tc)
		assert.Equal(t, tc.shell, inv.shell, "%+v", tc)
	}
}

// preStop time is read where the hook says it: a sleep action, sleep, or a
// script that starts with sleep.
func TestPreStopTime(t *testing.T) {
	for text, want := range map[string]string{
		"sleep: {seconds: 7}":                                 "7s",
		"exec: {command: [sleep, '5']}":                       "5s",
		"exec: {command: [/bin/sleep, 1m]}":                   "1m0s",
		"exec: {command: [sleep, '0.5']}":                     "500ms",
		"exec: {command: [sh, -c, 'sleep 3; nginx -s quit']}": "3s",
		"exec: {command: [nginx, -s, quit]}":                  "0s",
		"httpGet: {path: /drain, port: 8080}":                 "0s",
		"exec: {command: [sleep, infinity]}":                  "0s",
	} {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(text), &n))
		assert.Equal(t, want, dur(preStopTime(n.Content[0])), text)
	}
}

// A word inside a multi-line scalar has the line it is on in the file: a
// literal block keeps its lines, a folded block and a quoted scalar over
// several lines are found again in the text.
func TestScalarLines(t *testing.T) {
	text := "a:\n  - |\n    one\n    two three\n  - >\n    four\n    five\n\n    six\n  - \"seven\n    eight\"\n"
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(text), &n))
	f := &fileLines{data: []byte(text)}
	seq := get(n.Content[0], "a").Content
	lineOf := func(i int, w string) int {
		v := f.scalar(seq[i])
		return v.lineAt(strings.Index(v.s, w))
	}
	assert.Equal(t, 3, lineOf(0, "one"))
	assert.Equal(t, 4, lineOf(0, "three"))
	assert.Equal(t, 6, lineOf(1, "four"))
	assert.Equal(t, 7, lineOf(1, "five"))
	assert.Equal(t, 9, lineOf(1, "six"))
	assert.Equal(t, 10, lineOf(2, "seven"))
	assert.Equal(t, 11, lineOf(2, "eight"))
}
