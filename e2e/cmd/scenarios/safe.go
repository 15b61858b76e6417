package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// injectedPods are Pods as Istio's and Linkerd's injectors leave them
// when the proxy is a native sidecar: the init container that sets up the
// network (istio-init, linkerd-init) or, with the mesh's CNI plugin, the
// one that checks it (istio-validation, linkerd-network-validator), then
// the proxy, then an init container of the application's that waits for
// the proxy under proxy-await, and the application. Correct pods, which
// the policy must admit: the network's init containers run the proxy's
// image but are no sidecars (a policy that took them for classic sidecars
// refused three of the four: the waiting init container would wait for
// them forever).
var injectedPods = map[string]string{
	"istio": `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "istio-injected",
  "labels": {"app": "reports", "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": "reports"},
  "annotations": {"sidecar.istio.io/status": "{\"initContainers\":[\"istio-init\",\"istio-proxy\"],\"containers\":null,\"volumes\":[\"workload-socket\",\"istio-envoy\",\"istio-data\",\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\"],\"imagePullSecrets\":null,\"revision\":\"default\"}",
    "kubectl.kubernetes.io/default-container": "reports"}},
  "spec": {"initContainers": [
      {"name": "istio-init", "image": "docker.io/istio/proxyv2:1.27.3",
       "args": ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020", "--log_output_level=default:info"],
       "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]}, "runAsUser": 0, "runAsNonRoot": false}},
      {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.27.3", "restartPolicy": "Always",
       "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning", "--proxyComponentLogLevel=misc:error", "--log_output_level=default:info"],
       "ports": [{"containerPort": 15090, "name": "http-envoy-prom"}],
       "startupProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021}, "periodSeconds": 1, "failureThreshold": 600},
       "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021}, "periodSeconds": 15}},
      {"name": "migrate", "image": "registry.example.com/reports:1",
       "command": ["/proxy-await/proxy-await", "--proxy", "istio", "--", "/migrate"]}],
    "containers": [
      {"name": "reports", "image": "registry.example.com/reports:1", "ports": [{"containerPort": 8080}],
       "command": ["/proxy-await/proxy-await", "--proxy", "istio", "--", "/reports"]}]}}`,
	"istio-cni": `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "istio-cni-injected",
  "labels": {"app": "reports", "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": "reports"},
  "annotations": {"sidecar.istio.io/status": "{\"initContainers\":[\"istio-proxy\"],\"containers\":null,\"volumes\":[\"workload-socket\",\"istio-envoy\",\"istio-data\",\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\"],\"imagePullSecrets\":null,\"revision\":\"default\"}",
    "kubectl.kubernetes.io/default-container": "reports"}},
  "spec": {"initContainers": [
      {"name": "istio-validation", "image": "docker.io/istio/proxyv2:1.27.3",
       "args": ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020", "--log_output_level=default:info", "--run-validation", "--skip-rule-apply"],
       "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]}, "runAsUser": 0, "runAsNonRoot": false}},
      {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.27.3", "restartPolicy": "Always",
       "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning", "--proxyComponentLogLevel=misc:error", "--log_output_level=default:info", "--run-validation", "--skip-rule-apply"],
       "ports": [{"containerPort": 15090, "name": "http-envoy-prom"}],
       "startupProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021}, "periodSeconds": 1, "failureThreshold": 600},
       "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021}, "periodSeconds": 15}},
      {"name": "migrate", "image": "registry.example.com/reports:1",
       "command": ["/proxy-await/proxy-await", "--proxy", "istio", "--", "/migrate"]}],
    "containers": [
      {"name": "reports", "image": "registry.example.com/reports:1", "ports": [{"containerPort": 8080}],
       "command": ["/proxy-await/proxy-await", "--proxy", "istio", "--", "/reports"]}]}}`,
	"linkerd": `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "linkerd-injected",
  "labels": {"app": "web", "linkerd.io/control-plane-ns": "linkerd", "linkerd.io/workload-ns": "s16"},
  "annotations": {"linkerd.io/created-by": "linkerd/proxy-injector edge-25.9.1", "linkerd.io/inject": "enabled",
    "config.beta.linkerd.io/proxy-enable-native-sidecar": "true",
    "linkerd.io/proxy-version": "edge-25.9.1", "linkerd.io/trust-root-sha256": "0000000000000000000000000000000000000000000000000000000000000000"}},
  "spec": {"initContainers": [
      {"name": "linkerd-init", "image": "cr.l5d.io/linkerd/proxy-init:v2.4.3",
       "args": ["--incoming-proxy-port", "4143", "--outgoing-proxy-port", "4140", "--proxy-uid", "2102", "--inbound-ports-to-ignore", "4190,4191,4567,4568", "--outbound-ports-to-ignore", "4567,4568"],
       "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}, "runAsUser": 65534, "runAsNonRoot": true}},
      {"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:edge-25.9.1", "restartPolicy": "Always",
       "ports": [{"containerPort": 4143, "name": "linkerd-proxy"}, {"containerPort": 4191, "name": "linkerd-admin"}],
       "readinessProbe": {"httpGet": {"path": "/ready", "port": 4191}, "initialDelaySeconds": 2},
       "startupProbe": {"httpGet": {"path": "/ready", "port": 4191}, "periodSeconds": 1, "failureThreshold": 120}},
      {"name": "migrate", "image": "registry.example.com/web:1",
       "command": ["/proxy-await/proxy-await", "--proxy", "linkerd", "--", "/migrate"]}],
    "containers": [
      {"name": "web", "image": "registry.example.com/web:1", "ports": [{"containerPort": 8080}],
       "command": ["/proxy-await/proxy-await", "--proxy", "linkerd", "--", "/web"]}]}}`,
	"linkerd-cni": `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "linkerd-cni-injected",
  "labels": {"app": "web", "linkerd.io/control-plane-ns": "linkerd", "linkerd.io/workload-ns": "s16"},
  "annotations": {"linkerd.io/created-by": "linkerd/proxy-injector edge-25.9.1", "linkerd.io/inject": "enabled",
    "config.beta.linkerd.io/proxy-enable-native-sidecar": "true",
    "linkerd.io/proxy-version": "edge-25.9.1", "linkerd.io/trust-root-sha256": "0000000000000000000000000000000000000000000000000000000000000000"}},
  "spec": {"initContainers": [
      {"name": "linkerd-network-validator", "image": "cr.l5d.io/linkerd/proxy:edge-25.9.1", "command": ["/usr/lib/linkerd/linkerd2-network-validator", "--log-format", "plain", "--log-level", "debug", "--connect-addr", "1.1.1.1:20001", "--listen-addr", "0.0.0.0:4140", "--timeout", "10s"],
       "args": ["--incoming-proxy-port", "4143", "--outgoing-proxy-port", "4140", "--proxy-uid", "2102", "--inbound-ports-to-ignore", "4190,4191,4567,4568", "--outbound-ports-to-ignore", "4567,4568"],
       "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}, "runAsUser": 65534, "runAsNonRoot": true}},
      {"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:edge-25.9.1", "restartPolicy": "Always",
       "ports": [{"containerPort": 4143, "name": "linkerd-proxy"}, {"containerPort": 4191, "name": "linkerd-admin"}],
       "readinessProbe": {"httpGet": {"path": "/ready", "port": 4191}, "initialDelaySeconds": 2},
       "startupProbe": {"httpGet": {"path": "/ready", "port": 4191}, "periodSeconds": 1, "failureThreshold": 120}},
      {"name": "migrate", "image": "registry.example.com/web:1",
       "command": ["/proxy-await/proxy-await", "--proxy", "linkerd", "--", "/migrate"]}],
    "containers": [
      {"name": "web", "image": "registry.example.com/web:1", "ports": [{"containerPort": 8080}],
       "command": ["/proxy-await/proxy-await", "--proxy", "linkerd", "--", "/web"]}]}}`,
}

