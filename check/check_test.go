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

	"github.com/proxy-await/proxy-await/config"
)

// lines checks paths and returns every finding as --check prints it.
func lines(t *testing.T, versions string, paths ...string) []string {
	t.Helper()
	opt := Options{Versions: map[string]config.Version{}}
	if versions != "" {
		cfg, err := config.Parse("proxy-await", []string{"--check", "--versions", versions, "x"}, func(string) (string, bool) { return "", false })
		require.NoError(t, err)
		opt.Versions = cfg.Versions
	}
	findings, _ := Paths(paths, opt)
	var out []string
	for _, f := range findings {
		out = append(out, f.String())
	}
	return out
}

const (
	durationReason = "not a duration (use 250ms, 1m30s, 2d or seconds)"
	linkerdFlip    = " (with a release before Linkerd 2.20; from Linkerd 2.20 the sidecar is native by default: state the releases with --versions linkerd=2.20)"
	istioFlip      = " (with a release before Istio 1.27 on Kubernetes 1.33; from Istio 1.27 on Kubernetes 1.33 the sidecar is native by default: state the releases with --versions istio=1.27,kubernetes=1.33)"
)

// Each rule's file has manifests that trip it and near misses that must
// not: the findings are exactly these lines, at the containers' lines.
func TestRules(t *testing.T) {
	// shutdownOff: shutdown-disabled.yaml's findings where Linkerd's endpoint is off
	// unless the pod turns it on.
	shutdownOff := []string{
		`testdata/shutdown-disabled.yaml:16: error: shutdown-disabled: Job/linkerd-off container job: -S POSTs http://127.0.0.1:4191/shutdown, which the Linkerd sidecar does not serve, so it would keep running: Linkerd answers it with 404 unless the pod has config.linkerd.io/proxy-admin-shutdown: enabled (off by default since Linkerd 2.16)`,
		`testdata/shutdown-disabled.yaml:54: error: shutdown-disabled: Job/consul-port container job: -S POSTs http://127.0.0.1:20600/graceful_shutdown, but the Consul sidecar here takes it on port 20700 (consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port: "20700"): set --shutdown-url http://127.0.0.1:20700/graceful_shutdown`,
		`testdata/shutdown-disabled.yaml:85: error: shutdown-disabled: Job/cloudsql-no-quit container job: -S POSTs http://127.0.0.1:9091/quitquitquit, which the Cloud SQL Auth Proxy sidecar does not serve, so it would keep running: the proxy serves /quitquitquit only when started with --quitquitquit (add it to its args)`,
		`testdata/shutdown-disabled.yaml:127: error: shutdown-disabled: Job/linkerd-disabled container job: -S POSTs http://127.0.0.1:4191/shutdown, which the Linkerd sidecar does not serve, so it would keep running: the pod has config.linkerd.io/proxy-admin-shutdown: "disabled"`,
	}
	for _, tc := range []struct {
		file     string
		versions string
		want     []string
	}{
		{"flags.yaml", "", []string{
			`testdata/flags.yaml:8: error: flags: Pod/bad-duration container app: invalid value "soon" for --term-delay: ` + durationReason,
			`testdata/flags.yaml:19: error: flags: Pod/bad-variable container app: invalid value "10 seconds" for $PROXY_AWAIT_KILL_AFTER (--kill-after): ` + durationReason,
			`testdata/flags.yaml:70: error: flags: Deployment/bool-space container app: invalid value "false" for --timeout-fatal: a boolean flag takes its value only after = (hint: write --timeout-fatal=false, or put -- before a command named false)`,
			`testdata/flags.yaml:82: warning: ignored-variable: Pod/misspelt container app: unknown variable $PROXY_AWAIT_TERMDELAY: ignored (hint: did you mean $PROXY_AWAIT_TERM_DELAY?)`,
			`testdata/flags.yaml:99: warning: ignored-variable: Pod/mode-variable container app: variable $PROXY_AWAIT_CHECK: ignored, --check is read from the command line only (hint: unset it, and give --check on the command line where it is meant)`,
			`testdata/flags.yaml:99: error: grace-period: Pod/mode-variable container app: preStop 0s + term-delay 40s + kill-after 0s = 40s > terminationGracePeriodSeconds 30s: the kubelet's SIGKILL comes first; raise terminationGracePeriodSeconds to 40, or shorten them`,
		}},
		{"grace-period.yaml", "", []string{
			`testdata/grace-period.yaml:14: error: grace-period: Deployment/too-long container web: preStop 5s + term-delay 20s + kill-after 10s = 35s > terminationGracePeriodSeconds 30s: the kubelet's SIGKILL comes first; raise terminationGracePeriodSeconds to 35, or shorten them`,
			`testdata/grace-period.yaml:53: error: grace-period: Job/with-shutdown container job: preStop 2s + term-delay 0s + kill-after 1m0s + shutdown-timeout 5s = 1m7s > terminationGracePeriodSeconds 20s: the kubelet's SIGKILL comes first; raise terminationGracePeriodSeconds to 67, or shorten them`,
		}},
		{"job-never-completes.yaml", "", []string{
			`testdata/job-never-completes.yaml:15: error: job-never-completes: Job/linkerd-classic container migrate: the classic Linkerd sidecar (linkerd.io/inject: "enabled") keeps running after the application exits, so the Job never completes: add -S (--shutdown)`,
			`testdata/job-never-completes.yaml:38: error: job-never-completes: CronJob/report container report: -S does not stop the classic Cloud SQL Auth Proxy sidecar (container cloud-sql-proxy), so the CronJob never completes: add cloudsql to --proxy (--proxy istio,cloudsql)`,
		}},
		{"preset-mismatch.yaml", "", []string{
			`testdata/preset-mismatch.yaml:11: error: preset-mismatch: Pod/default-in-istio container app: --proxy linkerd waits for http://127.0.0.1:4191/ready, but the pod's mesh is Istio (sidecar.istio.io/inject: "true"), and a pod has one mesh: it would wait forever; use --proxy istio`,
			`testdata/preset-mismatch.yaml:51: error: preset-mismatch: Deployment/ambient container app: --proxy istio waits for http://127.0.0.1:15021/healthz/ready, but the pod has no Istio sidecar (namespace shop has istio.io/dataplane-mode: ambient, Istio's mode without sidecars): it would wait forever; wait for the proxy the pod has, or use --proxy none`,
			`testdata/preset-mismatch.yaml:65: error: preset-mismatch: Pod/admin-port container app: --proxy linkerd waits for http://127.0.0.1:4191/ready, but the Linkerd sidecar here answers on port 4192 (config.linkerd.io/admin-port: "4192"): set --port 4192`,
			`testdata/preset-mismatch.yaml:76: error: preset-mismatch: Pod/no-health-check container app: proxy-await waits for http://127.0.0.1:9090/startup, which the Cloud SQL Auth Proxy sidecar never answers, so it would wait forever: the proxy serves /startup only when started with --health-check (add it to its args)`,
			`testdata/preset-mismatch.yaml:92: error: preset-mismatch: Pod/init-waits container wait: this init container waits for the classic Dapr sidecar (dapr.io/enabled: "true"), which starts only after every init container has finished: it waits forever; wait in the application's container (proxy-await -- APP) or use a native sidecar`,
			`testdata/preset-mismatch.yaml:121: error: preset-mismatch: Pod/dapr-not-enabled container app: --proxy dapr waits for http://127.0.0.1:3500/v1.0/healthz/outbound, but the pod has no Dapr sidecar (no dapr.io/enabled: "true" on the pod, which its injector needs): it would wait forever; wait for the proxy the pod has, or use --proxy none`,
		}},
		{"shutdown-disabled.yaml", "", shutdownOff},
		// From Linkerd 2.16 on, through the last classic default (2.19), the
		// endpoint needs the annotation: the same findings as with no release stated.
		{"shutdown-disabled.yaml", "linkerd=2.16", shutdownOff},
		{"shutdown-disabled.yaml", "linkerd=2.19", shutdownOff},
		// Before Linkerd 2.16 the endpoint was on without the annotation.
		{"shutdown-disabled.yaml", "linkerd=2.15", shutdownOff[1:]},
		{"proxy-stops-first.yaml", "", []string{
			`testdata/proxy-stops-first.yaml:19: warning: proxy-stops-first: Deployment/linkerd-short container web: the classic Linkerd sidecar stops taking new connections 10s after the pod is deleted (config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "10"), but proxy-await holds the stop signal for preStop 5s + term-delay 20s = 25s: raise config.alpha.linkerd.io/proxy-wait-before-exit-seconds to 25 or more`,
			`testdata/proxy-stops-first.yaml:67: warning: proxy-stops-first: Deployment/istio-default container web: the classic Istio sidecar stops taking new connections 5s after the pod is deleted (terminationDrainDuration in proxy.istio.io/config, default 5s), but proxy-await holds the stop signal for preStop 0s + term-delay 15s = 15s: raise terminationDrainDuration in proxy.istio.io/config to 15s or more` + istioFlip,
			`testdata/proxy-stops-first.yaml:105: warning: proxy-stops-first: Deployment/dapr-default container web: the classic Dapr sidecar stops taking new connections 5s after the pod is deleted (dapr.io/graceful-shutdown-seconds, default 5), but proxy-await holds the stop signal for preStop 0s + term-delay 10s = 10s: raise dapr.io/graceful-shutdown-seconds to 10 or more`,
		}},
		// A native Istio sidecar drains from the deletion on, for drainDuration.
		{"proxy-stops-first.yaml", "istio=1.27,kubernetes=1.33", []string{
			`testdata/proxy-stops-first.yaml:19: warning: proxy-stops-first: Deployment/linkerd-short container web: the classic Linkerd sidecar stops taking new connections 10s after the pod is deleted (config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "10"), but proxy-await holds the stop signal for preStop 5s + term-delay 20s = 25s: raise config.alpha.linkerd.io/proxy-wait-before-exit-seconds to 25 or more`,
			`testdata/proxy-stops-first.yaml:105: warning: proxy-stops-first: Deployment/dapr-default container web: the classic Dapr sidecar stops taking new connections 5s after the pod is deleted (dapr.io/graceful-shutdown-seconds, default 5), but proxy-await holds the stop signal for preStop 0s + term-delay 10s = 10s: raise dapr.io/graceful-shutdown-seconds to 10 or more`,
		}},
		{"shutdown-not-needed.yaml", "", []string{
			`testdata/shutdown-not-needed.yaml:16: warning: shutdown-not-needed: Job/cloudsql-native container export: the Cloud SQL Auth Proxy sidecar is native here (an init container with restartPolicy: Always): the kubelet stops it once the application has exited; drop -S`,
		}},
		{"shutdown-not-needed.yaml", "linkerd=2.20", []string{
			`testdata/shutdown-not-needed.yaml:16: warning: shutdown-not-needed: Job/cloudsql-native container export: the Cloud SQL Auth Proxy sidecar is native here (an init container with restartPolicy: Always): the kubelet stops it once the application has exited; drop -S`,
			`testdata/shutdown-not-needed.yaml:52: warning: shutdown-not-needed: Job/linkerd-default container job: the Linkerd sidecar is native here (the default from Linkerd 2.20): the kubelet stops it once the application has exited; drop -S`,
		}},
		{"shell-form.yaml", "", []string{
			`testdata/shell-form.yaml:8: error: shell-form: Pod/no-exec container app: proxy-await runs under sh -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell`,
			`testdata/shell-form.yaml:13: error: shell-form: Pod/no-exec container setup: proxy-await runs under bash -c without exec: the shell gets the kubelet's SIGTERM, not proxy-await; write exec proxy-await ... in the script, or drop the shell`,
			`testdata/shell-form.yaml:32: error: flags: Pod/exec container bad: invalid value "later" for --kill-after: ` + durationReason,
		}},
	} {
		t.Run(tc.file+"/"+tc.versions, func(t *testing.T) {
			assert.Equal(t, tc.want, lines(t, tc.versions, filepath.Join("testdata", tc.file)))
		})
	}
}

