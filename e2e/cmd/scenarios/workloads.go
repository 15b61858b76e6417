package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// createDeployment creates a Deployment of replicas pods like p, whose
// labels select them.
func (k *kube) createDeployment(ns, name string, replicas int32, p pod) error {
	p.RestartPolicy = corev1.RestartPolicyAlways
	_, err := k.api.AppsV1().Deployments(ns).Create(bg, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: p.Labels},
			Template: p.template(k, ns),
		},
	}, metav1.CreateOptions{})
	return err
}

// waitAvailable waits until every replica of the Deployment is available,
// and returns its pods.
func (k *kube) waitAvailable(ns, name string, timeout time.Duration) ([]corev1.Pod, error) {
	var d *appsv1.Deployment
	err := poll(timeout, "", func() (bool, error) {
		var err error
		if d, err = k.api.AppsV1().Deployments(ns).Get(bg, name, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == *d.Spec.Replicas &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas, nil
	})
	if err != nil {
		state := "absent"
		if d != nil {
			state = fmt.Sprintf("%d of %d available", d.Status.AvailableReplicas, *d.Spec.Replicas)
		}
		return nil, fmt.Errorf("Deployment %s/%s: not available after %s (%s)", ns, name, timeout, state)
	}
	sel := metav1.FormatLabelSelector(d.Spec.Selector)
	pods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			ready = append(ready, p)
		}
	}
	return ready, nil
}

// get sends one GET from this runner (node 1's network namespace) on a new
// connection and returns the body, trimmed.
func get(url string) (string, error) {
	return getWith(&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}, url)
}

// getWith sends one GET with client and returns the body, trimmed.
func getWith(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(b)), nil
}

// 7. An application image without proxy-await gets it from proxy-await's
// own image, in a Deployment: an init container of that image runs
// --install into an emptyDir, and the app, in the busybox image as another
// user, runs the copy from the volume, mounted read-only, in front of
// httpapp beside a stand-in Linkerd proxy. Each replica starts its server
// after the proxy's first 200 and serves on its own address.
func installDeployment(k *kube) (string, error) {
	const ns, name, replicas, nobody = "s7", "install", 2, 65534
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	app := `echo "start $(wc -l </out/proxy.log)" >/out/app; id -u >/out/uid
exec /opt/e2e/httpapp -serve :8080 -out /out/server`
	p := pod{Labels: map[string]string{"app": name}, EmptyDirs: []string{"pa"},
		Inits: []ctr{{Name: "install", Image: proxyAwaitImage, Args: []string{"--install", "/pa"},
			Mounts: []mount{{"pa", "/pa", false}}}},
		Containers: []ctr{
			linkerdProxy("-ready-after", "2s"),
			{Name: "app", User: nobody, Mounts: []mount{{"pa", "/pa", true}}, ReadyPort: 8080,
				Command: append([]string{"/pa/proxy-await", "--"}, sh(app)...)},
		}}
	if err := k.createDeployment(ns, name, replicas, p); err != nil {
		return "", err
	}
	pods, err := k.waitAvailable(ns, name, 120*time.Second)
	if err != nil {
		return "", err
	}
	if len(pods) != replicas {
		return "", fmt.Errorf("Deployment available with %d pods, want %d", len(pods), replicas)
	}
	var figures []string
	for _, p := range pods {
		code, done := exited(&p, "install")
		uid := strings.TrimSpace(k.out(ns, p.Name, "uid"))
		if !done || code != 0 || uid != strconv.Itoa(nobody) {
			return "", fmt.Errorf("%s: install exited %d (done %v), the app ran as uid %q: want 0 and %d", p.Name, code, done, uid, nobody)
		}
		s, _ := field(k.out(ns, p.Name, "app"), "start")
		start, err := strconv.Atoi(s)
		entries := proxyLog(k.out(ns, p.Name, "proxy.log"))
		if err != nil || start > len(entries) || count(entries[:start], "GET", "/ready", 200) != 1 {
			return "", fmt.Errorf("%s: app recorded %q against a proxy log of %d entries, want it started after one 200", p.Name, k.out(ns, p.Name, "app"), len(entries))
		}
		body, err := get("http://" + p.Status.PodIP + ":8080/")
		if err != nil {
			return "", err
		}
		if body != p.Name {
			return "", fmt.Errorf("%s answered %q on %s", p.Name, body, p.Status.PodIP)
		}
		figures = append(figures, fmt.Sprintf("%s at %s started after %d×503 and a 200", p.Name, p.Status.PodIP, count(entries[:start], "GET", "/ready", 503)))
	}
	return fmt.Sprintf("%d of %d replicas available; install exit 0 and the app ran /pa/proxy-await as uid %d from the read-only volume in each: %s",
		len(pods), replicas, nobody, strings.Join(figures, ", ")), nil
}

