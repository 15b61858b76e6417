package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// rolloutVariant is one way the pods of a Deployment stop in a rolling
// update (the pod's containers), with how many replicas roll and how much
// load they get.
type rolloutVariant struct {
	key, name  string
	containers []ctr
	replicas   int // 0: 3
	rate       int // requests a second on new connections, and as many on the pool; 0: rolloutLoad
}

func (v rolloutVariant) pods() int {
	if v.replicas == 0 {
		return 3
	}
	return v.replicas
}

func (v rolloutVariant) load() int {
	if v.rate == 0 {
		return rolloutLoad
	}
	return v.rate
}

// sidecarFor is how long the sidecar of the "drain-sidecar" variant sends
// on its pooled loopback connection after the kubelet's TERM.
const sidecarFor = 5 * time.Second

// rolloutVariants are the variants of the rollout: httpapp (a Go server
// that shuts down gracefully on SIGTERM) with no delay, behind a preStop
// sleep, under a fixed --term-delay, and under the drain, its probes
// served by proxy-await (--probe-port), or on the app's port, or served by
// proxy-await beside a sidecar that sends on its pooled loopback
// connection after the TERM; then the control, the preStop sleep and the
// drain again for a quiet service (2 requests a second on new connections
// and 2 on the pool from each node), the drain given the preStop sleep's
// 15 s as its --term-delay, so that it is never slower than the sleep it
// replaces, and for six replicas.
func rolloutVariants() []rolloutVariant {
	server := []string{"/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/app"}
	// proxy-await's JSON log goes to /out too, for the rollout's trace.
	under := func(args ...string) []string {
		pa := proxyAwait(append(append([]string{"--proxy", "none", "--log-format", "json"}, args...), "--")...)
		return append(append([]string{"sh", "-c", `exec "$@" 2>>/out/proxy-await.log`, "sh"}, pa...), server...)
	}
	drain := []string{"--term-delay", "30s", "--drain-quiet", "1s"}
	probes := []string{"--probe-port", "8081", "--app-probe", "http://127.0.0.1:8080/"}
	onProbePort := ctr{Name: "app", ReadyPort: 8081, ReadyPath: "/ready", Command: under(append(probes, drain...)...)}
	atSleep := ctr{Name: "app", ReadyPort: 8081, ReadyPath: "/ready",
		Command: under(append(probes, "--term-delay", "15s", "--drain-quiet", "1s")...)}
	sidecar := ctr{Name: "sidecar", Command: []string{"/opt/e2e/httpapp", "-keepalive", "http://127.0.0.1:8080/",
		"-for", sidecarFor.String(), "-out", "/out/sidecar"}}
	none := []ctr{{Name: "app", ReadyPort: 8080, Command: server}}
	prestop := []ctr{{Name: "app", ReadyPort: 8080, Command: server, PreStop: []string{"sleep", "15"}}}
	const quiet, many = 2, 6
	return []rolloutVariant{
		{key: "none", name: "no delay", containers: none},
		{key: "prestop", name: "preStop `sleep 15`", containers: prestop},
		{key: "delay", name: "`--term-delay 15s`", containers: []ctr{{Name: "app", ReadyPort: 8080, Command: under("--term-delay", "15s")}}},
		{key: "drain", name: "the drain: `--term-delay 30s --drain-quiet 1s --probe-port 8081`", containers: []ctr{onProbePort}},
		{key: "drain-app-port", name: "the drain, probes on the app's port", containers: []ctr{{Name: "app", ReadyPort: 8080, Command: under(drain...)}}},
		{key: "drain-sidecar", name: "the drain, a sidecar sending for 5 s after TERM", containers: []ctr{sidecar, onProbePort}},
		{key: "none-quiet", name: "no delay, 2+2 requests a second", containers: none, rate: quiet},
		{key: "prestop-quiet", name: "preStop `sleep 15`, 2+2 requests a second", containers: prestop, rate: quiet},
		{key: "drain-quiet", name: "the drain at the preStop sleep's `--term-delay 15s`, 2+2 requests a second", containers: []ctr{atSleep}, rate: quiet},
		{key: "drain-quiet-30s", name: "the drain, `--term-delay 30s`, 2+2 requests a second", containers: []ctr{onProbePort}, rate: quiet},
		{key: "none-6", name: "no delay, 6 replicas", containers: none, replicas: many},
		{key: "prestop-6", name: "preStop `sleep 15`, 6 replicas", containers: prestop, replicas: many},
		{key: "drain-6", name: "the drain, 6 replicas", containers: []ctr{onProbePort}, replicas: many},
	}
}

