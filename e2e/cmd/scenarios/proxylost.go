package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// throughProxy is a job that needs its proxy to the end: it makes four
// calls through it, a second apart, and retries a failed call for as long
// as it takes, as a job whose database connection goes through the proxy
// does. It records its start and end, and exits 0 once the four succeeded;
// proxy-await's SIGTERM ends it (sh, not PID 1, dies of it).
var throughProxy = sh(`echo "start $(up)" >>/out/app
n=0
while [ $n -lt 4 ]; do
  if wget -q -O /dev/null http://127.0.0.1:4191/ready; then n=$((n+1)); fi
  sleep 1
done
echo "end $(up)" >>/out/app`)

// 13. A Job whose classic sidecar is killed while the app runs, as the OOM
// killer ends a container (SIGKILL from the runtime), with restartPolicy:
// Never, so that the kubelet does not restart it. Under --proxy-lost 2s,
// proxy-await stops the app and exits 69: the pod fails within seconds,
// and the Job's next pod (backoffLimit 1) finds its own proxy and
// completes. The control, the same Job without --proxy-lost, is still
// active, its app retrying through the dead proxy, 20 s after the kill.
func proxyLost(k *kube) (string, error) {
	const ns, window = "s13", 20 * time.Second
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	mk := func(args ...string) pod {
		return pod{Containers: []ctr{linkerdProxy("-ready-after", "1s"),
			{Name: "app", Command: append(proxyAwait(append(args, "-S", "--")...), throughProxy...)}}}
	}
	if err := k.createJob(ns, "lost", mk("--proxy-lost", "2s"), 1); err != nil {
		return "", err
	}
	if err := k.createJob(ns, "control", mk(), 1); err != nil {
		return "", err
	}
	// Each proxy is killed as soon as its app has started, long before
	// the app's four calls are done.
	first, killed := map[string]string{}, map[string]time.Time{}
	for _, job := range []string{"lost", "control"} {
		name, err := k.jobPod(ns, job)
		if err != nil {
			return "", err
		}
		if err := k.waitOut(ns, name, "app", "start", 90*time.Second); err != nil {
			return "", err
		}
		if err := k.killContainer(ns, name, "proxy"); err != nil {
			return "", err
		}
		first[job], killed[job] = name, time.Now()
	}

	// Under --proxy-lost: the first pod fails with the app's 69, soon
	// after its proxy's end, and says why.
	lost := first["lost"]
	proxyEnd, err := k.waitExit(ns, lost, "proxy", 30*time.Second)
	if err != nil {
		return "", err
	}
	appEnd, err := k.waitExit(ns, lost, "app", 30*time.Second)
	if err != nil {
		return "", err
	}
	stopped := appEnd.finished - proxyEnd.finished
	if proxyEnd.code != 137 || appEnd.code != 69 || stopped < 2 || stopped > 10 {
		return "", fmt.Errorf("--proxy-lost 2s: proxy exit %d, app exit %d %.1fs after it; want 137, then 69 within 2 to 10 s",
			proxyEnd.code, appEnd.code, stopped)
	}
	logs, err := k.api.CoreV1().Pods(ns).GetLogs(lost, &corev1.PodLogOptions{Container: "app"}).DoRaw(bg)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(logs), "proxy lost: stopping the command, then exiting 69") {
		return "", fmt.Errorf("--proxy-lost 2s: %s's log does not say the proxy was lost:\n%s", lost, logs)
	}
	if _, err := k.waitPod(ns, lost, 30*time.Second, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }); err != nil {
		return "", err
	}

	// The Job's next pod has a proxy of its own: its app makes its four
	// calls, and -S shuts that proxy down once.
	j, err := k.waitJob(ns, "lost", batchv1.JobComplete, 120*time.Second)
	if err != nil {
		return "", err
	}
	complete := time.Since(killed["lost"])
	if j.Status.Succeeded != 1 || j.Status.Failed != 1 {
		return "", fmt.Errorf("--proxy-lost 2s: Job %s, want one pod failed and one succeeded", jobState(j))
	}
	next, err := k.otherJobPod(ns, "lost", lost)
	if err != nil {
		return "", err
	}
	if p, err := k.api.CoreV1().Pods(ns).Get(bg, next, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodSucceeded {
		return "", fmt.Errorf("--proxy-lost 2s: the next pod %s is not Succeeded (%v)", next, err)
	}
	if e, err := k.waitExit(ns, next, "app", 30*time.Second); err != nil || e.code != 0 {
		return "", fmt.Errorf("--proxy-lost 2s: the next pod's app exited %d (%v), want 0", e.code, err)
	}
	entries := proxyLog(k.out(ns, next, "proxy.log"))
	if n := count(entries, "POST", "/shutdown", 200); n != 1 {
		return "", fmt.Errorf("--proxy-lost 2s: the next pod's proxy got %d POST /shutdown answered 200, want 1", n)
	}

	// The control hangs: its Job active, its first pod Running, its app
	// still retrying, for the whole window after the kill.
	for time.Since(killed["control"]) < window {
		j, err := k.api.BatchV1().Jobs(ns).Get(bg, "control", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if j.Status.Active != 1 || j.Status.Failed != 0 || jobHas(j, batchv1.JobComplete) || jobHas(j, batchv1.JobFailed) {
			return "", fmt.Errorf("without --proxy-lost: Job %s %.0fs after the kill, want it still active", jobState(j), time.Since(killed["control"]).Seconds())
		}
		time.Sleep(500 * time.Millisecond)
	}
	p, err := k.api.CoreV1().Pods(ns).Get(bg, first["control"], metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if _, done := exited(p, "app"); done || p.Status.Phase != corev1.PodRunning {
		return "", fmt.Errorf("without --proxy-lost: pod %s %s, its app exited: %v; want Running, the app retrying", p.Name, p.Status.Phase, done)
	}
	return fmt.Sprintf("--proxy-lost 2s: the app exited 69 %.1fs after its proxy was killed (137), the pod Failed, the next pod's app made its calls and the Job was Complete %.0fs after the kill; without it the Job was still active %.0fs after the kill",
		stopped, complete.Seconds(), window.Seconds()), nil
}

// killContainer SIGKILLs a running container of the pod through its node's
// runtime, as the OOM killer ends one: the kubelet sees it exit 137 and
// restarts it only if the pod's restartPolicy says so. It first waits until
// the API server tells that the container runs, with its ID: a container
// the app's record shows started may not be in the pod's status yet.
func (k *kube) killContainer(ns, pod, name string) error {
	p, err := k.waitPod(ns, pod, 60*time.Second, "running its "+name+" container", func(p *corev1.Pod) bool {
		c, ok := container(p, name)
		return ok && c.State.Running != nil && strings.HasPrefix(c.ContainerID, "containerd://")
	})
	if err != nil {
		return err
	}
	c, _ := container(p, name)
	id := strings.TrimPrefix(c.ContainerID, "containerd://")
	n, err := k.nodeOf(p.Spec.NodeName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	// A timeout of 0 sends SIGKILL at once, with no SIGTERM first.
	_, err = n.cri.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0})
	return err
}

// otherJobPod is the name of the Job's pod that is not first.
func (k *kube) otherJobPod(ns, job, first string) (string, error) {
	pods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Name != first {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("Job %s/%s has no pod but %s", ns, job, first)
}