// 8. A ClusterIP Service in front of a Deployment of three httpapp
// replicas under proxy-await, spread over both nodes: each node's
// kube-proxy takes a client there, on a new connection each time, to every
// replica, on its own node and on the other.
func service(k *kube) (string, error) {
	const ns, name, replicas, requests = "s8", "web", 3, 60
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	labels := map[string]string{"app": name}
	p := pod{Labels: labels, Spread: true, Containers: []ctr{{Name: "app", ReadyPort: 8080,
		Command: proxyAwait("--proxy", "none", "--", "/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/server")}}}
	made := time.Now()
	svc, err := k.api.CoreV1().Services(ns).Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if err := k.createDeployment(ns, name, replicas, p); err != nil {
		return "", err
	}
	pods, err := k.waitAvailable(ns, name, 120*time.Second)
	if err != nil {
		return "", err
	}
	if err := spread(pods, len(k.nodes)); err != nil {
		return "", err
	}
	// The endpoints as the EndpointSlice controller publishes them to
	// kube-proxy.
	err = poll(30*time.Second, "3 ready endpoints", func() (bool, error) {
		slices, err := k.api.DiscoveryV1().EndpointSlices(ns).List(bg, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			return false, nil
		}
		n := 0
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					n++
				}
			}
		}
		return n == replicas, nil
	})
	if err != nil {
		return "", err
	}
	if err := k.programmed(svc.Spec.ClusterIP, 80, endpointsOf(pods, 8080)); err != nil {
		return "", err
	}
	url := "http://" + svc.Spec.ClusterIP + ":80/"
	// kube-proxy syncs its rules at most once a minSyncPeriod, and may add
	// the endpoints over more than one sync: the Service is ready on a node
	// once every pod has answered through it there.
	var figures []string
	for _, n := range k.nodes {
		seen := map[string]bool{}
		var first time.Duration
		if err := poll(30*time.Second, "answer from every pod through "+url+" from "+n.name, func() (bool, error) {
			if b, err := n.get(url); err == nil {
				if first == 0 {
					first = time.Since(made)
				}
				seen[b] = true
			}
			return len(seen) == replicas, nil
		}); err != nil {
			return "", fmt.Errorf("%v: %d answered", err, len(seen))
		}
		all := time.Since(made)
		hits := map[string]int{}
		for _, p := range pods {
			hits[p.Name] = 0
		}
		failed := 0
		for range requests {
			b, err := n.get(url)
			if err != nil {
				failed++
				continue
			}
			if _, ok := hits[b]; !ok {
				return "", fmt.Errorf("%s answered %q from %s, not a pod of the Deployment", url, b, n.name)
			}
			hits[b]++
		}
		var by []string
		for _, p := range pods {
			by = append(by, fmt.Sprintf("%s on %s %d", p.Status.PodIP, p.Spec.NodeName, hits[p.Name]))
		}
		f := fmt.Sprintf("from %s: %d requests on new connections, %d failed, by pod: %s; the first answer %.1fs, one from every pod %.1fs after the Service and Deployment were made",
			n.name, requests, failed, strings.Join(by, ", "), first.Seconds(), all.Seconds())
		for _, c := range hits {
			if c == 0 || failed > 0 {
				return "", fmt.Errorf("%s (want every request answered, every pod reached)", f)
			}
		}
		figures = append(figures, f)
	}
	return fmt.Sprintf("ClusterIP %s:80, kube-proxy %s; %s", svc.Spec.ClusterIP, k.proxyModes(), strings.Join(figures, "; ")), nil
}

