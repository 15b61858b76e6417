package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// policyLabel is the label of the namespaces scenario 14's binding
// applies the policy to, and no others: the other scenarios run beside it.
const policyLabel = "proxy-await-e2e/policy"

// wrongManifests are one manifest for each rule the policy covers that
// one of --check's errors shows by itself, as the API server gets it.
var wrongManifests = map[string]string{
	"grace-period": `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "grace"},
  "spec": {"selector": {"matchLabels": {"app": "grace"}}, "template": {"metadata": {"labels": {"app": "grace"}},
  "spec": {"terminationGracePeriodSeconds": 20, "containers": [{"name": "web", "image": "registry.example.com/web:1",
  "command": ["/proxy-await/proxy-await", "--proxy", "none", "--term-delay", "15s", "--kill-after", "10s", "--", "/web"]}]}}}}`,
	"job-never-completes": `{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "never"},
  "spec": {"template": {"metadata": {"labels": {"sidecar.istio.io/inject": "true"}},
  "spec": {"restartPolicy": "Never", "containers": [{"name": "export", "image": "registry.example.com/export:1",
  "command": ["/proxy-await/proxy-await", "--proxy", "istio", "--", "/export"]}]}}}}`,
	"retry-loses-proxy": `{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "retry"},
  "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"metadata": {"annotations": {"dapr.io/enabled": "true", "dapr.io/app-id": "sync"}},
  "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "sync", "image": "registry.example.com/sync:1",
  "command": ["proxy-await", "--proxy", "dapr", "-S", "--", "/sync"]}]}}}}}}`,
	"shutdown-disabled": `{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "disabled"},
  "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
  {"name": "export", "image": "registry.example.com/export:1", "command": ["proxy-await", "--proxy", "cloudsql", "-S", "--", "/export"]},
  {"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0", "args": ["--health-check", "--port=5432", "p:r:i"]}]}}}}`,
	"preset-mismatch": `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mismatch"},
  "spec": {"selector": {"matchLabels": {"app": "orders"}}, "template": {"metadata": {"labels": {"app": "orders"}, "annotations": {"dapr.io/app-id": "orders"}},
  "spec": {"containers": [{"name": "orders", "image": "registry.example.com/orders:1",
  "command": ["proxy-await", "--proxy", "dapr", "--", "node", "app.js"]}]}}}}`,
	"shell-form": `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shell"},
  "spec": {"selector": {"matchLabels": {"app": "tool"}}, "template": {"metadata": {"labels": {"app": "tool"}},
  "spec": {"containers": [{"name": "tool", "image": "registry.example.com/tool:1",
  "command": ["dash", "-c", "proxy-await --proxy none -- /tool --all"]}]}}}}`,
}

// 14. Adoption guarded by the cluster: proxy-awaitctl policy applied to the
// API server (its binding limited to this scenario's namespaces) admits
// every file of examples/ (a server-side dry run, under Pod Security
// restricted) and refuses one wrong manifest for each rule it covers,
// with the rule's name; proxy-awaitctl inject of a Deployment and a Job
// that have no proxy-await gives manifests the policy admits, and they do
// their job: the Deployment serves through its Service and rolls out with
// no request failed, the Job completes with one shutdown POST after its
// app.
func adopt(k *kube, examplesDir string) (string, error) {
	const ns, work = "s14", "s14-work"
	defer k.clear(work)
	ctl := filepath.Join(k.run, "bin", "proxy-awaitctl")
	rules, actions, cleanup, err := k.applyPolicy(ctl)
	defer cleanup()
	if err != nil {
		return "", err
	}
	if err := k.namespace(ns, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
		policyLabel:                          "on",
	}); err != nil {
		return "", err
	}
	dir := filepath.Join(k.run, "out", ns)
	if err := k.refusesWrongManifests(ns, dir, rules); err != nil {
		return "", err
	}
	objects, err := k.admitted(ns, examplesDir)
	if err != nil {
		return "", err
	}

	// What inject makes of a Deployment and a Job without proxy-await.
	if err := k.namespace(work, map[string]string{policyLabel: "on"}); err != nil {
		return "", err
	}
	in := injector{ctl: ctl, image: proxyAwaitImage}
	server := []string{"/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/app"}
	serving, _, err := k.injectedDeployment(in, work, ctr{Command: server}, nil)
	if err != nil {
		return "", err
	}
	job, _, err := k.injectedJob(in, work, ctr{Command: jobScript(0)}, nil)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("proxy-awaitctl policy (its binding: %s) refuses %d wrong manifests, one for each rule it covers (%s); admits examples/ (%s) under enforce=restricted; an injected Deployment %s; an injected Job: Complete, %s",
		actions, len(rules), strings.Join(rules, ", "), objects, serving, job), nil
}

