package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
	"go.yaml.in/yaml/v3"
)

// small are bounds that the tests reach in a few kilobytes, so that a test
// of what is past a bound costs little under -race. The messages and the
// arithmetic are those of DefaultBounds; only the numbers shrink.
var small = Bounds{Input: 1 << 20, Document: 64 << 10, Nodes: 10_000, Expansion: 10_000, NestedBytes: 16 << 10, NestedNodes: 1_000}

// messages are the problems' texts, as FILE:LINE: message.
func messages(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message))
	}
	return out
}

// "-" reads stdin; a caller without a Stdin gets a problem, not a panic.
func TestStdin(t *testing.T) {
	in := Read([]string{"-"}, Options{Stdin: strings.NewReader("kind: Pod\nmetadata: {name: listed}\nspec:\n  containers: [{name: app, image: app}]\n")})
	assert.Empty(t, in.Problems)
	require.Len(t, in.Pods, 1)
	assert.Equal(t, "<stdin>", in.Pods[0].File)
	assert.Equal(t, 1, in.Read)

	in = Read([]string{"-"}, Options{})
	assert.Equal(t, []Problem{{File: "<stdin>", Message: "no standard input to read"}}, in.Problems)
}

// The parser's errors give the line that is wrong, whether yaml.v3's
// scanner or its parser found it (they count lines differently), counted
// from the file's start.
func TestNotYAMLLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"a: b\n\tc: d\n", "x.yaml:2: not YAML: found a tab character that violates indentation"},
		{"a: [b\nc: d\n", "x.yaml:2: not YAML: did not find expected ',' or ']'"},
		{"kind: Pod\n---\nkind: Pod\n---\na: b\nc: [d\ne: f\n", "x.yaml:6: not YAML: did not find expected ',' or ']'"},
		{"a: *nowhere\n", "x.yaml:1: not YAML: unknown anchor 'nowhere' referenced"},
		{"kind: Pod\n---\n- a\nb: c\n", "x.yaml:3: not YAML: did not find expected '-' indicator"},
	} {
		in := newInput(Options{})
		in.parseFile("x.yaml", []byte(tc.text), false)
		assert.Equal(t, []string{tc.want}, messages(in.Problems), "%q", tc.text)
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
// one whose text holds too many nodes for its size.
func TestLargeDocuments(t *testing.T) {
	big := "---\nkind: ConfigMap\ndata:\n  x: " + strings.Repeat("y", small.Document) + "\n"
	dense := "---\nkind: ConfigMap\ndata: [" + strings.Repeat("1,", small.Nodes/2) + "1]\n"
	data := []byte("kind: Pod\n" + big + dense + "---\nkind: Pod\n")
	in := newInput(Options{Bounds: small})
	alloc := testutil.Allocated(func() { in.parseFile("big.yaml", data, false) })
	assert.Equal(t, []string{
		fmt.Sprintf("big.yaml:2: a document of %d bytes, more than is read at once (64 KiB, or about 10000 nodes): split it, a List into its items", len(big)),
		fmt.Sprintf("big.yaml:6: a document of %d bytes, more than is read at once (64 KiB, or about 10000 nodes): split it, a List into its items", len(dense)),
	}, messages(in.Problems))
	// A parse of the dense document alone would take some 250 bytes a node.
	assert.Less(t, alloc, uint64(250*small.Nodes/10), "bytes allocated to refuse %d bytes", len(data))
}

// deployments is a List of n Deployments that run proxy-await, as kubectl
// prints a large namespace.
func deployments(n int) []byte {
	var list strings.Builder
	list.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
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
	return []byte(list.String())
}

// The default bounds admit a List of 5000 Deployments, as kubectl prints a
// large namespace; one of 500 is read whole, every pod of it.
func TestLargeList(t *testing.T) {
	assert.NoError(t, admit(deployments(5000), DefaultBounds), "a List of 5000 Deployments")
	in := newInput(Options{})
	in.parseFile("list.yaml", deployments(500), false)
	require.Empty(t, in.Problems)
	assert.Len(t, in.Pods, 500)
}

// A block scalar's lines are no nodes: a ConfigMap whose data is a CSV
// (more commas and lines than the bound on nodes would allow if they
// counted) is read; what only looks like a block scalar to a reading of the
// text is not let through on that account.
func TestBlockScalarsAreNoNodes(t *testing.T) {
	var csv strings.Builder
	for csv.Len() < small.Document*3/4 {
		csv.WriteString("    1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0\n")
	}
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: table\ndata:\n  table.csv: |\n" + csv.String() + "  other: x\n"
	require.Greater(t, nodesAtMost([]byte(doc)), small.Nodes, "the text alone would be refused")
	in := newInput(Options{Bounds: small})
	in.parseFile("csv.yaml", []byte(doc), false)
	assert.Empty(t, in.Problems)

	// The same lines inside a quoted scalar that the text reading takes
	// for a block scalar's header: their commas are in a flow sequence.
	fake := "kind: ConfigMap\ndata:\n  a: \"x\n b: |\n  y\"\n  c: [" + strings.Repeat("1,", small.Nodes) + "1]\n"
	in = newInput(Options{Bounds: small})
	in.parseFile("fake.yaml", []byte(fake), false)
	require.Len(t, in.Problems, 1)
	assert.Contains(t, in.Problems[0].Message, "more than is read at once")
}

// Reading is bounded in total: past Bounds.Input the input is refused,
// having cost only what was read of it, whether one file is larger or
// files that each are not add up to more.
func TestInputBound(t *testing.T) {
	dir := t.TempDir()
	sized := func(name string, size int) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(int64(size)))
		require.NoError(t, f.Close())
		return p
	}
	bounds := small
	bounds.Input = 256 << 10
	tiny := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(tiny, []byte("kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n"), 0o644))
	past := ": past 256 KiB of manifests in all, the most that is read: this and what follows is not read; check it in parts"
	huge := sized("huge.yaml", bounds.Input+1)
	in := Read([]string{tiny, huge, tiny}, Options{Bounds: bounds})
	assert.Equal(t, []string{huge + ":0" + past}, messages(in.Problems))
	assert.Equal(t, 1, in.Read)

	half, other := sized("half.yaml", bounds.Input/2+1), sized("other.yaml", bounds.Input/2+1)
	in = Read([]string{half, other, tiny}, Options{Bounds: bounds})
	require.Len(t, in.Problems, 2)
	assert.Contains(t, in.Problems[0].Message, "more than is read at once", "the first half is read, and its document is over the bound")
	assert.Equal(t, other+":0"+past, messages(in.Problems)[1])
	assert.Equal(t, 1, in.Read)

	in = Read([]string{tiny}, Options{})
	assert.Equal(t, DefaultBounds.Input-len("kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n"), in.left, "no Bounds: the default ones")
}