// benchVariants are the variants make bench-rollout runs unless told
// others: the control, the preStop sleep and the drain, under load and for
// a quiet service.
var benchVariants = []string{"none", "prestop", "drain", "none-quiet", "prestop-quiet", "drain-quiet"}

func rolloutVariantByKey(key string) (rolloutVariant, bool) {
	for _, v := range rolloutVariants() {
		if v.key == key {
			return v, true
		}
	}
	return rolloutVariant{}, false
}

// rolloutResult is what one rollout measured.
type rolloutResult struct {
	sent, failed int
	errs         map[string]int // failed requests by the end of their error
	seconds      float64        // from `kubectl rollout restart` until every old pod is gone
	// With a sidecar: for each old pod, from the sidecar's last request
	// to the app's TERM.
	holds []float64
	trace *trace
}

func (r rolloutResult) failures() string {
	var kinds []string
	for e, n := range r.errs {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, e))
	}
	sort.Strings(kinds)
	s := fmt.Sprintf("%d/%d failed", r.failed, r.sent)
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	return s
}

// rolloutLoad is how many requests a second the client on each node sends
// on new connections, and as many again on a kept-alive pool.
const rolloutLoad = 50

// rolloutService is the ClusterIP Service of a rollout's app in ns: port
// 80 to the app's 8080 on the pods labels select.
func (k *kube) rolloutService(ns string, labels map[string]string) (*corev1.Service, error) {
	return k.api.CoreV1().Services(ns).Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: rolloutApp},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}},
	}, metav1.CreateOptions{})
}

// deploy makes, in ns, a ClusterIP Service in front of a Deployment of the
// variant's pods, spread over the nodes, and returns the Service once
// every node's kube-proxy takes its new connections to every pod.
func deploy(k *kube, ns string, v rolloutVariant) (*corev1.Service, error) {
	if err := k.namespace(ns, nil); err != nil {
		return nil, err
	}
	labels := map[string]string{"app": rolloutApp}
	svc, err := k.rolloutService(ns, labels)
	if err != nil {
		return nil, err
	}
	if err := k.createDeployment(ns, rolloutApp, int32(v.pods()), pod{Grace: 45, Labels: labels, Spread: true, Containers: v.containers}); err != nil {
		return nil, err
	}
	pods, err := k.waitAvailable(ns, rolloutApp, 120*time.Second)
	if err != nil {
		return nil, err
	}
	if len(pods) != v.pods() {
		return nil, fmt.Errorf("Deployment available with %d pods, want %d", len(pods), v.pods())
	}
	if err := spread(pods, len(k.nodes)); err != nil {
		return nil, err
	}
	return svc, k.programmed(svc.Spec.ClusterIP, 80, endpointsOf(pods, 8080))
}

// serviceURL is the URL of the rollout's Service.
func serviceURL(svc *corev1.Service) string { return "http://" + svc.Spec.ClusterIP + ":80/" }

// rolloutApp names the Deployment, its Service and its pods' label.
const rolloutApp = "web"

// warmConns is how many of the load's new connections each old pod has
// answered before a restart: a drain learns its quiet period from the
// gaps between them, as a pod that has served a while has, and a quiet
// service's pods need some 15 s to see that many.
const warmConns = 20

