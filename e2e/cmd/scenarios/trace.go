package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// trace is what one rollout saw, every time on the shared clock: each
// request of the load, each pod's life, each change of the Service's
// EndpointSlices, and what each old pod's proxy-await logged. It is written
// as JSON beside the cluster's logs, and a failed request is told against
// it (timeline), so that a failure says where its connection went and
// what the pods and the endpoints were doing then.
type trace struct {
	Variant  string       `json:"variant"`
	Name     string       `json:"name"`
	Replicas int          `json:"replicas"`
	Rate     int          `json:"rate"` // requests a second from each node on new connections, and as many on the pool
	Mode     string       `json:"mode"` // kube-proxy's, on every node
	Nodes    []traceNode  `json:"nodes"`
	Restart  float64      `json:"restart"` // kubectl rollout restart
	End      float64      `json:"end"`     // every old pod gone
	Requests []request    `json:"requests"`
	Pods     []*podLife   `json:"pods"`
	Slices   []sliceEvent `json:"slices"`
}

// traceNode is a node of the cluster, whose client sends the load through
// its kube-proxy.
type traceNode struct {
	Name          string `json:"name"`
	MinSyncPeriod string `json:"min_sync_period"`
}

// request is one GET of the load.
type request struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	Node   string  `json:"node"`             // the node whose client sent it
	Pool   bool    `json:"pool,omitempty"`   // on the kept-alive pool, else on a new connection
	Local  string  `json:"local,omitempty"`  // the connection's local address
	Reused bool    `json:"reused,omitempty"` // an idle connection of the pool
	Pod    string  `json:"pod,omitempty"`    // the pod that answered
	Err    string  `json:"err,omitempty"`
	// When it failed: the sending node's conntrack entries for the
	// Service's address then that were neither ESTABLISHED nor TIME_WAIT
	// (each failed request's first few in a rollout).
	Conntrack []string `json:"conntrack,omitempty"`
}

// podLife is one pod of the Deployment, as the API server and the pod's
// own records saw it; 0 where a moment was not seen.
type podLife struct {
	Name     string  `json:"name"`
	IP       string  `json:"ip,omitempty"`
	Node     string  `json:"node,omitempty"`
	Old      bool    `json:"old,omitempty"` // one of the pods the rollout replaces
	Ready    float64 `json:"ready,omitempty"`
	Deleting float64 `json:"deleting,omitempty"` // its deletionTimestamp seen: the kubelet stops it
	Held     float64 `json:"held,omitempty"`     // proxy-await held the kubelet's stop signal
	AppTERM  float64 `json:"app_term,omitempty"` // the app got its stop signal
	Exit     float64 `json:"exit,omitempty"`     // the app's container exited (containerd)
	Gone     float64 `json:"gone,omitempty"`     // the API server deleted it
	Events   []event `json:"events,omitempty"`   // proxy-await's log lines
}

// event is a line of proxy-await's JSON log.
type event struct {
	At    float64 `json:"at"`
	Event string  `json:"event"`
	Msg   string  `json:"msg"`
	Line  string  `json:"line"`
}

// sliceEvent is the Service's endpoints after a change of an EndpointSlice:
// "IP pod ready|serving|terminating" each.
type sliceEvent struct {
	At        float64  `json:"at"`
	Endpoints []string `json:"endpoints"`
}

// watcher follows the pods and EndpointSlices of a namespace from before
// the rollout until its end.
type watcher struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu     sync.Mutex
	pods   map[string]*podLife
	order  []string
	slices map[string][]string // by slice name
	events []sliceEvent
}

// watch begins to follow the namespace's pods and EndpointSlices: what they
// are now, then every change until stop.
func (k *kube) watch(ns string) (*watcher, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cancel: cancel, pods: map[string]*podLife{}, slices: map[string][]string{}}
	podList, err := k.api.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, err
	}
	for i := range podList.Items {
		w.pod(watch.Added, &podList.Items[i])
	}
	pods, err := follow(ctx, podList.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return k.api.CoreV1().Pods(ns).Watch(ctx, o)
	})
	if err != nil {
		cancel()
		return nil, err
	}
	sliceList, err := k.api.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		pods.Stop()
		cancel()
		return nil, err
	}
	for i := range sliceList.Items {
		w.slice(watch.Added, &sliceList.Items[i])
	}
	slices, err := follow(ctx, sliceList.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return k.api.DiscoveryV1().EndpointSlices(ns).Watch(ctx, o)
	})
	if err != nil {
		pods.Stop()
		cancel()
		return nil, err
	}
	w.done.Add(2)
	go func() {
		defer w.done.Done()
		defer pods.Stop()
		for ev := range pods.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				w.pod(ev.Type, p)
			}
		}
	}()
	go func() {
		defer w.done.Done()
		defer slices.Stop()
		for ev := range slices.ResultChan() {
			if s, ok := ev.Object.(*discoveryv1.EndpointSlice); ok {
				w.slice(ev.Type, s)
			}
		}
	}()
	return w, nil
}