// spread checks that pods run on each of the cluster's nodes.
func spread(pods []corev1.Pod, nodes int) error {
	on := map[string]int{}
	for _, p := range pods {
		on[p.Spec.NodeName]++
	}
	if len(on) != nodes {
		return fmt.Errorf("the pods run on %d of the %d nodes: %v", len(on), nodes, on)
	}
	return nil
}

// 9. Every manifest in examples/ is admitted by the API server (a dry run:
// nothing is stored, no image is pulled) into a namespace that enforces
// Pod Security's restricted profile, with no warning of a violation in the
// pod templates, which that profile only warns about on workloads. A bare
// pod that violates it is the control: it must be refused.
func examples(k *kube, dir string) (string, error) {
	const ns = "s9"
	if err := k.namespace(ns, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}); err != nil {
		return "", err
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no manifest in %s", dir)
	}
	kinds := map[string]int{}
	objects := 0
	for _, f := range files {
		stdout, stderr, err := k.ctl("apply", "--dry-run=server", "-n", ns, "-f", f)
		rel, _ := filepath.Rel(filepath.Dir(dir), f)
		if err != nil || strings.Contains(stderr, "PodSecurity") {
			return "", fmt.Errorf("%s: %v: %s", rel, err, strings.TrimSpace(stdout+stderr))
		}
		// kubectl prints "kind.group/name created (server dry run)".
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if !strings.HasSuffix(line, "(server dry run)") {
				return "", fmt.Errorf("%s: kubectl printed %q", rel, line)
			}
			kind, _, _ := strings.Cut(line, "/")
			kind, _, _ = strings.Cut(kind, ".")
			kinds[kind]++
			objects++
		}
	}
	// The control: root, privilege escalation allowed, every capability.
	bad := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "control"},
  "spec": {"containers": [{"name": "app", "image": "` + busybox + `"}]}}`
	ctlFile := filepath.Join(k.run, "out", ns, "control.json")
	if err := os.WriteFile(ctlFile, []byte(bad), 0o644); err != nil {
		return "", err
	}
	_, stderr, err := k.ctl("apply", "--dry-run=server", "-n", ns, "-f", ctlFile)
	if err == nil || !strings.Contains(stderr, `violates PodSecurity "restricted`) {
		return "", fmt.Errorf("the control, a pod running as root, was not refused: %v %s", err, stderr)
	}
	var summary []string
	for kind, n := range kinds {
		summary = append(summary, fmt.Sprintf("%d %s", n, kind))
	}
	sort.Strings(summary)
	return fmt.Sprintf("%d files, %d objects (%s) admitted under enforce=restricted with no PodSecurity warning; the control, a pod as root, refused",
		len(files), objects, strings.Join(summary, ", ")), nil
}

// retryScript is an app that fails its first run and succeeds its second,
// counting its runs in /out/runs (the pod's /out outlives its containers'
// restarts), and recording, as jobScript does, how many requests the proxy
// had logged when each run started and ended: "run N start K", "run N end
// K".
var retryScript = sh(`n=$(($(cat /out/runs 2>/dev/null || echo 0) + 1)); echo $n >/out/runs
echo "run $n start $(wc -l </out/proxy.log)" >>/out/app
sleep 1
echo "run $n end $(wc -l </out/proxy.log)" >>/out/app
[ $n -gt 1 ]`)

// runMarks reads the proxy-log counts the app recorded for run n.
func runMarks(app string, n int) (start, end int, ok bool) {
	start, end = -1, -1
	for _, line := range strings.Split(app, "\n") {
		var m, at int
		var what string
		if c, _ := fmt.Sscanf(line, "run %d %s %d", &m, &what, &at); c == 3 && m == n {
			switch what {
			case "start":
				start = at
			case "end":
				end = at
			}
		}
	}
	return start, end, start >= 0 && end >= start
}

