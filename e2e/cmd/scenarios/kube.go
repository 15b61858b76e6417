package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// nodeName is the kubelet's --hostname-override: a static pod NAME shows up
// as NAME-e2e.
const nodeName = "e2e"

// kube talks to the standalone kubelet (its read-only port's /pods) and to
// containerd's CRI, which still knows a deleted pod's containers and their
// exit codes for a few seconds after the kubelet has forgotten the pod.
type kube struct {
	run      string
	readOnly string // http://127.0.0.1:PORT
	healthz  string
	conn     *grpc.ClientConn
	cri      runtimeapi.RuntimeServiceClient

	mu    sync.Mutex
	exits map[string]exit // "POD/CONTAINER", by watchExits
}

func connect(run string) (*kube, error) {
	b, err := os.ReadFile(filepath.Join(run, "ports"))
	if err != nil {
		return nil, err
	}
	p := strings.Fields(string(b))
	if len(p) != 3 {
		return nil, fmt.Errorf("%s/ports: want 3 ports, got %q", run, b)
	}
	conn, err := grpc.NewClient("unix://"+filepath.Join(run, "run/containerd.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &kube{
		run:      run,
		readOnly: "http://127.0.0.1:" + p[0],
		healthz:  "http://127.0.0.1:" + p[2] + "/healthz",
		conn:     conn,
		cri:      runtimeapi.NewRuntimeServiceClient(conn),
		exits:    map[string]exit{},
	}, nil
}

func (k *kube) close() { k.conn.Close() }

func (k *kube) waitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(k.healthz)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kubelet not healthy after %s (%v): see %s/logs/kubelet.log", timeout, err, k.run)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deploy writes the pod's manifest atomically: the kubelet ignores dot-files,
// and a manifest copied in place can be read half-written.
func (k *kube) deploy(p pod) error {
	name := p.name()
	if err := os.MkdirAll(filepath.Join(k.run, "out", name), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(k.run, "manifests", "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(k.run, "manifests", name+".yaml"))
}

// remove deletes the pod as a standalone kubelet knows deletion: its manifest
// goes. It returns the moment, on the shared clock.
func (k *kube) remove(name string) (float64, error) {
	t := uptime()
	return t, os.Remove(filepath.Join(k.run, "manifests", name+".yaml"))
}

// removeAll deletes every pod left and waits until the kubelet lists none and
// containerd runs no container, so that one scenario's pods never load the
// next one's.
func (k *kube) removeAll() {
	names, _ := filepath.Glob(filepath.Join(k.run, "manifests", "*.yaml"))
	for _, n := range names {
		os.Remove(n)
	}
	running := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := k.pods()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		list, err2 := k.cri.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: running})
		cancel()
		if err == nil && err2 == nil && len(pods) == 0 && len(list.Containers) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// podStatus is the part of a pod's status the scenarios read.
type podStatus struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Phase                 string            `json:"phase"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
	} `json:"status"`
}

type containerStatus struct {
	Name         string `json:"name"`
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running    *struct{} `json:"running"`
		Terminated *struct {
			ExitCode int `json:"exitCode"`
		} `json:"terminated"`
	} `json:"state"`
}

// container finds a container's status, init containers included.
func (p podStatus) container(name string) (containerStatus, bool) {
	for _, c := range append(p.Status.ContainerStatuses, p.Status.InitContainerStatuses...) {
		if c.Name == name {
			return c, true
		}
	}
	return containerStatus{}, false
}

// exited says whether the container has terminated, and with what code.
func (p podStatus) exited(name string) (int, bool) {
	c, ok := p.container(name)
	if !ok || c.State.Terminated == nil {
		return 0, false
	}
	return c.State.Terminated.ExitCode, true
}

func (k *kube) pods() (map[string]podStatus, error) {
	resp, err := http.Get(k.readOnly + "/pods")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct {
		Items []podStatus `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	pods := map[string]podStatus{}
	for _, p := range list.Items {
		pods[strings.TrimSuffix(p.Metadata.Name, "-"+nodeName)] = p
	}
	return pods, nil
}

// waitPod polls the pod's status until cond holds, and returns that status.
func (k *kube) waitPod(name string, timeout time.Duration, what string, cond func(podStatus) bool) (podStatus, error) {
	deadline := time.Now().Add(timeout)
	var last podStatus
	for {
		pods, err := k.pods()
		if err == nil {
			if p, ok := pods[name]; ok {
				last = p
				if cond(p) {
					return p, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("%s: not %s after %s (phase %q)", name, what, timeout, last.Status.Phase)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exit is how a deleted pod's container ended, from containerd.
type exit struct {
	code     int32
	finished float64 // on the shared clock
}

// watchExits records every container exit containerd reports, polling every
// 50 ms from the start of the run: the kubelet removes a deleted pod's
// containers within a second or so of their exit, and no longer reports the
// pod at all.
func (k *kube) watchExits() {
	exited := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}}
	seen := map[string]bool{}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		list, err := k.cri.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: exited})
		if err == nil {
			for _, c := range list.Containers {
				if seen[c.Id] {
					continue
				}
				st, err := k.cri.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
				if err != nil {
					continue
				}
				seen[c.Id] = true
				// FinishedAt is wall-clock nanoseconds: map it onto uptime.
				ago := time.Since(time.Unix(0, st.Status.FinishedAt)).Seconds()
				key := strings.TrimSuffix(c.Labels["io.kubernetes.pod.name"], "-"+nodeName) + "/" + st.Status.Metadata.Name
				k.mu.Lock()
				k.exits[key] = exit{code: st.Status.ExitCode, finished: uptime() - ago}
				k.mu.Unlock()
			}
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits until the pod's container has exited, as containerd saw it.
func (k *kube) waitExit(pod, container string, timeout time.Duration) (exit, error) {
	deadline := time.Now().Add(timeout)
	for {
		k.mu.Lock()
		e, ok := k.exits[pod+"/"+container]
		k.mu.Unlock()
		if ok {
			return e, nil
		}
		if time.Now().After(deadline) {
			return exit{}, fmt.Errorf("%s/%s: no exit seen in containerd after %s", pod, container, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// out reads a file the pod's containers wrote under /out.
func (k *kube) out(pod, file string) string {
	b, _ := os.ReadFile(filepath.Join(k.run, "out", pod, file))
	return string(b)
}

// waitOut waits until the pod's /out/FILE holds a line starting with prefix.
func (k *kube) waitOut(pod, file, prefix string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, ok := field(k.out(pod, file), prefix); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q in /out/%s after %s", pod, prefix, file, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
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
