package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// kube talks to the API server as the admin, to kubectl for what a user
// would type, and to each node's containerd's CRI, which still knows a
// deleted pod's containers, with their exit codes and nanosecond exit
// times, for a few seconds after the API server has forgotten the pod.
type kube struct {
	run     string
	kubectl []string
	api     *kubernetes.Clientset
	nodes   []*node

	mu    sync.Mutex
	exits map[string]exit // "NAMESPACE/POD/CONTAINER", by watchExits
}

func connect(run, kubectl string) (*kube, error) {
	kubeconfig := filepath.Join(run, "pki", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = 50, 100, 30*time.Second
	api, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	nodes, err := loadNodes(run)
	if err != nil {
		return nil, err
	}
	return &kube{
		run:     run,
		kubectl: []string{kubectl, "--kubeconfig=" + kubeconfig, "--cache-dir=" + filepath.Join(run, "var", "kubectl")},
		api:     api,
		nodes:   nodes,
		exits:   map[string]exit{},
	}, nil
}

func (k *kube) close() {
	for _, n := range k.nodes {
		n.conn.Close()
	}
}

// exited names the cluster's components that are no longer running, from
// the pid files e2e/stack.sh keeps in the run's directory: "kube-apiserver
// has exited (see its log in $CACHE/logs)", or "".
func (k *kube) exited() string {
	files, _ := filepath.Glob(filepath.Join(k.run, "*.pid"))
	var dead []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		b, err := os.ReadFile(f)
		if err != nil || name == "up" {
			continue
		}
		if _, err := os.Stat("/proc/" + strings.TrimSpace(string(b))); err != nil {
			dead = append(dead, name)
		}
	}
	if len(dead) == 0 {
		return ""
	}
	return strings.Join(dead, ", ") + " exited: see its log in the cache's logs/"
}

// bg is the context of API calls; the client's Timeout bounds each one.
var bg = context.Background()