// 10. restartPolicy OnFailure: the kubelet restarts a failed app in the same
// pod, where it needs the proxy again. With --keep-proxy-on-failure the
// first, failed run leaves the proxy up, the second finds it and succeeds,
// and only then is the proxy shut down: the Job completes. Without it, the
// first failure shuts the proxy down, a sidecar that exited 0 is never
// restarted, and the restarted app waits for it for good: the Job stays
// active.
func onFailure(k *kube) (string, error) {
	const ns, window = "s10", 15 * time.Second
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	mk := func(args ...string) pod {
		return pod{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []ctr{linkerdProxy("-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait(append(args, "--")...), retryScript...)}}}
	}
	if err := k.createJob(ns, "keep", mk("-S", "--keep-proxy-on-failure"), 3); err != nil {
		return "", err
	}
	if err := k.createJob(ns, "plain", mk("-S"), 3); err != nil {
		return "", err
	}

	// With the flag: Complete, after two runs of the app in one pod.
	if _, err := k.waitJob(ns, "keep", batchv1.JobComplete, 120*time.Second); err != nil {
		return "", err
	}
	keep, err := k.jobPod(ns, "keep")
	if err != nil {
		return "", err
	}
	p, err := k.api.CoreV1().Pods(ns).Get(bg, keep, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	app, _ := container(p, "app")
	entries := proxyLog(k.out(ns, keep, "proxy.log"))
	_, end1, ok1 := runMarks(k.out(ns, keep, "app"), 1)
	start2, end2, ok2 := runMarks(k.out(ns, keep, "app"), 2)
	if p.Status.Phase != corev1.PodSucceeded || app.RestartCount != 1 || !ok1 || !ok2 || end2 > len(entries) {
		return "", fmt.Errorf("--keep-proxy-on-failure: pod %s, app restarted %d times, app recorded %q against a proxy log of %d entries (want Succeeded, 1 restart, two runs)",
			p.Status.Phase, app.RestartCount, k.out(ns, keep, "app"), len(entries))
	}
	if n := count(entries[:end2], "POST", "/shutdown", 0); n != 0 {
		return "", fmt.Errorf("--keep-proxy-on-failure: %d POST /shutdown before the second run ended", n)
	}
	if n := count(entries[end2:], "POST", "/shutdown", 200); n != 1 {
		return "", fmt.Errorf("--keep-proxy-on-failure: %d POST /shutdown answered 200 after the second run ended, want 1", n)
	}
	if n := count(entries[end1:start2], "GET", "/ready", 200); n != 1 {
		return "", fmt.Errorf("--keep-proxy-on-failure: the restarted app started after %d 200s on /ready, want 1", n)
	}
	figures := "with --keep-proxy-on-failure: Job Complete, run 1 exit 1 left the proxy up, the restarted app found it ready (one more 200 on /ready) and exited 0, then 1 POST /shutdown"

	// Without: the proxy is gone after the first run, and the restarted
	// app never starts its second.
	plain, err := k.jobPod(ns, "plain")
	if err != nil {
		return "", err
	}
	if _, err := k.waitPod(ns, plain, 120*time.Second, "running its restarted app", func(p *corev1.Pod) bool {
		c, _ := container(p, "app")
		return c.RestartCount == 1 && c.State.Running != nil
	}); err != nil {
		return "", err
	}
	restarted := time.Now()
	for time.Since(restarted) < window {
		j, err := k.api.BatchV1().Jobs(ns).Get(bg, "plain", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if j.Status.Active != 1 || jobHas(j, batchv1.JobComplete) || jobHas(j, batchv1.JobFailed) {
			return "", fmt.Errorf("without --keep-proxy-on-failure: Job %s %.0fs after the app restarted, want it still active", jobState(j), time.Since(restarted).Seconds())
		}
		time.Sleep(500 * time.Millisecond)
	}
	p, err = k.api.CoreV1().Pods(ns).Get(bg, plain, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	appState, _ := container(p, "app")
	proxyCode, proxyDone := exited(p, "proxy")
	proxyState, _ := container(p, "proxy")
	entries = proxyLog(k.out(ns, plain, "proxy.log"))
	_, _, ran2 := runMarks(k.out(ns, plain, "app"), 2)
	logs, err := k.api.CoreV1().Pods(ns).GetLogs(plain, &corev1.PodLogOptions{Container: "app"}).DoRaw(bg)
	if err != nil {
		return "", err
	}
	waiting := strings.Contains(string(logs), "waiting for the proxy")
	if appState.State.Running == nil || appState.RestartCount != 1 || !proxyDone || proxyCode != 0 || proxyState.RestartCount != 0 ||
		count(entries, "POST", "/shutdown", 200) != 1 || ran2 || !waiting {
		return "", fmt.Errorf("without --keep-proxy-on-failure: app running %v after %d restarts, proxy exited %v with %d after %d restarts, %d POST /shutdown, second run recorded %v, app's log %q",
			appState.State.Running != nil, appState.RestartCount, proxyDone, proxyCode, proxyState.RestartCount,
			count(entries, "POST", "/shutdown", 200), ran2, logs)
	}
	lines := strings.Split(strings.TrimSpace(string(logs)), "\n")
	return figures + fmt.Sprintf("; without it: run 1 exit 1 sent 1 POST /shutdown, the proxy exited 0 and was not restarted, and the restarted app still waits for it %.0fs later, the Job still active (the app's last log line: %s)",
		window.Seconds(), lines[len(lines)-1]), nil
}

// cronStart creates scenario 11's CronJob when the run starts, so that its
// two runs, a minute apart, happen while the other scenarios run: it
// returns when it was created.
func cronStart(k *kube) (time.Time, error) {
	const ns = "s11"
	if err := k.namespace(ns, nil); err != nil {
		return time.Time{}, err
	}
	backoff, keep := int32(0), int32(5)
	p := pod{Containers: []ctr{linkerdProxy("-ready-after", "2s"),
		{Name: "app", Command: append(proxyAwait("-S", "--"), jobScript(0)...)}}}
	_, err := k.api.BatchV1().CronJobs(ns).Create(bg, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cron"},
		Spec: batchv1.CronJobSpec{
			Schedule:                   "* * * * *",
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: &keep,
			FailedJobsHistoryLimit:     &keep,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: &backoff,
				Template:     p.template(k, ns),
			}},
		},
	}, metav1.CreateOptions{})
	return time.Now(), err
}

// 11. A CronJob whose Jobs have a classic Linkerd sidecar and the app under
// proxy-await -S: its first two scheduled Jobs complete, each pod with one
// shutdown POST after its app ended.
func cronJob(k *kube, created time.Time) (string, error) {
	const ns = "s11"
	waited := time.Now()
	var done []batchv1.Job
	// The first run is due within a minute of the creation, the second a
	// minute later; each takes a few seconds.
	err := poll(time.Until(created.Add(200*time.Second)), "two completed runs of the CronJob", func() (bool, error) {
		jobs, err := k.api.BatchV1().Jobs(ns).List(bg, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		done = done[:0]
		for _, j := range jobs.Items {
			if jobHas(&j, batchv1.JobFailed) {
				return false, fmt.Errorf("Job %s failed: %s", j.Name, jobState(&j))
			}
			if jobHas(&j, batchv1.JobComplete) {
				done = append(done, j)
			}
		}
		return len(done) >= 2, nil
	})
	if err != nil {
		return "", err
	}
	sort.Slice(done, func(i, j int) bool { return done[i].CreationTimestamp.Before(&done[j].CreationTimestamp) })
	var figures []string
	for _, j := range done[:2] {
		f, err := checkJob(k, ns, j.Name, "/ready", "/shutdown", batchv1.JobComplete, 0, 1)
		if err != nil {
			return "", err
		}
		figures = append(figures, fmt.Sprintf("%s scheduled %+.0fs after the CronJob was made, Complete %.1fs later, %s",
			j.Name, j.CreationTimestamp.Sub(created).Seconds(), j.Status.CompletionTime.Sub(j.Status.StartTime.Time).Seconds(), f))
	}
	return fmt.Sprintf("%s; made when the run started, the check waited %.0fs for them", strings.Join(figures, "; "),
		time.Since(waited).Seconds()), nil
}