// rolloutOnce runs `kubectl rollout restart` on the Deployment in ns, under
// l, the variant's load from each node through its own kube-proxy, once
// the run's record of it is 2 s long, each node's clients have had answers on new
// connections and on the pool (the pool's connections are open, on the old
// pods), and each old pod has answered warmConns new connections. It times
// the rollout until every old pod is gone, then waits until the new ones
// are available, every node's kube-proxy takes new connections to them
// alone, and each has answered the load from every node. The run's trace,
// with the load's requests sent since the previous run ended (or the load
// began) and until then, is saved beside the cluster's logs.
func rolloutOnce(k *kube, ns string, v rolloutVariant, svc *corev1.Service, l *load) (r rolloutResult, err error) {
	old, err := k.waitAvailable(ns, rolloutApp, 120*time.Second)
	if err != nil {
		return r, err
	}
	w, err := k.watch(ns)
	if err != nil {
		return r, err
	}
	r.trace = &trace{Variant: v.key, Name: v.name, Replicas: v.pods(), Rate: v.load()}
	for _, n := range k.nodes {
		mode, sync := n.proxyConfig()
		r.trace.Mode = mode
		r.trace.Nodes = append(r.trace.Nodes, traceNode{Name: n.name, MinSyncPeriod: sync})
	}
	defer func() {
		r.trace.Pods, r.trace.Slices = w.stop()
		r.trace.Requests = l.take()
		r.sent, r.failed, r.errs = tally(r.trace.Requests)
		k.finish(ns, r, old)
	}()

	if err := poll(180*time.Second, "", func() (bool, error) {
		return l.settled(old), nil
	}); err != nil {
		return r, fmt.Errorf("the load was not answered from every node on both lanes, or an old pod answered fewer than %d new connections (%s)", warmConns, l.counts(old))
	}
	start := time.Now()
	r.trace.Restart = uptime()
	if _, stderr, err := k.ctl("rollout", "restart", "-n", ns, "deployment/"+rolloutApp); err != nil {
		return r, fmt.Errorf("kubectl rollout restart: %v: %s", err, stderr)
	}
	err = poll(120*time.Second, "end of every old pod", func() (bool, error) {
		for _, p := range old {
			_, err := k.api.CoreV1().Pods(ns).Get(bg, p.Name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	r.seconds = time.Since(start).Seconds()
	r.trace.End = uptime()
	if err != nil {
		return r, err
	}
	pods, err := k.waitAvailable(ns, rolloutApp, 60*time.Second)
	if err != nil {
		return r, err
	}
	if err := k.programmed(svc.Spec.ClusterIP, 80, endpointsOf(pods, 8080)); err != nil {
		return r, err
	}
	if err := poll(60*time.Second, "", func() (bool, error) {
		return l.answeredFromEveryNode(pods), nil
	}); err != nil {
		return r, fmt.Errorf("a new pod did not answer the load from every node: %s", l.counts(pods))
	}
	for _, p := range old {
		if last, ok := stamp(k.out(ns, p.Name, "sidecar"), "last"); ok {
			term, ok := stamp(k.out(ns, p.Name, "app"), "TERM")
			if !ok {
				return r, fmt.Errorf("%s: the app recorded no TERM: %q", p.Name, k.out(ns, p.Name, "app"))
			}
			r.holds = append(r.holds, term-last)
		}
	}
	return r, nil
}

// finish completes the run's trace with what the pods recorded, saves it,
// and, when a request failed, tells the failures against it on stderr.
func (k *kube) finish(ns string, r rolloutResult, old []corev1.Pod) {
	if r.trace == nil {
		return
	}
	k.records(ns, r.trace.Pods, old)
	path, err := r.trace.save(k.run, ns)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rollout %s: trace not saved: %v\n", ns, err)
	}
	if r.failed > 0 {
		fmt.Fprintf(os.Stderr, "rollout %s: %s (trace: %s), on the clock of kubectl rollout restart:\n%s", ns, r.failures(), path, r.trace.timeline(3))
	}
}

// load sends GETs through a URL at a steady rate from each node, on new
// connections and on a kept-alive pool, and records each: from before a
// variant's first rollout until after its last, so that every pod, old or
// new, has had the load's traffic, and only it, from its start.
type load struct {
	stop chan struct{}
	wg   sync.WaitGroup

	vip string // the Service's address

	mu       sync.Mutex
	looked   int                        // failed requests whose node's conntrack table was read, in this record
	since    float64                    // the start of the current record, on the shared clock
	pending  map[*request]bool          // sent and not yet answered
	requests []request                  // answered, sent since the last take
	conns    map[string]int             // by pod: the new connections it answered
	from     map[string]map[string]bool // by pod: the nodes whose requests it answered
	lanes    map[string]map[bool]bool   // by node: the lanes (pool or not) answered
}

func startLoad(nodes []*node, url string, perSecond int) *load {
	vip := url
	if u, err := neturl.Parse(url); err == nil {
		vip = u.Hostname()
	}
	l := &load{stop: make(chan struct{}), vip: vip, since: uptime(), pending: map[*request]bool{}, conns: map[string]int{},
		from: map[string]map[string]bool{}, lanes: map[string]map[bool]bool{}}
	for _, n := range nodes {
		l.lanes[n.name] = map[bool]bool{}
		for _, pooled := range []bool{false, true} {
			c := n.client(pooled)
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				tick := time.NewTicker(time.Second / time.Duration(perSecond))
				defer tick.Stop()
				for {
					select {
					case <-l.stop:
						return
					case <-tick.C:
					}
					r := &request{Start: uptime(), Pool: pooled, Node: n.name}
					l.mu.Lock()
					l.pending[r] = true
					l.mu.Unlock()
					l.wg.Add(1)
					go func() {
						defer l.wg.Done()
						send(c, url, r)
						if r.Err != "" && l.look() {
							r.Conntrack = n.conntrack(l.vip)
						}
						l.record(r)
					}()
				}
			}()
		}
	}
	return l
}

// look says whether a failed request's node's conntrack table is to be
// read: for the first 3 failures of a record.
func (l *load) look() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.looked++
	return l.looked <= 3
}

func (l *load) record(r *request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, r)
	l.requests = append(l.requests, *r)
	if r.Err != "" {
		return
	}
	l.lanes[r.Node][r.Pool] = true
	if !r.Reused {
		l.conns[r.Pod]++
	}
	if l.from[r.Pod] == nil {
		l.from[r.Pod] = map[string]bool{}
	}
	l.from[r.Pod][r.Node] = true
}

