package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
// update: the pod's containers.
type rolloutVariant struct {
	key, name  string
	containers []ctr
}

// sidecarFor is how long the sidecar of the "drain-sidecar" variant sends
// on its pooled loopback connection after the kubelet's TERM.
const sidecarFor = 5 * time.Second

// rolloutVariants are the variants of the rollout, as the table
// had them: httpapp (a Go server that shuts down gracefully on SIGTERM)
// with no delay, behind a preStop sleep, under a fixed --term-delay, and
// under the drain, its probes served by proxy-await (--probe-port), or on
// the app's port, or served by proxy-await beside a sidecar that sends on
// its pooled loopback connection after the TERM.
func rolloutVariants() []rolloutVariant {
	server := []string{"/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/app"}
	under := func(args ...string) []string {
		return append(proxyAwait(append(append([]string{"--proxy", "none"}, args...), "--")...), server...)
	}
	drain := []string{"--term-delay", "30s", "--drain-quiet", "1s"}
	probes := []string{"--probe-port", "8081", "--app-probe", "http://127.0.0.1:8080/"}
	onProbePort := ctr{Name: "app", ReadyPort: 8081, ReadyPath: "/ready", Command: under(append(probes, drain...)...)}
	sidecar := ctr{Name: "sidecar", Command: []string{"/opt/e2e/httpapp", "-keepalive", "http://127.0.0.1:8080/",
		"-for", sidecarFor.String(), "-out", "/out/sidecar"}}
	return []rolloutVariant{
		{"none", "no delay", []ctr{{Name: "app", ReadyPort: 8080, Command: server}}},
		{"prestop", "preStop `sleep 15`", []ctr{{Name: "app", ReadyPort: 8080, Command: server, PreStop: []string{"sleep", "15"}}}},
		{"delay", "`--term-delay 15s`", []ctr{{Name: "app", ReadyPort: 8080, Command: under("--term-delay", "15s")}}},
		{"drain", "`--term-delay 30s --drain-quiet 1s --probe-port 8081`", []ctr{onProbePort}},
		{"drain-app-port", "`--term-delay 30s --drain-quiet 1s`, probes on the app's port", []ctr{{Name: "app", ReadyPort: 8080, Command: under(drain...)}}},
		{"drain-sidecar", "`--term-delay 30s --drain-quiet 1s --probe-port 8081`, a sidecar sending for 5 s after TERM", []ctr{sidecar, onProbePort}},
	}
}

func rolloutVariantByKey(key string) rolloutVariant {
	for _, v := range rolloutVariants() {
		if v.key == key {
			return v
		}
	}
	panic("no rollout variant " + key)
}