// The releases decide whether an injected sidecar is native, and so
// whether a Job's proxy-await needs -S: Linkerd's from 2.20, Istio's from
// 1.27 on Kubernetes 1.33. Without them, the finding says which release
// flips it.
func TestVersions(t *testing.T) {
	const file = "testdata/versions.yaml"
	linkerdJob := `testdata/versions.yaml:12: error: job-never-completes: Job/linkerd container job: the classic Linkerd sidecar (linkerd.io/inject: "enabled") keeps running after the application exits, so the Job never completes: add -S (--shutdown)`
	istioJob := `testdata/versions.yaml:26: error: job-never-completes: Job/istio container job: the classic Istio sidecar (sidecar.istio.io/inject: "true") keeps running after the application exits, so the Job never completes: add -S (--shutdown)`
	for _, tc := range []struct {
		versions string
		want     []string
	}{
		{"", []string{linkerdJob + linkerdFlip, istioJob + istioFlip}},
		{"linkerd=2.19,istio=1.26", []string{linkerdJob, istioJob}},
		{"linkerd=2.20,istio=1.27,kubernetes=1.33", nil},
		{"linkerd=v2.20.1,istio=1.28,kubernetes=1.32", []string{istioJob}},
		{"linkerd=3.0,istio=1.27", []string{istioJob + " (with a release before Istio 1.27 on Kubernetes 1.33; from Istio 1.27 on Kubernetes 1.33 the sidecar is native by default: state the releases with --versions kubernetes=1.33)"}},
	} {
		assert.Equal(t, tc.want, lines(t, tc.versions, file), "--versions %s", tc.versions)
	}
}