// applyPolicy applies proxy-awaitctl policy's policy, with a binding that
// applies it to the namespaces labelled policyLabel only and denies what it
// finds, and returns the rules it covers, in its order, the validation
// actions of the binding proxy-awaitctl wrote, and how to remove it. Where
// proxy-awaitctl policy has --action, the scenario asks for deny, as a user
// who wants refusals would, and the binding it writes must say [Deny];
// where it has not, the binding it writes is taken as it is.
func (k *kube) applyPolicy(ctl string) ([]string, string, func(), error) {
	none := func() {}
	args := []string{"policy", "--versions", "kubernetes=1.33"}
	help, _ := exec.Command(ctl, "policy", "--help").CombinedOutput()
	asked := regexp.MustCompile(`(?m)^\s+--action\b`).Match(help)
	if asked {
		args = append(args, "--action", "deny")
	}
	out, err := exec.Command(ctl, args...).Output()
	if err != nil {
		return nil, "", none, fmt.Errorf("proxy-awaitctl %s: %v", strings.Join(args, " "), err)
	}
	policy, binding, ok := strings.Cut(string(out), "\n---\n")
	var vap admissionv1.ValidatingAdmissionPolicy
	var vapb admissionv1.ValidatingAdmissionPolicyBinding
	if !ok || decodeYAML(policy, &vap) != nil || decodeYAML(binding, &vapb) != nil ||
		vap.Kind != "ValidatingAdmissionPolicy" || vapb.Kind != "ValidatingAdmissionPolicyBinding" || len(vapb.Spec.ValidationActions) == 0 {
		return nil, "", none, fmt.Errorf("proxy-awaitctl %s wrote no policy and binding with validationActions:\n%s", strings.Join(args, " "), out)
	}
	var written []string
	for _, a := range vapb.Spec.ValidationActions {
		written = append(written, string(a))
	}
	actions := "[" + strings.Join(written, ", ") + "]"
	if asked && actions != "[Deny]" {
		return nil, "", none, fmt.Errorf("proxy-awaitctl %s wrote a binding with validationActions %s, want [Deny]", strings.Join(args, " "), actions)
	}
	// Each validation's message begins with its rule's name, a CEL string
	// in either quote: "grace-period: " + ...
	var rules []string
	for _, v := range vap.Spec.Validations {
		if m := regexp.MustCompile(`^\s*["']([a-z-]+): `).FindStringSubmatch(v.MessageExpression); m != nil {
			rules = append(rules, m[1])
		}
	}
	if len(rules) == 0 || len(rules) != len(vap.Spec.Validations) {
		return nil, "", none, fmt.Errorf("proxy-awaitctl policy wrote %d validations, %d naming their rule", len(vap.Spec.Validations), len(rules))
	}
	ours := policy + "\n---\n" + `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: proxy-await-e2e
spec:
  policyName: proxy-await
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {"` + policyLabel + `": "on"}
`
	file := filepath.Join(k.run, "out", "policy.yaml")
	if err := os.WriteFile(file, []byte(ours), 0o644); err != nil {
		return nil, "", none, err
	}
	cleanup := func() {
		_, _, _ = k.ctl("delete", "--ignore-not-found", "-f", file)
	}
	if _, stderr, err := k.ctl("apply", "-f", file); err != nil {
		return nil, "", cleanup, fmt.Errorf("kubectl apply of the policy: %v: %s", err, stderr)
	}
	return rules, actions, cleanup, nil
}

// decodeYAML reads one YAML document into obj.
func decodeYAML(doc string, obj any) error {
	return yaml.NewYAMLOrJSONDecoder(strings.NewReader(doc), 4096).Decode(obj)
}

// dryRun applies a manifest to ns with a server-side dry run.
func (k *kube) dryRun(ns, dir, name, manifest string) (string, string, error) {
	file := filepath.Join(dir, name+".json")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return "", "", err
	}
	return k.ctl("apply", "--dry-run=server", "-n", ns, "-f", file)
}

// admitted applies every manifest of dir to ns with a server-side dry
// run: each must be admitted, with no PodSecurity warning. It says what
// was.
func (k *kube) admitted(ns, dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no manifest in %s: %v", dir, err)
	}
	objects := 0
	for _, f := range files {
		stdout, stderr, err := k.ctl("apply", "--dry-run=server", "-n", ns, "-f", f)
		rel, _ := filepath.Rel(filepath.Dir(dir), f)
		if err != nil || strings.Contains(stderr, "PodSecurity") || strings.Contains(stderr, "denied") {
			return "", fmt.Errorf("%s: %v: %s", rel, err, strings.TrimSpace(stdout+stderr))
		}
		objects += strings.Count(stdout, "(server dry run)")
	}
	return fmt.Sprintf("%d files, %d objects", len(files), objects), nil
}

