// Command scenarios runs proxy-await's lifecycle claims as Kubernetes
// objects (Pods, Jobs, a CronJob, Deployments, a Service) through the API
// server of the cluster e2e/stack.sh started, and prints one line per
// scenario: PASS or FAIL, its number and name, and the figures measured. It
// exits 1 when any scenario fails. It runs in the cluster's network
// namespace, as the client of the pods and Services it reaches.
//
// Each scenario has a namespace of its own (s1, s2, ...), deleted when it
// ends. Each pod mounts $RUN/bin (proxy-await, the stand-in proxy, httpapp)
// at /opt/e2e and $RUN/out/NAMESPACE/POD at /out, where its containers
// record what they saw with /proc/uptime timestamps: the kernel's clock
// that every container and this runner share (busybox's date has no
// sub-second format).
//
//	scenarios -run $RUN -kubectl PATH -examples DIR -registry HOST:PORT [-only 1,3] [-again]
//
// -again runs only the scenarios that go through kube-proxy's rules, for a
// further pass in another kube-proxy mode.
//
// With -bench-rollout N it runs no scenario but each variant of scenario
// 12's rollout (-variants, default all) N times, saving each run's trace in
// -traces; -report DIR reads the traces in DIR, needs no cluster, prints a
// Markdown table of them and draws them in -picture (make bench-rollout).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type scenario struct {
	num  string
	name string
	run  func(k *kube) (figures string, err error)
}

// proxyAwaitImage is the release image as scripts/ociimage writes it, built
// from this clone by e2e/build.sh: /proxy-await, its entrypoint, on scratch.
const proxyAwaitImage = "k8s.local/proxy-await:e2e"

func main() {
	run := flag.String("run", "", "the run's working directory (e2e/stack.sh's $RUN)")
	kubectl := flag.String("kubectl", "kubectl", "the kubectl to run")
	examplesDir := flag.String("examples", "", "the directory of example manifests (scenario 9)")
	only := flag.String("only", "", "comma-separated scenario numbers to run (default all)")
	benchRuns := flag.Int("bench-rollout", 0, "run every rollout variant this many times instead of the scenarios")
	variants := flag.String("variants", "", "with -bench-rollout: comma-separated rollout variants (default all)")
	traces := flag.String("traces", "", "with -bench-rollout: the directory each run's trace is saved in")
	reportDir := flag.String("report", "", "print a table of the rollout traces in this directory instead, and draw them")
	picturePath := flag.String("picture", "", "with -report: the SVG file to draw the rollouts in")
	registry := flag.String("registry", "", "the cluster's registry, HOST:PORT (scenario 15)")
	again := flag.Bool("again", false, "run only the scenarios that go through kube-proxy's rules (8, 12), again in another kube-proxy mode")
	flag.Parse()
	if *reportDir != "" {
		if err := report(os.Stdout, *reportDir, *picturePath); err != nil {
			fatal(err)
		}
		return
	}
	if *run == "" || *examplesDir == "" || *registry == "" {
		fatal(fmt.Errorf("-run, -examples and -registry are required"))
	}
	k, err := connect(*run, *kubectl)
	if err != nil {
		fatal(err)
	}
	defer k.close()
	go k.watchExits()
	if *benchRuns > 0 {
		var keys []string
		if *variants != "" {
			keys = strings.Split(*variants, ",")
		}
		if *traces == "" {
			fatal(fmt.Errorf("-bench-rollout needs -traces"))
		}
		if err := benchRollout(k, *benchRuns, keys, *traces); err != nil {
			fatal(err)
		}
		return
	}
	selected := func(num string) bool {
		if *again && !proxied[num] {
			return false
		}
		return *only == "" || strings.Contains(","+*only+",", ","+num+",")
	}

	// The CronJob's runs are a minute apart: it is made first, and its
	// scenario, the last, checks them when its turn comes.
	var cronMade time.Time
	var cronErr error
	if selected("11") {
		cronMade, cronErr = cronStart(k)
	}
	scenarios := []scenario{
		{"1", "Job with a classic sidecar", jobClassic},
		{"2", "Job with a native sidecar", jobNativeSidecar},
		{"3", "deletion with --term-delay 3s", termDelay},
		{"4", "deletion with --drain-quiet 1s: a sidecar's requests hold the signal, an outside client's do not", drainQuiet},
		{"5", "deletion with --rewrite TERM:USR1", rewrite},
		{"6", "--kill-after for an app that ignores TERM", killAfter},
		{"7", "--install from proxy-await's image in a Deployment", installDeployment},
		{"8", "ClusterIP Service through kube-proxy", service},
		{"9", "examples/ admitted under Pod Security restricted", func(k *kube) (string, error) {
			return examples(k, *examplesDir)
		}},
		{"10", "restartPolicy OnFailure, with and without --keep-proxy-on-failure", onFailure},
		{"11", "CronJob with a classic sidecar", func(k *kube) (string, error) {
			if cronErr != nil {
				return "", cronErr
			}
			return cronJob(k, cronMade)
		}},
		{"12", "rolling update through a Service under load: the drain with --probe-port against no delay and a preStop sleep", rollout},
		{"13", "Job whose classic sidecar is killed mid-run, with and without --proxy-lost", proxyLost},
		{"14", "proxy-awaitctl policy in the API server, and what proxy-awaitctl inject adopts doing its job", func(k *kube) (string, error) {
			return adopt(k, *examplesDir)
		}},
		{"15", "proxy-awaitctl inject of containers without a command, from their images' registry", func(k *kube) (string, error) {
			return fromRegistry(k, *registry)
		}},
		{"16", "proxy-awaitctl policy --action deny turned on in a running cluster: what the cluster and the meshes do is admitted", safePolicy},
	}

	failed := 0
	for _, s := range scenarios {
		if !selected(s.num) {
			continue
		}
		start := time.Now()
		figures, err := s.run(k)
		verdict := "PASS"
		if err != nil {
			verdict, figures = "FAIL", err.Error()
			if dead := k.exited(); dead != "" {
				figures += " (" + dead + ")"
			}
			failed++
		}
		name := s.name
		if proxied[s.num] {
			mode, _ := k.nodes[0].proxyConfig()
			name += " [kube-proxy " + mode + "]"
		}
		fmt.Printf("%s %s %s (%.0fs): %s\n", verdict, s.num, name, time.Since(start).Seconds(), figures)
		k.clear("s" + s.num)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d scenario(s) failed\n", failed)
		os.Exit(1)
	}
}

// proxied are the scenarios that go through kube-proxy's rules, which make
// e2e runs again in each further kube-proxy mode.
var proxied = map[string]bool{"8": true, "12": true}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scenarios:", err)
	os.Exit(1)
}
