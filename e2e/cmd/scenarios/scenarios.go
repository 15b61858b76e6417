package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobScript is a job that records how many requests the stand-in proxy had
// logged when it started and when it ended, then exits with code: comparing
// with the proxy's log orders the job's start and end against the proxy's
// answers without comparing two clocks.
func jobScript(code int) []string {
	return sh(jobBody(code))
}

func jobBody(code int) string {
	return fmt.Sprintf(`echo "start $(wc -l </out/proxy.log)" >/out/app
sleep 1
echo "end $(wc -l </out/proxy.log)" >>/out/app
exit %d`, code)
}

// checkJob waits for a Job to reach cond (Complete or Failed) and checks
// the claims of a Job with a proxy on its pod: the pod's phase, the app's
// exit code, the app started after the first 200 on the readiness path, and
// exactly one shutdown POST after it ended (shutdowns = 0: none at all).
func checkJob(k *kube, ns, job, readyPath, shutdownPath string, cond batchv1.JobConditionType, code int32, shutdowns int) (string, error) {
	if _, err := k.waitJob(ns, job, cond, 120*time.Second); err != nil {
		return "", err
	}
	name, err := k.jobPod(ns, job)
	if err != nil {
		return "", err
	}
	phase := corev1.PodSucceeded
	if cond == batchv1.JobFailed {
		phase = corev1.PodFailed
	}
	p, err := k.waitPod(ns, name, 30*time.Second, string(phase), func(p *corev1.Pod) bool { return p.Status.Phase == phase })
	if err != nil {
		return "", err
	}
	if got, _ := exited(p, "app"); got != code {
		return "", fmt.Errorf("%s: app exit %d, want %d", name, got, code)
	}
	return checkProxyLog(k, ns, name, readyPath, shutdownPath, shutdowns)
}

// checkProxyLog checks the order of the pod's app and proxy: the app
// started after the first 200 on the readiness path, and exactly shutdowns
// POSTs came after it ended, none before.
func checkProxyLog(k *kube, ns, name, readyPath, shutdownPath string, shutdowns int) (string, error) {
	app := k.out(ns, name, "app")
	s, _ := field(app, "start")
	e, _ := field(app, "end")
	start, err1 := strconv.Atoi(s)
	end, err2 := strconv.Atoi(e)
	entries := proxyLog(k.out(ns, name, "proxy.log"))
	if err1 != nil || err2 != nil || start > end || end > len(entries) {
		return "", fmt.Errorf("%s: app recorded %q against a proxy log of %d entries", name, app, len(entries))
	}
	// proxy-await stops probing at the first 200, so there is one in all.
	if count(entries[:start], "GET", readyPath, 200) != 1 || count(entries, "GET", readyPath, 200) != 1 {
		return "", fmt.Errorf("%s: %d GET %s answered 200 before the app started, %d in all, want 1 and 1",
			name, count(entries[:start], "GET", readyPath, 200), readyPath, count(entries, "GET", readyPath, 200))
	}
	if n := count(entries[:end], "POST", shutdownPath, 0); n != 0 {
		return "", fmt.Errorf("%s: %d POST %s before the app ended", name, n, shutdownPath)
	}
	all, ok := count(entries[end:], "POST", shutdownPath, 0), count(entries[end:], "POST", shutdownPath, 200)
	if all != shutdowns || ok != shutdowns {
		return "", fmt.Errorf("%s: %d POST %s after the app ended (%d answered 200), want %d", name, all, shutdownPath, ok, shutdowns)
	}
	return fmt.Sprintf("started after %d×503 and a 200, %d POST %s after it ended",
		count(entries[:start], "GET", readyPath, 503), shutdowns, shutdownPath), nil
}