// injector runs proxy-awaitctl inject: the binary, the image of the
// install container it adds (--image), its further flags, and the
// variables it runs with besides the runner's own.
type injector struct {
	ctl   string
	image string
	args  []string
	env   []string
}

// inject runs proxy-awaitctl inject on obj, as JSON, with args, and applies
// what it wrote to ns; it returns what it wrote.
func (k *kube) inject(in injector, ns, name string, obj any, args ...string) (string, error) {
	data, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return "", err
	}
	flags := append(append([]string{"inject", "--image", in.image}, in.args...), args...)
	cmd := exec.Command(in.ctl, append(flags, "-")...)
	cmd.Env = append(os.Environ(), in.env...)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("proxy-awaitctl inject of %s: %v: %s", name, err, stderr.String())
	}
	if !json.Valid(out) {
		return "", fmt.Errorf("proxy-awaitctl inject of %s wrote no JSON:\n%s", name, out)
	}
	file := filepath.Join(k.run, "out", ns, name+".json")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		return "", err
	}
	if _, stderr, err := k.ctl("apply", "-n", ns, "-f", file); err != nil {
		return "", fmt.Errorf("kubectl apply of the injected %s: %v: %s", name, err, stderr)
	}
	return string(out), nil
}

// injectedDeployment: three replicas of app (httpapp serving on 8080, the
// port it declares) behind a Service, a readiness probe on the app's port,
// no proxy-await; proxy-awaitctl inject adopts it, verify (when not nil)
// accepts the pod template inject wrote, and it rolls out under load with
// no request failed. It says how, and returns the Deployment inject wrote.
func (k *kube) injectedDeployment(in injector, ns string, app ctr, verify func(corev1.PodTemplateSpec) error) (string, *appsv1.Deployment, error) {
	labels := map[string]string{"app": rolloutApp}
	app.Name, app.Port, app.ReadyPort = "app", 8080, 8080
	p := pod{Grace: 45, Labels: labels, Spread: true, RestartPolicy: corev1.RestartPolicyAlways, Containers: []ctr{app}}
	replicas := int32(3)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: rolloutApp},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: p.template(k, ns)},
	}
	out, err := k.inject(in, ns, "deployment", d)
	if err != nil {
		return "", nil, err
	}
	var injected appsv1.Deployment
	if err := json.Unmarshal([]byte(out), &injected); err != nil {
		return "", nil, err
	}
	c := injected.Spec.Template.Spec.Containers[0]
	if len(injected.Spec.Template.Spec.InitContainers) != 1 || len(c.Command) == 0 || c.Command[0] != "/proxy-await/proxy-await" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/ready" {
		return "", nil, fmt.Errorf("inject did not adopt the Deployment: %s", out)
	}
	end := slices.Index(c.Command, "--")
	if end < 0 {
		return "", nil, fmt.Errorf("inject wrote no -- in %q", c.Command)
	}
	if verify != nil {
		if err := verify(injected.Spec.Template); err != nil {
			return "", nil, err
		}
	}
	flags := strings.Join(c.Command[1:end], " ")
	svc, err := k.rolloutService(ns, labels)
	if err != nil {
		return "", nil, err
	}
	pods, err := k.waitAvailable(ns, rolloutApp, 120*time.Second)
	if err != nil {
		return "", nil, err
	}
	if err := k.programmed(svc.Spec.ClusterIP, 80, endpointsOf(pods, 8080)); err != nil {
		return "", nil, err
	}
	v := rolloutVariant{key: "injected", name: "proxy-awaitctl inject's flags: " + flags}
	l := startLoad(k.nodes, serviceURL(svc), v.load())
	r, err := rolloutOnce(k, ns, v, svc, l)
	l.end()
	if err != nil {
		return "", nil, err
	}
	figures := fmt.Sprintf("(%s) serves through its Service and rolls out: %s, %.1fs", flags, r.failures(), r.seconds)
	if r.failed != 0 {
		return "", nil, fmt.Errorf("%s, want none failed", figures)
	}
	return figures, &injected, nil
}