// A directory is read recursively for *.yaml, *.yml and *.json, hidden
// directories left out; JSON (tab-indented) and kind: List are read; a file
// that is not YAML is a finding at its line, and the documents around it are
// still checked; a path that is missing is a finding of its own.
func TestInputs(t *testing.T) {
	assert.Equal(t, []string{
		`testdata/tree/job.json:11: error: job-never-completes: Job/json-job container job: the classic Linkerd sidecar (linkerd.io/inject: "enabled") keeps running after the application exits, so the Job never completes: add -S (--shutdown)` + linkerdFlip,
		`testdata/tree/jobs/list.yml:14: error: flags: Pod/listed container app: invalid value "never" for --kill-after: ` + durationReason,
		`testdata/input.yaml:7: error: flags: Pod/before container app: invalid value "never" for --kill-after: ` + durationReason,
		`testdata/input.yaml:13: error: input: not YAML: did not find expected ',' or '}'`,
		`testdata/input.yaml:17: error: input: its aliases expand it by more than 1000000 nodes: refused unread`,
		`testdata/input.yaml:27: error: input: an alias refers to a node that contains it`,
		`testdata/input.yaml:37: error: flags: Pod/anchors container app: invalid value "never" for $PROXY_AWAIT_KILL_AFTER (--kill-after): ` + durationReason,
		`testdata/input.yaml:43: error: flags: Pod/anchors container copy: invalid value "never" for $PROXY_AWAIT_KILL_AFTER (--kill-after): ` + durationReason,
		`testdata/missing.yaml: error: input: no such file or directory`,
	}, lines(t, "", "testdata/tree", "testdata/input.yaml", "testdata/missing.yaml"))
}