// 1. A Job whose proxy is a classic sidecar never completes without
// proxy-await: the proxy outlives the app. With proxy-await -S the app
// waits for the proxy, and the proxy is told to quit when the app ends, on
// Linkerd's ports and on Istio's, with the app's exit code kept.
func jobClassic(k *kube) (string, error) {
	const ns, window = "s1", 20 * time.Second
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	jobs := []struct {
		name string
		p    pod
	}{
		{"control", pod{Containers: []ctr{linkerdProxy(), {Name: "app", Command: jobScript(0)}}}},
		{"linkerd", pod{Containers: []ctr{linkerdProxy("-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait("-S", "--"), jobScript(0)...)}}}},
		{"istio", pod{Containers: []ctr{istioProxy("-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait("--proxy", "istio", "-S", "--"), jobScript(0)...)}}}},
		{"exit3", pod{Containers: []ctr{linkerdProxy("-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait("-S", "--"), jobScript(3)...)}}}},
	}
	for _, j := range jobs {
		if err := k.createJob(ns, j.name, j.p, 0); err != nil {
			return "", err
		}
	}
	control, err := k.jobPod(ns, "control")
	if err != nil {
		return "", err
	}
	if _, err := k.waitPod(ns, control, 120*time.Second, "with its app exited", func(p *corev1.Pod) bool {
		_, done := exited(p, "app")
		return done
	}); err != nil {
		return "", err
	}
	appDone := time.Now()
	linkerd, err := checkJob(k, ns, "linkerd", "/ready", "/shutdown", batchv1.JobComplete, 0, 1)
	if err != nil {
		return "", err
	}
	istio, err := checkJob(k, ns, "istio", "/healthz/ready", "/quitquitquit", batchv1.JobComplete, 0, 1)
	if err != nil {
		return "", err
	}
	failed, err := checkJob(k, ns, "exit3", "/ready", "/shutdown", batchv1.JobFailed, 3, 1)
	if err != nil {
		return "", err
	}
	// The control: its Job must stay active, its pod Running, for the
	// whole window.
	for time.Since(appDone) < window {
		j, err := k.api.BatchV1().Jobs(ns).Get(bg, "control", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		p, err := k.api.CoreV1().Pods(ns).Get(bg, control, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if j.Status.Active != 1 || jobHas(j, batchv1.JobComplete) || p.Status.Phase != corev1.PodRunning {
			return "", fmt.Errorf("control without proxy-await: Job %s, pod %s %.1fs after its app exited, want active and Running",
				jobState(j), p.Status.Phase, time.Since(appDone).Seconds())
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Sprintf("control without proxy-await: Job still active, pod Running %.0fs after its app exited; -S on Linkerd's port: Complete, %s; on Istio's: Complete, %s; app exit 3: Failed with exit 3, %s",
		window.Seconds(), linkerd, istio, failed), nil
}

// 2. A Job whose Istio proxy is a native sidecar (an init container with
// restartPolicy Always): the kubelet ends the sidecar itself once the app
// is done, so no -S is needed, and the sidecar never restarts. With -S the
// Job completes too; the proxy then exits on the POST a moment before the
// app's container does, and a kubelet that looks in between restarts it
// once, as it restarts any sidecar that exits while the app runs.
func jobNativeSidecar(k *kube) (string, error) {
	const ns = "s2"
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	mk := func(shutdown bool) pod {
		args := []string{"--proxy", "istio"}
		if shutdown {
			args = append(args, "-S")
		}
		return pod{Sidecars: []ctr{istioProxy("-ready-after", "2s")},
			Containers: []ctr{{Name: "app", Command: append(proxyAwait(append(args, "--")...), jobScript(0)...)}}}
	}
	if err := k.createJob(ns, "plain", mk(false), 0); err != nil {
		return "", err
	}
	if err := k.createJob(ns, "shutdown", mk(true), 0); err != nil {
		return "", err
	}
	var figures []string
	for _, job := range []string{"plain", "shutdown"} {
		shutdowns, label := 0, "no -S"
		if job == "shutdown" {
			shutdowns, label = 1, "-S"
		}
		f, err := checkJob(k, ns, job, "/healthz/ready", "/quitquitquit", batchv1.JobComplete, 0, shutdowns)
		if err != nil {
			return "", err
		}
		name, _ := k.jobPod(ns, job)
		p, err := k.api.CoreV1().Pods(ns).Get(bg, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		side, _ := container(p, "proxy")
		code, _ := exited(p, "proxy")
		if side.RestartCount > int32(shutdowns) {
			return "", fmt.Errorf("%s: the sidecar restarted %d times, want at most %d", name, side.RestartCount, shutdowns)
		}
		figures = append(figures, fmt.Sprintf("%s: Complete, %s, sidecar exit %d, restarts %d", label, f, code, side.RestartCount))
	}
	return strings.Join(figures, "; "), nil
}

// termApp is an app that records the SIGTERM that reaches it and exits 0.
var termApp = sh(`trap 'echo TERM $(up) >>/out/app; exit 0' TERM
echo started >>/out/app
while :; do sleep 1 & wait $!; done`)

type namedPod struct {
	name string
	pod
}

// deleteAndTime creates the pods, waits for their containers to say
// "started", deletes them together through the API server and waits for
// each app container to exit. It returns the deletion time and each pod's
// exit.
func deleteAndTime(k *kube, ns string, pods []namedPod, timeout time.Duration) (float64, []exit, error) {
	for _, p := range pods {
		if err := k.createPod(ns, p.name, p.pod); err != nil {
			return 0, nil, err
		}
	}
	for _, p := range pods {
		for _, c := range p.Containers {
			if c.Name == "proxy" {
				continue
			}
			// The app writes /out/app, the witness /out/witness.
			if err := k.waitOut(ns, p.name, c.Name, "started", 120*time.Second); err != nil {
				return 0, nil, err
			}
		}
	}
	var deleted float64
	for _, p := range pods {
		t, err := k.remove(ns, p.name)
		if err != nil {
			return 0, nil, err
		}
		if deleted == 0 {
			deleted = t
		}
	}
	var exits []exit
	for _, p := range pods {
		e, err := k.waitExit(ns, p.name, "app", timeout)
		if err != nil {
			return 0, nil, err
		}
		exits = append(exits, e)
	}
	return deleted, exits, nil
}

// termTimes reads when the kubelet's TERM reached the witness and when a TERM
// reached the app.
func termTimes(k *kube, ns, name string) (kubelet, app float64, err error) {
	kubelet, ok1 := stamp(k.out(ns, name, "witness"), "TERM")
	app, ok2 := stamp(k.out(ns, name, "app"), "TERM")
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%s: TERM times missing: witness %q, app %q", name, k.out(ns, name, "witness"), k.out(ns, name, "app"))
	}
	return kubelet, app, nil
}

// 3. --term-delay holds the kubelet's SIGTERM: the app keeps serving for the
// delay, then gets TERM and exits 0. The control, without the flag, gets it
// at once.
func termDelay(k *kube) (string, error) {
	const ns = "s3"
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	pods := []namedPod{
		{"delay", pod{Containers: []ctr{witness,
			{Name: "app", Command: append(proxyAwait("--proxy", "none", "--term-delay", "3s", "--"), termApp...)}}}},
		{"control", pod{Containers: []ctr{witness,
			{Name: "app", Command: append(proxyAwait("--proxy", "none", "--"), termApp...)}}}},
	}
	deleted, exits, err := deleteAndTime(k, ns, pods, 60*time.Second)
	if err != nil {
		return "", err
	}
	kt, at, err := termTimes(k, ns, "delay")
	if err != nil {
		return "", err
	}
	ckt, cat, err := termTimes(k, ns, "control")
	if err != nil {
		return "", err
	}
	held, controlHeld := at-kt, cat-ckt
	if held < 2 || held > 4 || exits[0].code != 0 {
		return "", fmt.Errorf("app TERM %+.2fs after the kubelet's (want 3±1), exit %d (want 0)", held, exits[0].code)
	}
	if controlHeld > 1 || exits[1].code != 0 {
		return "", fmt.Errorf("control without --term-delay: app TERM %+.2fs after the kubelet's, exit %d", controlHeld, exits[1].code)
	}
	return fmt.Sprintf("kubelet TERM %+.2fs after the delete, app TERM %+.2fs after it, exit 0 %+.2fs after the delete (control without --term-delay: %+.2fs, exit 0)",
		kt-deleted, held, exits[0].finished-deleted, controlHeld), nil
}

// 4. --drain-quiet and what counts as traffic: after the stop signal, a
// client outside the pod (this runner, on one kept-alive connection to the
// pod's address, as behind kube-proxy) keeps sending, and a sidecar inside
// the pod sends for 2 s more on its pooled loopback connection, as a proxy
// draining does. The outside client's requests stop holding the signal
// once no new connection from outside has come for 1 s; the sidecar's hold
// it: the app gets SIGTERM about 1 s after the sidecar's last request, while
// the outside client is still sending.
func drainQuiet(k *kube) (string, error) {
	const ns, name, sidecarFor = "s4", "drain", 2 * time.Second
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	p := pod{Grace: 40, Containers: []ctr{witness,
		{Name: "sidecar", Command: []string{"/opt/e2e/httpapp", "-keepalive", "http://127.0.0.1:8080/",
			"-for", sidecarFor.String(), "-out", "/out/sidecar"}},
		{Name: "app", Command: proxyAwait("--proxy", "none", "--term-delay", "20s", "--drain-quiet", "1s", "--",
			"/opt/e2e/httpapp", "-serve", ":8080", "-out", "/out/app")}}}
	if err := k.createPod(ns, name, p); err != nil {
		return "", err
	}
	for file, word := range map[string]string{"app": "listening", "sidecar": "connected", "witness": "started"} {
		if err := k.waitOut(ns, name, file, word, 120*time.Second); err != nil {
			return "", err
		}
	}
	running, err := k.waitPod(ns, name, 30*time.Second, "given an address", func(p *corev1.Pod) bool { return p.Status.PodIP != "" })
	if err != nil {
		return "", err
	}
	url := "http://" + running.Status.PodIP + ":8080/"

	// One connection: the transport keeps it alive and never opens another.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	newConns := 0
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			newConns++
		}
	}}
	get := func() error {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	// Every 200 ms from 1 s before the delete, until the app closes the
	// connection (at its SIGTERM), or 8 s after the delete.
	var deleted float64
	var answered []float64
	var stopped error
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if deleted == 0 && time.Since(start) >= time.Second {
			if deleted, err = k.remove(ns, name); err != nil {
				return "", err
			}
		}
		if deleted != 0 && uptime()-deleted >= 8 {
			break
		}
		t := uptime()
		if stopped = get(); stopped != nil {
			break
		}
		answered = append(answered, t)
	}
	e, err := k.waitExit(ns, name, "app", 60*time.Second)
	client.CloseIdleConnections()
	if err != nil {
		return "", err
	}
	kt, at, err := termTimes(k, ns, name)
	if err != nil {
		return "", err
	}
	sidecarLast, ok := stamp(k.out(ns, name, "sidecar"), "last")
	if !ok {
		return "", fmt.Errorf("the sidecar recorded %q", k.out(ns, name, "sidecar"))
	}
	sidecarSent := ""
	for _, line := range strings.Split(k.out(ns, name, "sidecar"), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "last" {
			sidecarSent = f[2] + " " + f[3]
		}
	}
	// The outside client's last answered request before the app's TERM.
	lastOutside := 0.0
	for _, t := range answered {
		if t <= at {
			lastOutside = t
		}
	}
	quiet := at - sidecarLast
	figures := fmt.Sprintf("kubelet TERM %+.2fs after the delete; the sidecar's last request (%s) %+.2fs after it, the outside client's %d requests on %d connection(s) went on until %+.2fs; app TERM %+.2fs after the sidecar's last request, %.2fs after the outside client's latest, exit %d",
		kt-deleted, sidecarSent, sidecarLast-kt, len(answered), newConns, lastOutside-kt, quiet, at-lastOutside, e.code)
	// Held by the sidecar: TERM 1±0.5 s after its last request. Not held by
	// the outside client: it was still sending within 0.5 s of the TERM,
	// which came long before it stopped.
	if newConns != 1 || quiet < 0.5 || quiet > 2 || at-lastOutside > 0.5 || e.code != 0 || sidecarLast-kt < 1 {
		return "", fmt.Errorf("%s (want TERM 1±0.5s after the sidecar's last request and within 0.5s of an outside request on 1 connection, exit 0; the client stopped: %v)", figures, stopped)
	}
	return figures, nil
}

// 5. --rewrite TERM:USR1: the app, which stops on USR1, gets USR1 for the
// kubelet's TERM, and never a TERM.
func rewrite(k *kube) (string, error) {
	const ns, name = "s5", "rewrite"
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	app := sh(`trap 'echo TERM $(up) >>/out/app' TERM
trap 'echo USR1 $(up) >>/out/app; got=1' USR1
got=0
echo started >>/out/app
while [ $got = 0 ]; do sleep 1 & wait $!; done
sleep 2 & wait $!
echo end $(up) >>/out/app`)
	p := namedPod{name, pod{Containers: []ctr{witness,
		{Name: "app", Command: append(proxyAwait("--proxy", "none", "--rewrite", "TERM:USR1", "--"), app...)}}}}
	deleted, exits, err := deleteAndTime(k, ns, []namedPod{p}, 60*time.Second)
	if err != nil {
		return "", err
	}
	out := k.out(ns, name, "app")
	kt, _ := stamp(k.out(ns, name, "witness"), "TERM")
	usr1, gotUSR1 := stamp(out, "USR1")
	_, gotTERM := field(out, "TERM")
	end, _ := stamp(out, "end")
	if !gotUSR1 || gotTERM || exits[0].code != 0 {
		return "", fmt.Errorf("app recorded %q and exited %d (want USR1, no TERM, exit 0)", out, exits[0].code)
	}
	return fmt.Sprintf("kubelet TERM %+.2fs after the delete, app USR1 %+.2fs after it, no TERM in the %.1fs the app ran on, exit 0",
		kt-deleted, usr1-kt, end-usr1), nil
}

// 6. --kill-after: an app that ignores SIGTERM is killed after the given time,
// early enough for the shutdown POST to reach the proxy while it still runs
// (its preStop hook holds it, as Linkerd's waitBeforeExitSeconds does), and
// the container exits 137 long before the grace period ends.
func killAfter(k *kube) (string, error) {
	const ns, name, grace = "s6", "kill", 20
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	app := sh(`trap 'echo TERM $(up) >>/out/app' TERM
echo started >>/out/app
while :; do sleep 1 & wait $!; done`)
	proxy := linkerdProxy()
	proxy.PreStop = []string{"sleep", "15"}
	p := namedPod{name, pod{Grace: grace, Containers: []ctr{proxy,
		{Name: "app", Command: append(proxyAwait("-S", "--kill-after", "2s", "--"), app...)}}}}
	deleted, exits, err := deleteAndTime(k, ns, []namedPod{p}, 60*time.Second)
	if err != nil {
		return "", err
	}
	proxyExit, err := k.waitExit(ns, name, "proxy", 60*time.Second)
	if err != nil {
		return "", err
	}
	term, ok := stamp(k.out(ns, name, "app"), "TERM")
	if !ok {
		return "", fmt.Errorf("the app recorded no TERM: %q", k.out(ns, name, "app"))
	}
	shutdowns := count(proxyLog(k.out(ns, name, "proxy.log")), "POST", "/shutdown", 200)
	killed := exits[0].finished - term
	figures := fmt.Sprintf("app TERM %+.2fs after the delete (ignored), exit %d %+.2fs after the TERM (grace %ds), %d POST /shutdown answered 200, proxy exit %d %+.2fs after the delete",
		term-deleted, exits[0].code, killed, grace, shutdowns, proxyExit.code, proxyExit.finished-deleted)
	if exits[0].code != 137 || killed < 1 || killed > 3.5 || shutdowns != 1 || proxyExit.finished-deleted > 14 {
		return "", fmt.Errorf("%s (want exit 137 2±1s after the TERM, 1 POST, the proxy gone before its preStop ends)", figures)
	}
	return figures, nil
}
