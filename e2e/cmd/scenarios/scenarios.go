package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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

// checkJob waits for a job pod to finish and checks the claims of a Job with
// a proxy: the phase, the app's exit code, the app started after the first
// 200 on the readiness path, and exactly one shutdown POST after it ended
// (shutdowns = 0: none at all).
func checkJob(k *kube, name, readyPath, shutdownPath, phase string, code, shutdowns int) (string, error) {
	p, err := k.waitPod(name, 90*time.Second, "finished", func(p podStatus) bool {
		return p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed"
	})
	if err != nil {
		return "", err
	}
	got, _ := p.exited("app")
	if p.Status.Phase != phase || got != code {
		return "", fmt.Errorf("%s: phase %s with app exit %d, want %s with %d", name, p.Status.Phase, got, phase, code)
	}
	app := k.out(name, "app")
	s, _ := field(app, "start")
	e, _ := field(app, "end")
	start, err1 := strconv.Atoi(s)
	end, err2 := strconv.Atoi(e)
	entries := proxyLog(k.out(name, "proxy.log"))
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
	return fmt.Sprintf("%s, app exit %d, started after %d×503 and a 200, %d POST %s after it ended",
		phase, code, count(entries[:start], "GET", readyPath, 503), shutdowns, shutdownPath), nil
}