// settled says whether the current record is 2 s long, each node's
// clients have had answers on new connections and on the pool, and each of
// pods has answered warmConns new connections.
func (l *load) settled(pods []corev1.Pod) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if uptime()-l.since < 2 {
		return false
	}
	for _, lanes := range l.lanes {
		if !lanes[false] || !lanes[true] {
			return false
		}
	}
	for _, p := range pods {
		if l.conns[p.Name] < warmConns {
			return false
		}
	}
	return true
}

// answeredFromEveryNode says whether each of pods has answered requests
// from every node.
func (l *load) answeredFromEveryNode(pods []corev1.Pod) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range pods {
		if len(l.from[p.Name]) != len(l.lanes) {
			return false
		}
	}
	return true
}

// counts tells, for each of pods, the new connections it answered and the
// nodes it answered: "web-1 24 (e2e-1, e2e-2), ...".
func (l *load) counts(pods []corev1.Pod) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, p := range pods {
		var nodes []string
		for n := range l.from[p.Name] {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		s = append(s, fmt.Sprintf("%s %d (%s)", p.Name, l.conns[p.Name], strings.Join(nodes, ", ")))
	}
	return strings.Join(s, ", ")
}

// take returns the requests sent since the last take (or the load's
// start) and before now, in the order they were sent, once each has been
// answered or has failed (within the client's 5 s), and starts a new
// record: a request belongs to the record of the moment it was sent.
func (l *load) take() []request {
	cut := uptime()
	for {
		l.mu.Lock()
		waiting := false
		for r := range l.pending {
			if r.Start < cut {
				waiting = true
				break
			}
		}
		if !waiting {
			break
		}
		l.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	defer l.mu.Unlock()
	var taken, kept []request
	for _, r := range l.requests {
		if r.Start < cut {
			taken = append(taken, r)
		} else {
			kept = append(kept, r)
		}
	}
	l.requests, l.since, l.looked = kept, cut, 0
	sort.Slice(taken, func(i, j int) bool { return taken[i].Start < taken[j].Start })
	return taken
}

// end stops the load and waits for the requests under way.
func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// send sends one GET and records it in r: when it ended, its connection,
// the pod that answered (httpapp answers with its host's name), or the
// error.
func send(c *http.Client, url string, r *request) {
	defer func() { r.End = uptime() }()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		r.Err = err.Error()
		return
	}
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		r.Local, r.Reused = i.Conn.LocalAddr().String(), i.Reused
	}}
	resp, err := c.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		r.Err = err.Error()
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		r.Err = err.Error()
	case resp.StatusCode != http.StatusOK:
		r.Err = fmt.Sprintf("status %d", resp.StatusCode)
	default:
		r.Pod = strings.TrimSpace(string(b))
	}
}