// injectedJob: a Job whose pod Linkerd would mesh, with a stand-in proxy
// as a classic sidecar and app (which runs jobScript(0)) without
// proxy-await; proxy-awaitctl inject adopts the app (--container app) with
// -S, verify (when not nil) accepts the pod template inject wrote, and the
// Job completes. It says how, and returns the Job inject wrote.
func (k *kube) injectedJob(in injector, ns string, app ctr, verify func(corev1.PodTemplateSpec) error) (string, *batchv1.Job, error) {
	app.Name = "app"
	p := pod{Containers: []ctr{linkerdProxy("-ready-after", "2s"), app}}
	tpl := p.template(k, ns)
	tpl.Annotations = map[string]string{"linkerd.io/inject": "enabled"}
	zero := int32(0)
	j := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "migrate"},
		Spec:       batchv1.JobSpec{BackoffLimit: &zero, Template: tpl},
	}
	out, err := k.inject(in, ns, "job", j, "--container", "app")
	if err != nil {
		return "", nil, err
	}
	var injected batchv1.Job
	if err := json.Unmarshal([]byte(out), &injected); err != nil {
		return "", nil, err
	}
	var c corev1.Container
	for _, x := range injected.Spec.Template.Spec.Containers {
		if x.Name == "app" {
			c = x
		}
	}
	if !strings.Contains(strings.Join(c.Command, " "), "--proxy linkerd -S ") {
		return "", nil, fmt.Errorf("inject did not adopt the Job's app with -S: %q", c.Command)
	}
	if verify != nil {
		if err := verify(injected.Spec.Template); err != nil {
			return "", nil, err
		}
	}
	if _, err := k.waitJob(ns, "migrate", batchv1.JobComplete, 120*time.Second); err != nil {
		return "", nil, err
	}
	name, err := k.jobPod(ns, "migrate")
	if err != nil {
		return "", nil, err
	}
	done, err := k.waitPod(ns, name, 30*time.Second, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if err != nil {
		return "", nil, err
	}
	if code, _ := exited(done, "app"); code != 0 {
		return "", nil, fmt.Errorf("%s: app exit %d, want 0", name, code)
	}
	// The app started after the proxy's first 200; --proxy-lost, which
	// inject gives a Job with restartPolicy Never, keeps probing while
	// it runs; one shutdown POST came after it ended, none before.
	record := k.out(ns, name, "app")
	s, _ := field(record, "start")
	e, _ := field(record, "end")
	start, err1 := strconv.Atoi(s)
	end, err2 := strconv.Atoi(e)
	entries := proxyLog(k.out(ns, name, "proxy.log"))
	if err1 != nil || err2 != nil || start > end || end > len(entries) {
		return "", nil, fmt.Errorf("%s: app recorded %q against a proxy log of %d entries", name, record, len(entries))
	}
	if count(entries[:start], "GET", "/ready", 200) < 1 {
		return "", nil, fmt.Errorf("%s: the app started before the proxy answered 200", name)
	}
	if n := count(entries[:end], "POST", "/shutdown", 0); n != 0 {
		return "", nil, fmt.Errorf("%s: %d POST /shutdown before the app ended", name, n)
	}
	if all, ok := count(entries[end:], "POST", "/shutdown", 0), count(entries[end:], "POST", "/shutdown", 200); all != 1 || ok != 1 {
		return "", nil, fmt.Errorf("%s: %d POST /shutdown after the app ended (%d answered 200), want 1", name, all, ok)
	}
	flags := c.Command[1:]
	if i := slices.Index(flags, "--"); i >= 0 {
		flags = flags[:i]
	}
	return fmt.Sprintf("its app (%s) started after %d×503 and a 200, and one POST /shutdown came after it ended",
		strings.Join(flags, " "), count(entries[:start], "GET", "/ready", 503)), &injected, nil
}

// refusesWrongManifests waits until the policy is in force, as the API
// server refusing the first rule's wrong manifest shows, then holds that
// it refuses each rule's wrong manifest (a server-side dry run in ns),
// naming the rule.
func (k *kube) refusesWrongManifests(ns, dir string, rules []string) error {
	first := rules[0]
	if err := poll(60*time.Second, "the policy in force", func() (bool, error) {
		_, stderr, _ := k.dryRun(ns, dir, first, wrongManifests[first])
		return strings.Contains(stderr, "denied request: "+first+": "), nil
	}); err != nil {
		return err
	}
	for _, rule := range rules {
		m, ok := wrongManifests[rule]
		if !ok {
			return fmt.Errorf("the policy covers %s, for which this scenario has no wrong manifest", rule)
		}
		_, stderr, err := k.dryRun(ns, dir, rule, m)
		if err == nil || !strings.Contains(stderr, "denied request: "+rule+": ") {
			return fmt.Errorf("%s: the wrong manifest was not refused for it: %v %s", rule, err, stderr)
		}
	}
	return nil
}