// 1. Without proxy-await a Job's pod never completes: the proxy outlives the
// app. With proxy-await -S the app waits for the proxy, and the proxy is told
// to quit when the app ends, with the app's exit code kept.
func jobLinkerd(k *kube) (string, error) {
	ports, err := pickPorts(3)
	if err != nil {
		return "", err
	}
	const window = 20 * time.Second
	linkerd := func(port int, args ...string) ctr {
		return ctr{Name: "proxy", Command: fakeproxy(append([]string{"-flavor", "linkerd", "-addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...)...)}
	}
	pods := []pod{
		{Name: "s1-control", Containers: []ctr{linkerd(ports[0]), {Name: "app", Command: jobScript(0)}}},
		{Name: "s1-shutdown", Containers: []ctr{linkerd(ports[1], "-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait("-S", "-p", strconv.Itoa(ports[1]), "--"), jobScript(0)...)}}},
		{Name: "s1-exit3", Containers: []ctr{linkerd(ports[2], "-ready-after", "2s"),
			{Name: "app", Command: append(proxyAwait("-S", "-p", strconv.Itoa(ports[2]), "--"), jobScript(3)...)}}},
	}
	for _, p := range pods {
		p.run = k.run
		if err := k.deploy(p); err != nil {
			return "", err
		}
	}
	if _, err := k.waitPod("s1-control", 90*time.Second, "with its app exited", func(p podStatus) bool {
		_, done := p.exited("app")
		return done
	}); err != nil {
		return "", err
	}
	appDone := time.Now()
	ok, err := checkJob(k, "s1-shutdown", "/ready", "/shutdown", "Succeeded", 0, 1)
	if err != nil {
		return "", err
	}
	failed, err := checkJob(k, "s1-exit3", "/ready", "/shutdown", "Failed", 3, 1)
	if err != nil {
		return "", err
	}
	// The control: the pod must stay Running for the whole window.
	for time.Since(appDone) < window {
		pods, err := k.pods()
		if err != nil {
			return "", err
		}
		if ph := pods["s1-control"].Status.Phase; ph != "Running" {
			return "", fmt.Errorf("control without proxy-await: phase %s %.1fs after its app exited, want Running", ph, time.Since(appDone).Seconds())
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Sprintf("control without proxy-await still Running %.0fs after its app exited; -S: %s; app exit 3: %s",
		window.Seconds(), ok, failed), nil
}

// 2. The Istio endpoints, with the proxy as a native sidecar: the kubelet
// ends the sidecar itself once the app is done; -S must not make it restart.
func jobIstioSidecar(k *kube) (string, error) {
	ports, err := pickPorts(4)
	if err != nil {
		return "", err
	}
	mk := func(name string, admin, ready int, shutdown bool) pod {
		args := []string{"--proxy", "istio",
			"--ready-url", fmt.Sprintf("http://127.0.0.1:%d/healthz/ready", ready),
			"--shutdown-url", fmt.Sprintf("http://127.0.0.1:%d/quitquitquit", admin)}
		if shutdown {
			args = append(args, "-S")
		}
		return pod{Name: name, run: k.run,
			Sidecars: []ctr{{Name: "proxy", Command: fakeproxy("-flavor", "istio", "-ready-after", "2s",
				"-addr", fmt.Sprintf("127.0.0.1:%d", admin), "-ready-addr", fmt.Sprintf("127.0.0.1:%d", ready))}},
			Containers: []ctr{{Name: "app", Command: append(proxyAwait(append(args, "--")...), jobScript(0)...)}},
		}
	}
	pods := []pod{mk("s2-shutdown", ports[0], ports[1], true), mk("s2-plain", ports[2], ports[3], false)}
	var figures []string
	for _, p := range pods {
		if err := k.deploy(p); err != nil {
			return "", err
		}
	}
	for i, p := range pods {
		shutdowns := 0
		if i == 0 {
			shutdowns = 1
		}
		f, err := checkJob(k, p.Name, "/healthz/ready", "/quitquitquit", "Succeeded", 0, shutdowns)
		if err != nil {
			return "", err
		}
		st, _ := k.pods()
		side, _ := st[p.Name].container("proxy")
		code, _ := st[p.Name].exited("proxy")
		if side.RestartCount != 0 {
			return "", fmt.Errorf("%s: the sidecar restarted %d times", p.Name, side.RestartCount)
		}
		label := "-S"
		if i == 1 {
			label = "without -S"
		}
		figures = append(figures, fmt.Sprintf("%s: %s, sidecar exit %d, restarts 0", label, f, code))
	}
	return strings.Join(figures, "; "), nil
}

// termApp is an app that records the SIGTERM that reaches it and exits 0.
var termApp = sh(`trap 'echo TERM $(up) >>/out/app; exit 0' TERM
echo started >>/out/app
while :; do sleep 1 & wait $!; done`)

// deleteAndTime starts the pods, waits for their containers to say
// "started", deletes them together and waits for each app container to exit.
// It returns the deletion time and each pod's exit.
func deleteAndTime(k *kube, pods []pod, timeout time.Duration) (float64, []exit, error) {
	for _, p := range pods {
		if err := k.deploy(p); err != nil {
			return 0, nil, err
		}
	}
	for _, p := range pods {
		for _, c := range p.Containers {
			if c.Name == "proxy" {
				continue
			}
			// The app writes /out/app, the witness /out/witness.
			if err := k.waitOut(p.Name, c.Name, "started", 90*time.Second); err != nil {
				return 0, nil, err
			}
		}
	}
	var deleted float64
	for _, p := range pods {
		t, err := k.remove(p.Name)
		if err != nil {
			return 0, nil, err
		}
		if deleted == 0 {
			deleted = t
		}
	}
	var exits []exit
	for _, p := range pods {
		e, err := k.waitExit(p.Name, "app", timeout)
		if err != nil {
			return 0, nil, err
		}
		exits = append(exits, e)
	}
	return deleted, exits, nil
}

// termTimes reads when the kubelet's TERM reached the witness and when a TERM
// reached the app.
func termTimes(k *kube, name string) (kubelet, app float64, err error) {
	kubelet, ok1 := stamp(k.out(name, "witness"), "TERM")
	app, ok2 := stamp(k.out(name, "app"), "TERM")
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%s: TERM times missing: witness %q, app %q", name, k.out(name, "witness"), k.out(name, "app"))
	}
	return kubelet, app, nil
}

// 3. --term-delay holds the kubelet's SIGTERM: the app keeps serving for the
// delay, then gets TERM and exits 0. The control, without the flag, gets it
// at once.
func termDelay(k *kube) (string, error) {
	pods := []pod{
		{Name: "s3-delay", run: k.run, Containers: []ctr{witness,
			{Name: "app", Command: append(proxyAwait("--proxy", "none", "--term-delay", "3s", "--"), termApp...)}}},
		{Name: "s3-control", run: k.run, Containers: []ctr{witness,
			{Name: "app", Command: append(proxyAwait("--proxy", "none", "--"), termApp...)}}},
	}
	deleted, exits, err := deleteAndTime(k, pods, 60*time.Second)
	if err != nil {
		return "", err
	}
	kt, at, err := termTimes(k, "s3-delay")
	if err != nil {
		return "", err
	}
	ckt, cat, err := termTimes(k, "s3-control")
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

// 4. --drain-quiet: while a client keeps sending requests on one kept-alive
// connection, the SIGTERM stays held; it goes about 1 s after the last one.
func drainQuiet(k *kube) (string, error) {
	ports, err := pickPorts(1)
	if err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p := pod{Name: "s4-drain", run: k.run, Grace: 40, Containers: []ctr{witness,
		{Name: "app", Command: proxyAwait("--proxy", "none", "--term-delay", "20s", "--drain-quiet", "1s", "--",
			"/opt/e2e/httpapp", "-serve", addr, "-out", "/out/app")}}}
	if err := k.deploy(p); err != nil {
		return "", err
	}
	if err := k.waitOut(p.Name, "app", "listening", 90*time.Second); err != nil {
		return "", err
	}
	if err := k.waitOut(p.Name, "witness", "started", 90*time.Second); err != nil {
		return "", err
	}

	// One connection: the transport keeps it alive and never opens another.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	newConns := 0
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			newConns++
		}
	}}
	get := func() error {
		req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
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
	var deleted, last float64
	requests, failure := 0, ""
	for start := time.Now(); ; {
		if deleted == 0 && time.Since(start) >= time.Second {
			if deleted, err = k.remove(p.Name); err != nil {
				return "", err
			}
		}
		if deleted != 0 && uptime()-deleted >= 3 {
			break
		}
		t := uptime()
		if err := get(); err != nil {
			failure = fmt.Sprintf("request %d failed %+.2fs after the delete (%v); ", requests+1, t-deleted, err)
			break
		}
		last = t
		requests++
		time.Sleep(200 * time.Millisecond)
	}
	// The connection stays open, and idle, until the app has exited.
	e, err := k.waitExit(p.Name, "app", 60*time.Second)
	client.CloseIdleConnections()
	if err != nil {
		return "", err
	}
	kt, at, err := termTimes(k, p.Name)
	if err != nil {
		return "", err
	}
	// httpapp's own count: "TERM <uptime> conns=N requests=M".
	served := ""
	for _, line := range strings.Split(k.out(p.Name, "app"), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "TERM" {
			served = f[2] + " " + f[3]
		}
	}
	quiet := at - last
	figures := fmt.Sprintf("%d requests on %d connection(s) (server: %s), the last %+.2fs after the delete; kubelet TERM %+.2fs after the delete, app TERM %+.2fs after the last request, exit %d",
		requests, newConns, served, last-deleted, kt-deleted, quiet, e.code)
	if failure != "" || newConns != 1 || quiet < 0.5 || quiet > 2 || e.code != 0 {
		return "", fmt.Errorf("%s%s (want every request answered on 1 connection, TERM 1±0.5s after the last request, exit 0)", failure, figures)
	}
	return figures, nil
}

// 5. --rewrite TERM:USR1: the app, which stops on USR1, gets USR1 for the
// kubelet's TERM, and never a TERM.
func rewrite(k *kube) (string, error) {
	app := sh(`trap 'echo TERM $(up) >>/out/app' TERM
trap 'echo USR1 $(up) >>/out/app; got=1' USR1
got=0
echo started >>/out/app
while [ $got = 0 ]; do sleep 1 & wait $!; done
sleep 2 & wait $!
echo end $(up) >>/out/app`)
	p := pod{Name: "s5-rewrite", run: k.run, Containers: []ctr{witness,
		{Name: "app", Command: append(proxyAwait("--proxy", "none", "--rewrite", "TERM:USR1", "--"), app...)}}}
	deleted, exits, err := deleteAndTime(k, []pod{p}, 60*time.Second)
	if err != nil {
		return "", err
	}
	out := k.out(p.Name, "app")
	kt, _ := stamp(k.out(p.Name, "witness"), "TERM")
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
	ports, err := pickPorts(1)
	if err != nil {
		return "", err
	}
	const grace = 20
	app := sh(`trap 'echo TERM $(up) >>/out/app' TERM
echo started >>/out/app
while :; do sleep 1 & wait $!; done`)
	p := pod{Name: "s6-kill", run: k.run, Grace: grace, Containers: []ctr{
		{Name: "proxy", Command: fakeproxy("-flavor", "linkerd", "-addr", fmt.Sprintf("127.0.0.1:%d", ports[0])),
			PreStop: []string{"sleep", "15"}},
		{Name: "app", Command: append(proxyAwait("-S", "-p", strconv.Itoa(ports[0]), "--kill-after", "2s", "--"), app...)}}}
	deleted, exits, err := deleteAndTime(k, []pod{p}, 60*time.Second)
	if err != nil {
		return "", err
	}
	proxy, err := k.waitExit(p.Name, "proxy", 60*time.Second)
	if err != nil {
		return "", err
	}
	term, ok := stamp(k.out(p.Name, "app"), "TERM")
	if !ok {
		return "", fmt.Errorf("the app recorded no TERM: %q", k.out(p.Name, "app"))
	}
	shutdowns := count(proxyLog(k.out(p.Name, "proxy.log")), "POST", "/shutdown", 200)
	killed := exits[0].finished - term
	figures := fmt.Sprintf("app TERM %+.2fs after the delete (ignored), exit %d %+.2fs after the TERM (grace %ds), %d POST /shutdown answered 200, proxy exit %d %+.2fs after the delete",
		term-deleted, exits[0].code, killed, grace, shutdowns, proxy.code, proxy.finished-deleted)
	if exits[0].code != 137 || killed < 1 || killed > 3.5 || shutdowns != 1 || proxy.finished-deleted > 14 {
		return "", fmt.Errorf("%s (want exit 137 2±1s after the TERM, 1 POST, the proxy gone before its preStop ends)", figures)
	}
	return figures, nil
}

// 7. An application image without proxy-await gets it from proxy-await's own
// image: an init container of that image runs --install into an emptyDir,
// and the job, in the busybox image as another user, runs the copy from the
// volume, mounted read-only. The job is a Job with a stand-in Linkerd proxy
// as in scenario 1: it waits, runs, and shuts the proxy down.
func install(k *kube) (string, error) {
	ports, err := pickPorts(1)
	if err != nil {
		return "", err
	}
	const nobody = 65534
	p := pod{Name: "s7-install", run: k.run, EmptyDirs: []string{"pa"},
		Inits: []ctr{{Name: "install", Image: proxyAwaitImage, Args: []string{"--install", "/pa"},
			Mounts: []mount{{"pa", "/pa", false}}}},
		Containers: []ctr{
			{Name: "proxy", Command: fakeproxy("-flavor", "linkerd", "-addr", fmt.Sprintf("127.0.0.1:%d", ports[0]), "-ready-after", "2s")},
			{Name: "app", User: nobody, Mounts: []mount{{"pa", "/pa", true}},
				Command: append([]string{"/pa/proxy-await", "-S", "-p", strconv.Itoa(ports[0]), "--"},
					sh(`id -u >/out/uid; `+jobBody(0))...)},
		}}
	// The job, as nobody, writes its record into /out.
	out := filepath.Join(k.run, "out", p.Name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(out, 0o777); err != nil {
		return "", err
	}
	if err := k.deploy(p); err != nil {
		return "", err
	}
	figures, err := checkJob(k, p.Name, "/ready", "/shutdown", "Succeeded", 0, 1)
	if err != nil {
		return "", err
	}
	st, _ := k.pods()
	code, done := st[p.Name].exited("install")
	uid := strings.TrimSpace(k.out(p.Name, "uid"))
	if !done || code != 0 || uid != strconv.Itoa(nobody) {
		return "", fmt.Errorf("install exited %d (done %v), the job ran as uid %q: want 0 and %d", code, done, uid, nobody)
	}
	return fmt.Sprintf("install exit 0; the job ran /pa/proxy-await as uid %s from the read-only volume: %s", uid, figures), nil
}