// namespace makes the scenario's namespace, with labels, and its /out
// directory, and waits for its default ServiceAccount, without which the
// API server admits no pod, and for its kube-root-ca.crt ConfigMap, which
// every pod's service-account volume holds: a pod made before it has to
// wait for the kubelet's next try to mount the volume, an uneven delay.
func (k *kube) namespace(ns string, labels map[string]string) error {
	out := filepath.Join(k.run, "out", ns)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	// Each pod's directory is made by the kubelet with this one's mode
	// (subPathExpr); 0777 lets an app running as another user write it.
	if err := os.Chmod(out, 0o777); err != nil {
		return err
	}
	create := func() error {
		_, err := k.api.CoreV1().Namespaces().Create(bg, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
		return err
	}
	err := create()
	if apierrors.IsAlreadyExists(err) {
		// The namespace of an earlier pass, still being deleted: the
		// namespace controller removes it once everything in it is gone.
		if err := poll(120*time.Second, "end of the earlier namespace "+ns, func() (bool, error) {
			_, err := k.api.CoreV1().Namespaces().Get(bg, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		}); err != nil {
			return err
		}
		err = create()
	}
	if err != nil {
		return err
	}
	if err := poll(60*time.Second, "the default ServiceAccount of "+ns, func() (bool, error) {
		_, err := k.api.CoreV1().ServiceAccounts(ns).Get(bg, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return err
	}
	return poll(60*time.Second, "the kube-root-ca.crt ConfigMap of "+ns, func() (bool, error) {
		_, err := k.api.CoreV1().ConfigMaps(ns).Get(bg, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})
}

// clear deletes the scenario's namespace, and with it everything in it, and
// waits until its pods are gone and no node's containerd runs any of their
// containers, so that one scenario's pods never load the next one's. The
// pods go at once (grace period 0): what they do then is not measured.
func (k *kube) clear(ns string) {
	err := k.api.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	zero := int64(0)
	running := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}
	_ = poll(90*time.Second, "", func() (bool, error) {
		pods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 0 {
				_ = k.api.CoreV1().Pods(ns).Delete(bg, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
		for _, n := range k.nodes {
			c, cancel := context.WithTimeout(bg, 5*time.Second)
			list, err := n.cri.ListContainers(c, &runtimeapi.ListContainersRequest{Filter: running})
			cancel()
			if err != nil {
				return false, nil
			}
			for _, c := range list.Containers {
				if c.Labels["io.kubernetes.pod.namespace"] == ns {
					return false, nil
				}
			}
		}
		return len(pods.Items) == 0, nil
	})
}

// createPod creates a bare pod in ns.
func (k *kube) createPod(ns, name string, p pod) error {
	_, err := k.api.CoreV1().Pods(ns).Create(bg, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       p.spec(k, ns),
	}, metav1.CreateOptions{})
	return err
}

// createJob creates a batch/v1 Job in ns that runs one pod like p.
func (k *kube) createJob(ns, name string, p pod, backoffLimit int32) error {
	_, err := k.api.BatchV1().Jobs(ns).Create(bg, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoffLimit,
			Template:     p.template(k, ns),
		},
	}, metav1.CreateOptions{})
	return err
}

func all(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s+" ", p) {
			return false
		}
	}
	return true
}

// remove deletes a pod through the API server, with the pod's own grace
// period, as `kubectl delete pod --wait=false` does. It returns the moment,
// on the shared clock.
func (k *kube) remove(ns, name string) (float64, error) {
	t := uptime()
	return t, k.api.CoreV1().Pods(ns).Delete(bg, name, metav1.DeleteOptions{})
}

// poll calls cond every 100 ms until it is true, it fails, or timeout
// passes; what names the awaited state in the error.
func poll(timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitPod waits until the pod, as the API server's watch of it tells, is
// in the state cond accepts, and returns it.
func (k *kube) waitPod(ns, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	var last *corev1.Pod
	err := until(timeout, one(name, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return k.api.CoreV1().Pods(ns).List(ctx, o)
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return k.api.CoreV1().Pods(ns).Watch(ctx, o)
	}), func(obj runtime.Object) bool {
		last = obj.(*corev1.Pod)
		return cond(last)
	})
	if err != nil {
		phase := "absent"
		if last != nil {
			phase = string(last.Status.Phase)
		}
		return last, fmt.Errorf("%s/%s: not %s after %s (phase %s)", ns, name, what, timeout, phase)
	}
	return last, nil
}

// one is a ListWatch of the one object called name.
func one(name string, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) *cache.ListWatch {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchFn(ctx, o)
		},
	}
}

// until lists and then watches what lw gives, until an object of it is one
// that cond accepts, or timeout passes: the state is seen as the API server
// tells each change of it, not sampled. The watch resumes where a closed
// stream left off.
func until(timeout time.Duration, lw *cache.ListWatch, cond func(runtime.Object) bool) error {
	ctx, cancel := context.WithTimeout(bg, timeout)
	defer cancel()
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, obj := range items {
		if cond(obj) {
			return nil
		}
	}
	rv, err := meta.NewAccessor().ResourceVersion(list)
	if err != nil {
		return err
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, lw)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch ended")
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if cond(ev.Object) {
					return nil
				}
			}
		}
	}
}

// jobPod waits for the Job's pod to exist and returns its name.
func (k *kube) jobPod(ns, job string) (string, error) {
	var name string
	err := poll(90*time.Second, "pod of Job "+ns+"/"+job, func() (bool, error) {
		pods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		name = pods.Items[0].Name
		return true, nil
	})
	return name, err
}

// waitJob waits until the Job, as the API server's watch of it tells, has
// the condition (Complete or Failed), and returns it.
func (k *kube) waitJob(ns, name string, cond batchv1.JobConditionType, timeout time.Duration) (*batchv1.Job, error) {
	var job *batchv1.Job
	err := until(timeout, one(name, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return k.api.BatchV1().Jobs(ns).List(ctx, o)
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return k.api.BatchV1().Jobs(ns).Watch(ctx, o)
	}), func(obj runtime.Object) bool {
		job = obj.(*batchv1.Job)
		return jobHas(job, cond)
	})
	if err != nil {
		return job, fmt.Errorf("Job %s/%s: not %s after %s (%s)", ns, name, cond, timeout, jobState(job))
	}
	return job, nil
}

