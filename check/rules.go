// rules.go: the rules of --check, as data: each one's name (stable: CI
// scripts and docs/check.md name them), its level, when it is reported
// and the fix. docs/check.md's table is this table (a test holds it so).
// The judgements are in judge.go (a container that runs proxy-await) and
// jobs.go (what a pod shows as a whole).

package check

// Rule is one of --check's rules.
type Rule struct {
	Name    string
	Level   string // Error or Warning
	Summary string // when it is reported
	Fix     string
}

// The rules' names.
const (
	ruleInput             = "input"
	ruleSkipped           = "skipped"
	ruleFlags             = "flags"
	ruleIgnoredVariable   = "ignored-variable"
	ruleUnknownValue      = "unknown-value"
	ruleShellForm         = "shell-form"
	rulePresetMismatch    = "preset-mismatch"
	ruleShutdownDisabled  = "shutdown-disabled"
	ruleJobNeverCompletes = "job-never-completes"
	ruleRetryLosesProxy   = "retry-loses-proxy"
	ruleProxyLossHangs    = "proxy-loss-hangs"
	ruleGracePeriod       = "grace-period"
	ruleProxyStopsFirst   = "proxy-stops-first"
	ruleProbesBusy        = "probes-keep-drain-busy"
	ruleShutdownNotNeeded = "shutdown-not-needed"
	ruleMisspeltKey       = "misspelt-key"
	ruleNamespaceConflict = "namespace-conflict"
)