// "-" reads stdin, named <stdin> in findings.
func TestStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/tree/jobs/list.yml")
	require.NoError(t, err)
	findings, sum := Paths([]string{"-"}, Options{Stdin: strings.NewReader(string(data))})
	require.Len(t, findings, 1)
	assert.Equal(t, `<stdin>:14: error: flags: Pod/listed container app: invalid value "never" for --kill-after: `+durationReason, findings[0].String())
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
		_, bad := parse("x.yaml", []byte(tc.text))
		if assert.Len(t, bad, 1, "%q", tc.text) {
			assert.Equal(t, tc.want, bad[0].String(), "%q", tc.text)
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
	docs, bad := parse("big.yaml", data)
	runtime.ReadMemStats(&after)
	assert.Len(t, docs, 2)
	var got []string
	for _, b := range bad {
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
	docs, bad = parse("list.yaml", []byte(list.String()))
	require.Empty(t, bad)
	require.Len(t, docs, 1)
	assert.Len(t, objects(docs[0]), 5000)
}

// The kubelet expands $(VAR) in command, args and env values from the
// variables defined before (for env) or at all (for command and args); $$
// is a literal $; an unknown reference stays as written. A value from
// valueFrom is not in the manifest.
func TestKubeletExpansion(t *testing.T) {
	c := &container{env: map[string]envValue{"A": {"a", true}, "SECRET": {}}}
	for _, tc := range []struct {
		in, out string
		known   bool
	}{
		{"$(A)", "a", true},
		{"x$(A)y$(A)", "xaya", true},
		{"$$(A)", "$(A)", true},
		{"$(B)", "$(B)", true},
		{"$(SECRET)", "$(SECRET)", false},
		{"$(A", "$(A", true},
		{"$A $", "$A $", true},
	} {
		out, known := c.expand(tc.in)
		assert.Equal(t, tc.out, out, tc.in)
		assert.Equal(t, tc.known, known, tc.in)
	}
	c.envFrom = true
	_, known := c.expand("$(B)")
	assert.False(t, known, "envFrom may define B")
}

// The shell's words are what proxy-await would get: quotes removed,
// variables and "$@" expanded; what cannot be known is said so.
func TestShellWords(t *testing.T) {
	c := &container{env: map[string]envValue{"D": {"5s", true}, "EMPTY": {"", true}, "CM": {}}}
	for _, tc := range []struct {
		script string
		pos    []string
		want   invocation
		ok     bool
	}{
		{"exec proxy-await -t 1s -- /app", nil, invocation{args: []string{"-t", "1s", "--", "/app"}, exec: true, known: true}, true},
		{`set -e; cp a b && exec proxy-await --term-delay "$D" "$@"`, []string{"--", "/app", "x y"},
			invocation{args: []string{"--term-delay", "5s", "--", "/app", "x y"}, exec: true, known: true}, true},
		{`exec proxy-await "$@"`, nil, invocation{exec: true, known: true}, true},
		{`exec proxy-await ${EMPTY:-1s} ${EMPTY-1s} ${UNSET:-2s} ${D}`, nil, invocation{args: []string{"1s", "", "2s", "5s"}, exec: true, known: true}, true},
		{`exec proxy-await 'a b' "c\"d" e\ f # comment`, nil, invocation{args: []string{"a b", `c"d`, "e f"}, exec: true, known: true}, true},
		{`exec proxy-await $CM $(date) ` + "`x`", nil, invocation{args: []string{"", "", ""}, exec: true}, true},
		{`PROXY_AWAIT_TERM_DELAY=3s exec -a pa proxy-await -- app`, nil,
			invocation{args: []string{"--", "app"}, env: map[string]string{"PROXY_AWAIT_TERM_DELAY": "3s"}, exec: true, known: true}, true},
		{"proxy-await -- app | tee log", nil, invocation{args: []string{"--", "app"}, known: true}, true},
		{"echo proxy-await; exec app", nil, invocation{}, false},
	} {
		var got invocation
		ok := false
		for _, cmd := range shellCommands(tc.script, c, tc.pos) {
			if got, ok = cmd.invocation(); ok {
				break
			}
		}
		assert.Equal(t, tc.ok, ok, tc.script)
		if tc.want.env == nil && ok {
			tc.want.env = map[string]string{}
		}
		if ok {
			assert.Equal(t, tc.want, got, tc.script)
		}
	}
}

// How a container runs proxy-await: its command, its image's entrypoint
// (proxy-await's own image, or one the caller knows), or a shell script; a
// script file or another program is not proxy-await.
func TestInvocationOf(t *testing.T) {
	for _, tc := range []struct {
		c     container
		entry func(string) []string
		args  []string
		shell string
		ok    bool
	}{
		{container{command: []string{"/usr/local/bin/proxy-await"}, args: []string{"-S", "--", "x"}}, nil, []string{"-S", "--", "x"}, "", true},
		{container{image: "ghcr.io/proxy-await/proxy-await:v1.2.3@sha256:abc", args: []string{"--install", "/pa"}}, nil, []string{"--install", "/pa"}, "", true},
		{container{image: "localhost:5000/proxy-await", args: []string{"-S"}}, nil, []string{"-S"}, "", true},
		{container{image: "registry.example.com/app:1", args: []string{"-S"}}, nil, nil, "", false},
		{container{image: "registry.example.com/app:1", args: []string{"-S"}}, func(string) []string { return []string{"/proxy-await"} }, []string{"-S"}, "", true},
		{container{command: []string{"sh", "-e", "-c", "exec proxy-await -S"}}, nil, []string{"-S"}, "sh", true},
		{container{command: []string{"sh", "/entrypoint.sh"}}, nil, nil, "", false},
		{container{command: []string{"/app"}, args: []string{"proxy-await"}}, nil, nil, "", false},
	} {
		inv, ok := invocationOf(&tc.c, tc.entry)
		assert.Equal(t, tc.ok, ok, "%+v", tc.c)
		assert.Equal(t, tc.args, inv.args, "%+v", tc.c)
		assert.Equal(t, tc.shell, inv.shell, "%+v", tc.c)
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
		docs, bad := parse("x", []byte(text))
		require.Empty(t, bad)
		assert.Equal(t, want, dur(preStopTime(docs[0].root)), text)
	}
}