// jobHas says whether the Job's condition is true.
func jobHas(j *batchv1.Job, cond batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == cond && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobState is a Job's status in a few words: "active=1 succeeded=0 failed=0
// [Complete]".
func jobState(j *batchv1.Job) string {
	if j == nil {
		return "absent"
	}
	var conds []string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, string(c.Type))
		}
	}
	return fmt.Sprintf("active=%d succeeded=%d failed=%d %v", j.Status.Active, j.Status.Succeeded, j.Status.Failed, conds)
}

// container finds a container's status, init containers included.
func container(p *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, c := range append(p.Status.ContainerStatuses, p.Status.InitContainerStatuses...) {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// exited says whether the container has terminated, and with what code.
func exited(p *corev1.Pod, name string) (int32, bool) {
	c, ok := container(p, name)
	if !ok || c.State.Terminated == nil {
		return 0, false
	}
	return c.State.Terminated.ExitCode, true
}

// ctl runs kubectl with args, as a user would, and returns what it printed.
func (k *kube) ctl(args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(k.kubectl[0], append(k.kubectl[1:], args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// exit is how a container ended, from containerd.
type exit struct {
	code     int32
	finished float64 // on the shared clock
}

// watchExits records every container exit each node's containerd reports,
// polling every 50 ms from the start of the run: the kubelet removes a
// deleted pod's containers within a second or so of their exit, and the
// API server no longer has the pod.
func (k *kube) watchExits() {
	exited := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}}
	seen := map[string]bool{}
	for {
		for _, n := range k.nodes {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			list, err := n.cri.ListContainers(c, &runtimeapi.ListContainersRequest{Filter: exited})
			if err == nil {
				for _, ctr := range list.Containers {
					if seen[ctr.Id] {
						continue
					}
					st, err := n.cri.ContainerStatus(c, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.Id})
					if err != nil {
						continue
					}
					seen[ctr.Id] = true
					// FinishedAt is wall-clock nanoseconds: map it onto uptime.
					ago := time.Since(time.Unix(0, st.Status.FinishedAt)).Seconds()
					key := ctr.Labels["io.kubernetes.pod.namespace"] + "/" + ctr.Labels["io.kubernetes.pod.name"] + "/" + st.Status.Metadata.Name
					k.mu.Lock()
					k.exits[key] = exit{code: st.Status.ExitCode, finished: uptime() - ago}
					k.mu.Unlock()
				}
			}
			cancel()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits until the pod's container has exited, as its node's
// containerd saw it.
func (k *kube) waitExit(ns, pod, container string, timeout time.Duration) (exit, error) {
	var e exit
	err := poll(timeout, "", func() (bool, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		var ok bool
		e, ok = k.exits[ns+"/"+pod+"/"+container]
		return ok, nil
	})
	if err != nil {
		return exit{}, fmt.Errorf("%s/%s/%s: no exit seen in containerd after %s", ns, pod, container, timeout)
	}
	return e, nil
}

// out reads a file the pod's containers wrote under /out.
func (k *kube) out(ns, pod, file string) string {
	b, _ := os.ReadFile(filepath.Join(k.run, "out", ns, pod, file))
	return string(b)
}

// waitOut waits until the pod's /out/FILE holds a line starting with prefix.
func (k *kube) waitOut(ns, pod, file, prefix string, timeout time.Duration) error {
	err := poll(timeout, "", func() (bool, error) {
		_, ok := field(k.out(ns, pod, file), prefix)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s/%s: no %q in /out/%s after %s", ns, pod, prefix, file, timeout)
	}
	return nil
}

// field finds the first line of text that starts with word and returns the
// word after it ("TERM 1234.56" -> "1234.56").
func field(text, word string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == word {
			if len(f) > 1 {
				return f[1], true
			}
			return "", true
		}
	}
	return "", false
}

// stamp is field parsed as a time on the shared clock.
func stamp(text, word string) (float64, bool) {
	s, ok := field(text, word)
	if !ok {
		return 0, false
	}
	t, err := strconv.ParseFloat(s, 64)
	return t, err == nil
}

// uptime is the shared clock: seconds since boot, from /proc/uptime.
func uptime() float64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		fatal(err)
	}
	t, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		fatal(err)
	}
	return t
}