// Rules are --check's rules, in the order docs/check.md lists them.
var Rules = []Rule{
	{ruleInput, Error,
		"a file cannot be read or parsed, is past a bound on what is read, is a Helm template (`{{ ... }}`), or has a Kubernetes object (`apiVersion` and `kind`) with a mapping that has a key twice, which the API server's strict field validation refuses",
		"as the message says: render a chart first (`helm template CHART | proxy-awaitctl check -`), keep one of the two keys, split what is too large"},
	{ruleSkipped, Warning,
		"a document that is no Kubernetes object (it has no `kind`: an OpenAPI document, a JSON Schema, a Helm values file) is not checked; a key given twice in it is no error, as it is none of the API server's business (one warning a file; a Helm chart's own files, beside its `Chart.yaml`, get none)",
		"nothing, if the file is no manifest; else its `apiVersion` and `kind`"},
	{ruleFlags, Error,
		"proxy-await would refuse its flags or variables at start; the message is its usage error",
		"as the message says; a flag and its value written as one list element (`\"--timeout 60s\"`) are two elements"},
	{ruleIgnoredVariable, Warning,
		"a `PROXY_AWAIT_` variable that proxy-await does not read: misspelt (`PROXY_AWAIT_TERMDELAY`), or a mode's (`PROXY_AWAIT_CHECK`, `PROXY_AWAIT_INSTALL`, `PROXY_AWAIT_VERSIONS`), which are chosen on the command line only: it would warn at start and ignore it, and the application runs",
		"the name the hint gives; for a mode's, unset it"},
	{ruleUnknownValue, Warning,
		"a rule could not be judged because a value it needs comes from outside the manifest: `valueFrom`, an `envFrom` the input does not hold, a `$(VAR)` the container does not define, a shell variable or command substitution, a sidecar's configuration file; the message names the value, its source and the rules not judged",
		"put the value in the manifest, or the ConfigMap or Secret it comes from in the input, to have it judged"},
	{ruleShellForm, Error,
		"proxy-await runs its COMMAND under `sh -c` without `exec`, or with an `exec` that replaces only a subshell (in a pipeline, `( ... )`, `&`): the shell is PID 1 and gets the kubelet's SIGTERM (not for `--install` or a wait without COMMAND, whose signals do not matter)",
		"`exec proxy-await ...` as a statement of the script itself, or no shell"},
	{rulePresetMismatch, Error,
		"proxy-await would wait forever: its preset's mesh is not the pod's (`--proxy linkerd`, the default, in an Istio pod: a pod has one mesh), the pod has none (injection disabled, Istio ambient mode, Dapr without `dapr.io/enabled`), the proxy answers on another port (`config.linkerd.io/admin-port`) or not at all (Cloud SQL Auth Proxy without `--health-check`), or an init container waits for a classic sidecar that starts only after it",
		"the presets of the sidecars the pod shows (the message lists them), `--port`, the proxy's flag, or wait in the application's container"},
	{ruleShutdownDisabled, Error,
		"`-S` POSTs to an endpoint that is off (Linkerd without `config.linkerd.io/proxy-admin-shutdown: enabled`, off by default since 2.16; Cloud SQL Auth Proxy without `--quitquitquit`; consul-dataplane's lifecycle off) or to another port (a moved graceful port)",
		"the annotation or flag named, or `--shutdown-url`"},
	{ruleJobNeverCompletes, Error,
		"a Job's or CronJob's classic sidecar that nothing stops: its proxy-await has no `-S` or `-S` does not reach that sidecar, or no container runs proxy-await and nothing the application's shell runs calls the sidecar's quit endpoint: a statement of its script, behind wrappers (`timeout`, `command`, `env`, `nice`, `nohup`), in a command substitution, a trap on EXIT, `eval` or a nested `sh -c` (a folded scalar, `- >`, joins a script's lines into one command)",
		"`proxy-await -S` with every sidecar's preset in `--proxy`, or a native sidecar"},
	{ruleRetryLosesProxy, Error,
		"a Job's or CronJob's pod with `restartPolicy: OnFailure`, a classic sidecar and `-S` without `--keep-proxy-on-failure`: after the first failure the proxy is shut down, and the application's container, restarted in the same pod, waits for it forever",
		"`--keep-proxy-on-failure`, or `restartPolicy: Never`"},
	{ruleProxyLossHangs, Warning,
		"a Job's or CronJob's pod with a classic sidecar and `restartPolicy: Never`, whose proxy-await has no `--proxy-lost` and whose Job (or pod) no `activeDeadlineSeconds`: a proxy that dies while the application runs is not restarted, and the Job hangs on it",
		"`--proxy-lost` (the application is stopped, proxy-await exits 69, and the Job retries in a new pod), or `activeDeadlineSeconds`"},
	{ruleGracePeriod, Error,
		"preStop + `--term-delay` + `--kill-after` (+ `--shutdown-timeout` with `-S`) > `terminationGracePeriodSeconds` (default 30): the kubelet's SIGKILL comes first",
		"a longer grace period, or shorter delays"},
	{ruleProxyStopsFirst, Warning,
		"a sidecar stops taking new connections before proxy-await delivers the stop signal (preStop + `--term-delay`): Linkerd's `config.alpha.linkerd.io/proxy-wait-before-exit-seconds` (default 0), Istio's `terminationDrainDuration` (default 5s; a native Istio sidecar's `drainDuration`, default 45s, from the deletion on), Dapr's `dapr.io/graceful-shutdown-seconds` (default 5), the Cloud SQL Auth Proxy's preStop and `--min-sigterm-delay`",
		"raise the setting named, or use a native sidecar"},
	{ruleProbesBusy, Warning,
		"`--drain-quiet` with a readiness or liveness probe against a port the drain watches, every `periodSeconds` no longer than the quiet period: the kubelet's probes never let the drain be quiet, and the stop signal waits the whole `--term-delay` (not a startup probe, which the kubelet stops running once it has succeeded)",
		"serve the probes with `--probe-port`, the probe's own check as `--app-probe` (`httpGet /healthz` on 8080: `--app-probe http://127.0.0.1:8080/healthz`), and point them at it"},
	{ruleShutdownNotNeeded, Warning,
		"`-S` where every sidecar it reaches is native: the kubelet stops those after the application",
		"drop `-S`"},
	{ruleMisspeltKey, Warning,
		"a label or annotation that is a near miss of one a proxy reads (`dapr.io/enable` for `dapr.io/enabled`): the proxy never sees it",
		"the spelling the message gives"},
	{ruleNamespaceConflict, Warning,
		"the input defines the pod's Namespace more than once with different labels or annotations (a kustomize base and an overlay): the pod is judged with its own file's definition, else the one in the nearest directory",
		"check what is deployed: `kustomize build overlay | proxy-awaitctl check -`"},
}

// levelOf is a rule's level.
func levelOf(name string) string {
	for _, r := range Rules {
		if r.Name == name {
			return r.Level
		}
	}
	panic("check: no rule " + name)
}