// rolloutResult is what one rollout measured.
type rolloutResult struct {
	sent, failed int
	errs         map[string]int // failed requests by the end of their error
	seconds      float64        // from `kubectl rollout restart` until every old pod is gone
	// With a sidecar: for each old pod, from the sidecar's last request
	// to the app's TERM.
	holds []float64
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

// rolloutLoad is how many requests a second the client sends on new
// connections, and as many again on a kept-alive pool.
const rolloutLoad = 50

// runRollout makes, in ns, a ClusterIP Service in front of a Deployment of
// three pods of the variant, sends the load through the Service from this
// runner (the cluster's network namespace), runs `kubectl rollout restart`
// and times it until every old pod is gone.
func runRollout(k *kube, ns string, v rolloutVariant) (rolloutResult, error) {
	const name, replicas = "web", 3
	var r rolloutResult
	if err := k.namespace(ns, nil); err != nil {
		return r, err
	}
	labels := map[string]string{"app": name}
	svc, err := k.api.CoreV1().Services(ns).Create(bg, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return r, err
	}
	if err := k.createDeployment(ns, name, replicas, pod{Grace: 45, Labels: labels, Containers: v.containers}); err != nil {
		return r, err
	}
	old, err := k.waitAvailable(ns, name, 120*time.Second)
	if err != nil {
		return r, err
	}
	if len(old) != replicas {
		return r, fmt.Errorf("Deployment available with %d pods, want %d", len(old), replicas)
	}
	url := "http://" + svc.Spec.ClusterIP + ":80/"
	seen := map[string]bool{}
	if err := poll(60*time.Second, "answer from every pod through "+url, func() (bool, error) {
		if b, err := get(url); err == nil {
			seen[b] = true
		}
		return len(seen) == replicas, nil
	}); err != nil {
		return r, err
	}

	l := startLoad(url, rolloutLoad)
	time.Sleep(2 * time.Second) // the pool's connections open and settle on the old pods
	start := time.Now()
	if _, stderr, err := k.ctl("rollout", "restart", "-n", ns, "deployment/"+name); err != nil {
		l.end()
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
	if err == nil {
		_, err = k.waitAvailable(ns, name, 60*time.Second)
	}
	r.sent, r.failed, r.errs = l.end()
	if err != nil {
		return r, err
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

// load sends GETs through a URL at a steady rate, on new connections and on
// a kept-alive pool, and counts what fails.
type load struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu           sync.Mutex
	sent, failed int
	errs         map[string]int
}

func startLoad(url string, perSecond int) *load {
	l := &load{stop: make(chan struct{}), errs: map[string]int{}}
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	pooled := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for _, c := range []*http.Client{fresh, pooled} {
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
				l.wg.Add(1)
				go func() {
					defer l.wg.Done()
					l.record(send(c, url))
				}()
			}
		}()
	}
	return l
}

func send(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func (l *load) record(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	if err != nil {
		l.failed++
		// "Get "http://...": dial tcp ...: connect: connection refused":
		// the last part says what happened.
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		l.errs[msg]++
	}
}

// end stops the load, waits for the requests under way, and returns the
// counts.
func (l *load) end() (sent, failed int, errs map[string]int) {
	close(l.stop)
	l.wg.Wait()
	return l.sent, l.failed, l.errs
}

// minSyncPeriod is kube-proxy's iptables.minSyncPeriod, from the
// configuration e2e/stack.sh wrote.
func (k *kube) minSyncPeriod() string {
	b, _ := os.ReadFile(filepath.Join(k.run, "etc", "kube-proxy.yaml"))
	if m := regexp.MustCompile(`minSyncPeriod: *([^,} ]+)`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// 12. A rolling update of three replicas behind a ClusterIP Service, under
// load on new connections and on a kept-alive pool: the drain with its
// probes on --probe-port fails no request and ends the rollout well before
// a preStop sleep does; the control, with no delay, fails some, as the app
// closes its listener before kube-proxy has taken it out of the rules.
func rollout(k *kube) (string, error) {
	results := map[string]rolloutResult{}
	for _, key := range []string{"none", "prestop", "drain"} {
		v := rolloutVariantByKey(key)
		ns := "s12-" + key
		r, err := runRollout(k, ns, v)
		k.clear(ns)
		if err != nil {
			return "", fmt.Errorf("%s: %v", v.name, err)
		}
		results[key] = r
	}
	none, prestop, drain := results["none"], results["prestop"], results["drain"]
	share := drain.seconds / prestop.seconds
	figures := fmt.Sprintf("kube-proxy minSyncPeriod %s; no delay: %s, rollout %.1fs; preStop sleep 15: %s, %.1fs; drain with --probe-port: %s, %.1fs (%.0f%% of the preStop sleep's)",
		k.minSyncPeriod(), none.failures(), none.seconds, prestop.failures(), prestop.seconds, drain.failures(), drain.seconds, 100*share)
	if drain.failed != 0 || none.failed == 0 || share > rolloutShare {
		return "", fmt.Errorf("%s (want the drain to fail none in at most %.0f%% of the preStop sleep's rollout, and the control to fail some)", figures, 100*rolloutShare)
	}
	return figures, nil
}

// rolloutShare is the longest the drain's rollout may take, as a share of
// the preStop sleep's: the goal the drain was built for.
const rolloutShare = 0.4

// benchRollout runs every variant runs times and prints the results as a
// Markdown table, one row a variant (make bench-rollout).
func benchRollout(k *kube, runs int) {
	fmt.Printf("kube-proxy minSyncPeriod %s, %d runs a variant, %d requests a second on new connections and %d on a kept-alive pool\n\n",
		k.minSyncPeriod(), runs, rolloutLoad, rolloutLoad)
	fmt.Println("| variant | failed / sent, each run | rollout, each run | rollout, median |")
	fmt.Println("|---|---|---|---|")
	for _, v := range rolloutVariants() {
		var failed, times, holds []string
		var secs []float64
		for i := range runs {
			ns := fmt.Sprintf("bench-%s-%d", v.key, i+1)
			r, err := runRollout(k, ns, v)
			k.clear(ns)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench-rollout: %s run %d: %v\n", v.name, i+1, err)
				failed, times = append(failed, "error"), append(times, "-")
				continue
			}
			fmt.Fprintf(os.Stderr, "bench-rollout: %s run %d: %s, %.1fs, holds %v\n", v.name, i+1, r.failures(), r.seconds, r.holds)
			failed = append(failed, r.failures())
			times = append(times, fmt.Sprintf("%.1f s", r.seconds))
			secs = append(secs, r.seconds)
			for _, h := range r.holds {
				holds = append(holds, fmt.Sprintf("%.1f", h))
			}
		}
		name := v.name
		if len(holds) > 0 {
			name += fmt.Sprintf(" (app TERM after the sidecar's last request, each pod: %s s)", strings.Join(holds, ", "))
		}
		median := "-"
		if len(secs) > 0 {
			sort.Float64s(secs)
			median = fmt.Sprintf("%.1f s", secs[len(secs)/2])
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, strings.Join(failed, "; "), strings.Join(times, ", "), median)
	}
}