// 16. The policy safe to enforce in a running cluster (issue 48):
// proxy-awaitctl policy with --action deny, applied to the API server
// while objects that break its rules already run, (a) admits a
// Deployment's fix and the controller's scale-down of its old ReplicaSet,
// so the rollout of the fix ends; (b) admits Pods as Istio's and Linkerd's
// injectors rewrite them, their network init containers included; (c)
// admits `kubectl rollout restart` of a Deployment that breaks a rule and
// the suspension of a CronJob that breaks one; (d) still refuses one wrong
// manifest for each rule it covers, the API server's message naming it.
func safePolicy(k *kube) (string, error) {
	const ns = "s16"
	ctl := filepath.Join(k.run, "bin", "proxy-awaitctl")
	if err := k.namespace(ns, map[string]string{policyLabel: "on"}); err != nil {
		return "", err
	}
	dir := filepath.Join(k.run, "out", ns)

	// Before the policy: two Deployments whose hold and kill delay add up
	// to more than their grace period (grace-period), and a CronJob whose
	// -S shuts its sidecar down before a retry (retry-loses-proxy).
	labels := func(app string) map[string]string { return map[string]string{"app": app} }
	overGrace := func(app string) pod {
		return pod{Grace: 20, Labels: labels(app), RestartPolicy: corev1.RestartPolicyAlways, Containers: []ctr{{
			Name: "app", Port: 8080, ReadyPort: 8080,
			Command: proxyAwait("--proxy", "none", "--term-delay", "15s", "--kill-after", "10s", "--",
				"/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/app"),
		}}}
	}
	for _, name := range []string{"legacy", "stale"} {
		if err := k.createDeployment(ns, name, 2, overGrace(name)); err != nil {
			return "", err
		}
	}
	// Its own name, so that (d)'s wrong manifest is a CREATE, and a
	// schedule that does not come during the run.
	cron := strings.Replace(wrongManifests["retry-loses-proxy"], `"*/5 * * * *"`, `"0 0 1 1 *"`, 1)
	cron = strings.Replace(cron, `"name": "retry"`, `"name": "retry-legacy"`, 1)
	if _, stderr, err := k.ctl("apply", "-n", ns, "-f", writeFile(dir, "cron.json", cron)); err != nil {
		return "", fmt.Errorf("kubectl apply of the CronJob: %v: %s", err, stderr)
	}
	for _, name := range []string{"legacy", "stale"} {
		if _, err := k.waitAvailable(ns, name, 120*time.Second); err != nil {
			return "", err
		}
	}

	rules, actions, cleanup, err := k.applyPolicy(ctl)
	defer cleanup()
	if err != nil {
		return "", err
	}
	// (d) each rule's wrong manifest, refused by its name, once the policy
	// is in force.
	if err := k.refusesWrongManifests(ns, dir, rules); err != nil {
		return "", fmt.Errorf("(d) %w", err)
	}

	// (b) Pods as the meshes' injectors leave them.
	var meshes []string
	for _, mesh := range []string{"istio", "istio-cni", "linkerd", "linkerd-cni"} {
		stdout, stderr, err := k.dryRun(ns, dir, mesh, injectedPods[mesh])
		if err != nil || strings.Contains(stderr, "denied") || strings.Contains(stderr, "ValidatingAdmissionPolicy") {
			return "", fmt.Errorf("(b) the Pod as %s's injector leaves it was not admitted: %v: %s", mesh, err, strings.TrimSpace(stdout+stderr))
		}
		meshes = append(meshes, mesh)
	}

	// (c) a restart of a Deployment that breaks a rule, and a CronJob that
	// breaks one suspended.
	if _, stderr, err := k.ctl("rollout", "restart", "-n", ns, "deployment/stale"); err != nil {
		return "", fmt.Errorf("(c) kubectl rollout restart of a Deployment that breaks grace-period: %v: %s", err, stderr)
	}
	if _, stderr, err := k.ctl("patch", "-n", ns, "cronjob/retry-legacy", "-p", `{"spec":{"suspend":true}}`); err != nil {
		return "", fmt.Errorf("(c) suspending a CronJob that breaks retry-loses-proxy: %v: %s", err, stderr)
	}
	cj, err := k.api.BatchV1().CronJobs(ns).Get(bg, "retry-legacy", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		return "", fmt.Errorf("(c) the CronJob is not suspended after the patch was admitted")
	}

	// (a) the fix: a grace period that holds the delays. The new
	// ReplicaSet is admitted, and so is the controller's scale-down of the
	// old one, to 0, its pods gone.
	d, err := k.api.AppsV1().Deployments(ns).Get(bg, "legacy", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	oldRS, err := k.replicaSets(ns, "legacy")
	if err != nil {
		return "", err
	}
	grace := int64(45)
	d.Spec.Template.Spec.TerminationGracePeriodSeconds = &grace
	start := time.Now()
	if _, err := k.api.AppsV1().Deployments(ns).Update(bg, d, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("(a) the fix of the Deployment: %v", err)
	}
	if err := poll(120*time.Second, "the fix rolled out to the end", func() (bool, error) {
		sets, err := k.replicaSets(ns, "legacy")
		if err != nil {
			return false, err
		}
		for _, rs := range sets {
			isOld := false
			for _, o := range oldRS {
				isOld = isOld || o.Name == rs.Name
			}
			if isOld && (rs.Spec.Replicas == nil || *rs.Spec.Replicas != 0 || rs.Status.Replicas != 0) {
				return false, nil
			}
			if !isOld && rs.Status.AvailableReplicas != 2 {
				return false, nil
			}
		}
		return len(sets) == len(oldRS)+1, nil
	}); err != nil {
		return "", fmt.Errorf("(a) %v: %s", err, k.deploymentEvents(ns, "legacy"))
	}
	fixed := time.Since(start).Seconds()

	// What the restart of the Deployment that still breaks grace-period
	// came to: its new ReplicaSet is an object of its own, which the
	// policy judges when the controller makes it.
	restart := k.deploymentEvents(ns, "stale")
	return fmt.Sprintf("proxy-awaitctl policy --action deny (its binding: %s) applied while objects broke its rules: (a) the fix of a Deployment that broke grace-period rolled out to the end in %.1fs, its old ReplicaSet scaled to 0; (b) Pods as the injectors leave them admitted (%s); (c) kubectl rollout restart of a Deployment that breaks grace-period and the suspension of a CronJob that breaks retry-loses-proxy admitted (after the restart: %s); (d) %d wrong manifests still refused, each naming its rule (%s)",
		actions, fixed, strings.Join(meshes, ", "), restart, len(rules), strings.Join(rules, ", ")), nil
}

// replicaSets are the ReplicaSets of Deployment name in ns.
func (k *kube) replicaSets(ns, name string) ([]appsv1.ReplicaSet, error) {
	list, err := k.api.AppsV1().ReplicaSets(ns).List(bg, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// deploymentEvents tells the ReplicaSets of Deployment name, available of
// wanted, and what its controllers could not make: "ReplicaSet web-5d9
// 2/2; ReplicaSetCreateError (... denied request: grace-period)".
func (k *kube) deploymentEvents(ns, name string) string {
	sets, _ := k.replicaSets(ns, name)
	var parts []string
	for _, rs := range sets {
		want := int32(0)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		parts = append(parts, fmt.Sprintf("ReplicaSet %s %d/%d", rs.Name, rs.Status.AvailableReplicas, want))
	}
	// What the controllers could not make: the Deployment controller's
	// ReplicaSets, the ReplicaSet controller's Pods.
	events, _ := k.api.CoreV1().Events(ns).List(bg, metav1.ListOptions{})
	seen := map[string]bool{}
	for _, e := range events.Items {
		if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(e.InvolvedObject.Name, name) || seen[e.Reason] ||
			(e.Reason != "ReplicaSetCreateError" && e.Reason != "FailedCreate") {
			continue
		}
		seen[e.Reason] = true
		msg := e.Message
		if i := strings.Index(msg, "denied request: "); i >= 0 {
			msg = msg[:i] + "denied request: " + strings.SplitN(msg[i+len("denied request: "):], ":", 2)[0]
		}
		parts = append(parts, e.Reason+" ("+msg+")")
	}
	return strings.Join(parts, "; ")
}

// writeFile writes text to dir/name and returns its path.
func writeFile(dir, name, text string) string {
	path := filepath.Join(dir, name)
	_ = os.WriteFile(path, []byte(text), 0o644)
	return path
}