// A setting that holds YAML of its own is parsed within its bounds too:
// "[a,a,...]" four times past the size bound, which took 1.4 s and 551 MB
// at 4 MB when parsed whole, costs a look at its text and is refused; so is
// a dense setting below the size bound, and one past it without a comma.
// Within the bounds, the field is read.
func TestNestedIsBounded(t *testing.T) {
	p := &Pod{bounds: small}
	for _, tc := range []struct{ name, setting string }{
		{"dense", "[" + strings.Repeat("a,", 2*small.NestedBytes) + "a]"},
		{"dense-small", "[" + strings.Repeat("a,", small.NestedNodes) + "a]"},
		{"long", "terminationDrainDuration: " + strings.Repeat("1", 4*small.NestedBytes) + "s"},
	} {
		var err error
		alloc := testutil.Allocated(func() { _, _, err = p.Nested(tc.setting, "terminationDrainDuration") })
		assert.True(t, ErrPastBound(err), "%s: %v", tc.name, err)
		assert.EqualError(t, err, "larger than is read of an annotation (16 KiB, the most the API server takes of a pod's annotations, or about 1000 YAML nodes)")
		// A parse would take some 250 bytes a node.
		assert.Less(t, alloc, uint64(250*small.NestedNodes/10), "%s: allocated for %d bytes", tc.name, len(tc.setting))
	}
	v, set, err := p.Nested("terminationDrainDuration: 30s\nproxyMetadata: {EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\"}\n", "terminationDrainDuration")
	require.NoError(t, err)
	assert.True(t, set)
	assert.Equal(t, "30s", v)
}

// The kubelet expands $(VAR) in command, args and env values from the
// variables defined before (for env) or at all (for command and args); $$
// is a literal $. A reference that the manifest does not define, or whose
// value is not in the input, is unknown, with where it comes from.
func TestKubeletExpansion(t *testing.T) {
	e := &Variables{Set: map[string]Variable{
		"A":      {Value: Value{Text: "a", Known: true}, Line: 1},
		"SECRET": {Value: Value{From: "valueFrom Secret app (key s), which the input does not hold"}, Line: 2},
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
		v := e.Expand(tc.in)
		assert.Equal(t, Value{Text: tc.out, Known: tc.known, From: tc.from}, v, tc.in)
	}
	e.Open = "envFrom ConfigMap x (which the input does not hold), if it sets it"
	assert.Equal(t, "$(B), which may come from "+e.Open, e.Expand("$(B)").From, "envFrom may define B")
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
		return v.LineAt(strings.Index(v.Text, w))
	}
	assert.Equal(t, 3, lineOf(0, "one"))
	assert.Equal(t, 4, lineOf(0, "three"))
	assert.Equal(t, 6, lineOf(1, "four"))
	assert.Equal(t, 7, lineOf(1, "five"))
	assert.Equal(t, 9, lineOf(1, "six"))
	assert.Equal(t, 10, lineOf(2, "seven"))
	assert.Equal(t, 11, lineOf(2, "eight"))
}