// tally counts the requests and those that failed, by the end of their
// error: "Get "http://...": dial tcp ...: connect: connection refused"
// counts as "connection refused".
func tally(requests []request) (sent, failed int, errs map[string]int) {
	errs = map[string]int{}
	for _, r := range requests {
		sent++
		if r.Err == "" {
			continue
		}
		failed++
		msg := r.Err
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		errs[msg]++
	}
	return sent, failed, errs
}

// 12. A rolling update of three replicas behind a ClusterIP Service, under
// load on new connections and on a kept-alive pool: the drain with its
// probes on --probe-port fails no request, and each old pod's hold ends
// long before a preStop sleep's would; the control, with no delay, fails
// some, as the app closes its listener before kube-proxy has taken it out
// of the rules. The rollouts' times are figures, not verdicts: on a loaded
// machine the new pods start slower for every variant alike.
func rollout(k *kube) (string, error) {
	results := map[string]rolloutResult{}
	for _, key := range []string{"none", "prestop", "drain"} {
		v, _ := rolloutVariantByKey(key)
		ns := "s12-" + key
		svc, err := deploy(k, ns, v)
		var r rolloutResult
		if err == nil {
			l := startLoad(k.nodes, serviceURL(svc), v.load())
			r, err = rolloutOnce(k, ns, v, svc, l)
			l.end()
		}
		k.clear(ns)
		if err != nil {
			return "", fmt.Errorf("%s: %v", v.name, err)
		}
		results[key] = r
	}
	none, prestop, drain := results["none"], results["prestop"], results["drain"]
	holds := drain.trace.holds()
	figures := fmt.Sprintf("kube-proxy %s; no delay: %s, rollout %.1fs; preStop sleep 15: %s, %.1fs; drain with --probe-port: %s, %.1fs (%.0f%% of the preStop sleep's), each old pod held %s, its last new connection %s",
		k.proxyModes(), none.failures(), none.seconds, prestop.failures(), prestop.seconds, drain.failures(), drain.seconds,
		100*drain.seconds/prestop.seconds, seconds(holds), drain.trace.lastConnectionsText())
	if drain.failed != 0 || none.failed == 0 || len(holds) != 3 || slices.Max(holds) >= prestopSleep {
		return "", fmt.Errorf("%s (want the drain to fail none and hold each of the 3 old pods less than the preStop sleep's %.0f s, and the control to fail some)", figures, prestopSleep)
	}
	return figures, nil
}

// prestopSleep is the preStop variant's sleep, in seconds.
const prestopSleep = 15.0

func seconds(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.1fs", x))
	}
	return strings.Join(s, ", ")
}

// benchRollout runs each variant named in keys (benchVariants when empty) runs times,
// one rollout after another of one Deployment, and saves each run's trace
// in dir, for report (make bench-rollout).
func benchRollout(k *kube, runs int, keys []string, dir string) error {
	var variants []rolloutVariant
	for _, key := range keys {
		v, ok := rolloutVariantByKey(key)
		if !ok {
			return fmt.Errorf("no rollout variant %q", key)
		}
		variants = append(variants, v)
	}
	if len(keys) == 0 {
		for _, key := range benchVariants {
			v, _ := rolloutVariantByKey(key)
			variants = append(variants, v)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, v := range variants {
		ns := "bench-" + v.key
		svc, err := deploy(k, ns, v)
		if err != nil {
			k.clear(ns)
			return fmt.Errorf("%s: %v", v.name, err)
		}
		l := startLoad(k.nodes, serviceURL(svc), v.load())
		for i := range runs {
			r, err := rolloutOnce(k, ns, v, svc, l)
			if err != nil {
				l.end()
				k.clear(ns)
				return fmt.Errorf("%s, run %d: %v", v.name, i+1, err)
			}
			name := fmt.Sprintf("%s-%s-%02d.json", r.trace.Mode, v.key, i+1)
			if err := r.trace.saveAs(filepath.Join(dir, name)); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench-rollout: %s (kube-proxy %s), run %d: %s, %.1fs, holds %s, last new connections %s\n",
				v.name, k.proxyModes(), i+1, r.failures(), r.seconds, seconds(r.trace.holds()), r.trace.lastConnectionsText())
		}
		l.end()
		k.clear(ns)
	}
	return nil
}