// follow watches from resourceVersion on and, when the API server ends a
// watch (as it may on a loaded machine), watches again from the last event
// seen: no event of the rollout is lost to a closed stream.
func follow(ctx context.Context, resourceVersion string, open func(context.Context, metav1.ListOptions) (watch.Interface, error)) (watch.Interface, error) {
	return watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, &cache.ListWatch{WatchFuncWithContext: open})
}

func (w *watcher) pod(t watch.EventType, p *corev1.Pod) {
	now := uptime()
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.pods[p.Name]
	if !ok {
		l = &podLife{Name: p.Name}
		w.pods[p.Name] = l
		w.order = append(w.order, p.Name)
	}
	if p.Status.PodIP != "" {
		l.IP = p.Status.PodIP
	}
	if p.Spec.NodeName != "" {
		l.Node = p.Spec.NodeName
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && l.Ready == 0 {
			l.Ready = now
		}
	}
	if p.DeletionTimestamp != nil && l.Deleting == 0 {
		l.Deleting = now
	}
	if t == watch.Deleted {
		l.Gone = now
	}
}

func (w *watcher) slice(t watch.EventType, s *discoveryv1.EndpointSlice) {
	now := uptime()
	var eps []string
	for _, e := range s.Endpoints {
		pod := "-"
		if e.TargetRef != nil {
			pod = e.TargetRef.Name
		}
		var conds []string
		for _, c := range []struct {
			name string
			v    *bool
		}{{"ready", e.Conditions.Ready}, {"serving", e.Conditions.Serving}, {"terminating", e.Conditions.Terminating}} {
			if c.v != nil && *c.v {
				conds = append(conds, c.name)
			}
		}
		for _, a := range e.Addresses {
			eps = append(eps, fmt.Sprintf("%s %s %s", a, pod, strings.Join(conds, "|")))
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if t == watch.Deleted {
		delete(w.slices, s.Name)
	} else {
		w.slices[s.Name] = eps
	}
	var all []string
	for _, e := range w.slices {
		all = append(all, e...)
	}
	sort.Strings(all)
	w.events = append(w.events, sliceEvent{At: now, Endpoints: all})
}

// stop ends the watches and returns what they saw, the pods in the order
// they first appeared.
func (w *watcher) stop() ([]*podLife, []sliceEvent) {
	w.cancel()
	w.done.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	var pods []*podLife
	for _, name := range w.order {
		pods = append(pods, w.pods[name])
	}
	return pods, w.events
}

// records fills in what each pod recorded itself: the app's TERM, the
// container's exit, and proxy-await's log (its wall-clock times mapped onto
// the shared clock).
func (k *kube) records(ns string, pods []*podLife, old []corev1.Pod) {
	isOld := map[string]bool{}
	for _, p := range old {
		isOld[p.Name] = true
	}
	offset := float64(time.Now().UnixNano())/1e9 - uptime()
	for _, l := range pods {
		l.Old = isOld[l.Name]
		if t, ok := stamp(k.out(ns, l.Name, "app"), "TERM"); ok {
			l.AppTERM = t
		}
		k.mu.Lock()
		if e, ok := k.exits[ns+"/"+l.Name+"/app"]; ok {
			l.Exit = e.finished
		}
		k.mu.Unlock()
		sc := bufio.NewScanner(strings.NewReader(k.out(ns, l.Name, "proxy-await.log")))
		for sc.Scan() {
			var rec struct {
				Time  time.Time `json:"time"`
				Event string    `json:"event"`
				Msg   string    `json:"msg"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Time.IsZero() {
				continue
			}
			at := float64(rec.Time.UnixNano())/1e9 - offset
			l.Events = append(l.Events, event{At: at, Event: rec.Event, Msg: rec.Msg, Line: sc.Text()})
			if rec.Event == "term_held" && l.Held == 0 {
				l.Held = at
			}
		}
	}
}

// save writes the trace as JSON under the run's logs (make e2e keeps them
// in $CACHE/logs), and returns the file's path.
func (t *trace) save(run, ns string) (string, error) {
	dir := filepath.Join(run, "logs", "rollouts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, ns+".json")
	return path, t.saveAs(path)
}

func (t *trace) saveAs(path string) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// holds is, for each old pod in the order of their deletions (as
// lastConnectionsText tells them), how long its app served after the
// kubelet began to stop the pod: from its deletion to the app's stop
// signal.
func (t *trace) holds() []float64 {
	var hs []float64
	for _, p := range t.deleted() {
		if p.AppTERM != 0 {
			hs = append(hs, p.AppTERM-p.Deleting)
		}
	}
	return hs
}

// deleted are the old pods that were deleted, in the order of their
// deletions.
func (t *trace) deleted() []*podLife {
	var old []*podLife
	for _, p := range t.Pods {
		if p.Old && p.Deleting != 0 {
			old = append(old, p)
		}
	}
	sort.SliceStable(old, func(i, j int) bool { return old[i].Deleting < old[j].Deleting })
	return old
}

// lastConnection is the last request on a new connection that a pod
// answered: when it was sent and from which node.
type lastConnection struct {
	At   float64
	Node string
}

// lastConnections finds, for each old pod, the last request it answered on
// a new connection (from the client's fresh connections or a connection the
// pool opened): when kube-proxy on that node last took a connection to it.
func (t *trace) lastConnections() map[string]lastConnection {
	last := map[string]lastConnection{}
	for _, r := range t.Requests {
		if r.Err != "" || r.Pod == "" || r.Reused {
			continue
		}
		if l, ok := last[r.Pod]; !ok || r.Start > l.At {
			last[r.Pod] = lastConnection{r.Start, r.Node}
		}
	}
	for name := range last {
		if p := t.pod(name); p == nil || !p.Old {
			delete(last, name)
		}
	}
	return last
}

func (t *trace) pod(name string) *podLife {
	for _, p := range t.Pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// lastConnectionsText tells, for each old pod in the order of its deletion,
// the node its last new connection came from and how long after the pod's
// deletion: "e2e-1 +0.6s, e2e-2 +4.1s, e2e-2 +3.8s".
func (t *trace) lastConnectionsText() string {
	last := t.lastConnections()
	var s []string
	for _, p := range t.deleted() {
		if l, ok := last[p.Name]; ok {
			s = append(s, fmt.Sprintf("%s %+.1fs", l.Node, l.At-p.Deleting))
		} else {
			s = append(s, "none")
		}
	}
	return strings.Join(s, ", ")
}

// minSync is a node's kube-proxy minSyncPeriod in the trace.
func (t *trace) minSync(node string) string {
	for _, n := range t.Nodes {
		if n.Name == node {
			return n.MinSyncPeriod
		}
	}
	return "?"
}

// timeline tells the first failed requests (at most max; the trace has them
// all) against what the pods and the endpoints did, from 3 s before each
// was sent until it ended.
func (t *trace) timeline(max int) string {
	var b strings.Builder
	told, failed := 0, 0
	for _, r := range t.Requests {
		if r.Err == "" {
			continue
		}
		if failed++; told == max {
			continue
		}
		told++
		kind := "new connection"
		if r.Pool {
			kind = "pool"
		}
		fmt.Fprintf(&b, "failed request %.3f-%.3f (from %s, %s, local %s, reused %v): %s\n", r.Start-t.Restart, r.End-t.Restart, r.Node, kind, r.Local, r.Reused, r.Err)
		type line struct {
			at   float64
			text string
		}
		var lines []line
		from, to := r.Start-3, r.End+0.5
		for _, p := range t.Pods {
			for _, m := range []struct {
				name string
				at   float64
			}{{"ready", p.Ready}, {"deleting", p.Deleting}, {"held", p.Held}, {"app TERM", p.AppTERM}, {"exit", p.Exit}, {"gone", p.Gone}} {
				if m.at >= from && m.at <= to {
					lines = append(lines, line{m.at, fmt.Sprintf("pod %s (%s on %s): %s", p.Name, p.IP, p.Node, m.name)})
				}
			}
			for _, e := range p.Events {
				if e.At >= from && e.At <= to {
					lines = append(lines, line{e.At, fmt.Sprintf("pod %s: %s", p.Name, e.Line)})
				}
			}
		}
		for _, s := range t.Slices {
			if s.At >= from && s.At <= to {
				lines = append(lines, line{s.At, "endpoints: " + strings.Join(s.Endpoints, ", ")})
			}
		}
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
		for _, l := range lines {
			fmt.Fprintf(&b, "  %+.3f %s\n", l.at-t.Restart, l.text)
		}
		for _, c := range r.Conntrack {
			fmt.Fprintf(&b, "  conntrack on %s when it failed: %s\n", r.Node, c)
		}
	}
	if failed > told {
		fmt.Fprintf(&b, "and %d more failed requests\n", failed-told)
	}
	return b.String()
}