// A directory is read for its manifest files: a FIFO or a device that
// happens to be called *.yaml is named as no manifest, never opened, which
// would wait for a writer for ever. A link to a manifest is read as the
// manifest.
func TestDirectoryReadsOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "a.yaml"), 0o644))
	pod := "kind: Pod\nmetadata: {name: shell}\nspec:\n  containers: [{name: app, image: app}]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(pod), 0o644))
	require.NoError(t, os.Symlink("b.yaml", filepath.Join(dir, "c.yaml")))

	done := make(chan *Input, 1)
	go func() { done <- Read([]string{dir}, Options{}) }()
	select {
	case in := <-done:
		assert.Equal(t, []string{filepath.Join(dir, "a.yaml") + ":0: not a regular file"}, messages(in.Problems))
		var files []string
		for _, p := range in.Pods {
			files = append(files, p.File)
		}
		assert.Equal(t, []string{filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")}, files)
	case <-time.After(20 * time.Second):
		t.Fatal("still reading the directory after 20s")
	}
}

// What inject needs of a pod beyond its containers: the Services of the
// input that send to it (by namespace and selector), its volumes and
// their ConfigMaps, each container's mounts, and hostNetwork.
func TestServicesVolumesAndMounts(t *testing.T) {
	in := Read([]string{"-"}, Options{Stdin: strings.NewReader(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      hostNetwork: true
      containers:
        - name: web
          image: web:1
          volumeMounts:
            - {name: config, mountPath: /etc/web, subPath: web.yaml}
      volumes:
        - name: config
          configMap:
            name: web-config
            items: [{key: envoy.yaml, path: bootstrap.yaml}]
        - {name: scratch, emptyDir: {}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {envoy.yaml: "admin: {}"}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}, {port: 9090}]
---
apiVersion: v1
kind: Service
metadata: {name: other, namespace: shop}
spec:
  selector: {app: web, tier: back}
---
apiVersion: v1
kind: Service
metadata: {name: elsewhere, namespace: test}
spec:
  selector: {app: web}
---
apiVersion: v1
kind: Service
metadata: {name: external, namespace: shop}
spec:
  ports: [{port: 443}]
`)})
	require.Empty(t, in.Problems)
	require.Len(t, in.Pods, 1)
	p := in.Pods[0]
	assert.True(t, p.HostNetwork)
	assert.Equal(t, []Volume{{Name: "config", ConfigMap: "web-config", Items: []KeyPath{{"envoy.yaml", "bootstrap.yaml"}}}, {Name: "scratch"}}, p.Volumes)
	assert.Equal(t, []Mount{{Name: "config", Path: "/etc/web", SubPath: "web.yaml"}}, p.Containers[0].Mounts)
	svcs := in.Services(p)
	require.Len(t, svcs, 1, "the Service of its namespace whose selector its labels match")
	assert.Equal(t, "web", svcs[0].Name)
	assert.Equal(t, []string{"http", "9090"}, svcs[0].TargetPorts)
	v, ok := in.ConfigMap("shop", "web-config", "envoy.yaml")
	assert.True(t, ok)
	assert.Equal(t, "admin: {}", v)
	_, ok = in.ConfigMap("test", "web-config", "envoy.yaml")
	assert.False(t, ok)
}

// Reread reads the same files again, in their order, one of them with
// another text: what it holds replaces what the file held.
func TestReread(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(a, []byte("kind: Namespace\nmetadata: {name: shop, annotations: {linkerd.io/inject: enabled}}\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("kind: Pod\nmetadata: {name: before, namespace: shop}\nspec:\n  containers: [{name: app, image: app}]\n"), 0o644))
	in := Read([]string{dir, filepath.Join(dir, "missing.yaml")}, Options{Keep: true})
	require.Len(t, in.Files, 3)
	again := in.Reread(map[int][]byte{1: []byte("kind: Pod\nmetadata: {name: after, namespace: shop}\nspec:\n  containers: [{name: app, image: app}, {name: two, image: app}]\n")})
	require.Len(t, again.Files, 3)
	assert.Equal(t, []string{a, b, filepath.Join(dir, "missing.yaml")}, []string{again.Files[0].Name, again.Files[1].Name, again.Files[2].Name})
	require.Len(t, again.Pods, 1)
	p := again.Pods[0]
	assert.Equal(t, "after", p.Name)
	assert.Len(t, p.Containers, 2)
	again.Link(p)
	require.NotNil(t, p.NS, "the Namespace of the other file")
	assert.Equal(t, "shop", p.NS.Name)
	assert.Equal(t, []string{filepath.Join(dir, "missing.yaml") + ":0: no such file or directory"}, messages(again.Problems))
	assert.Equal(t, 2, again.Read)
}
