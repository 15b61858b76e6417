// Command scenarios runs proxy-await's lifecycle claims as pods under the
// standalone kubelet that e2e/stack.sh started, and prints one line per
// scenario: PASS or FAIL, its number and name, and the figures measured. It
// exits 1 when any scenario fails.
//
// Pods are static-pod manifests written into the kubelet's manifest
// directory; deleting a pod is removing its manifest. Each pod mounts
// $RUN/bin (proxy-await, the stand-in proxy, httpapp) at /opt/e2e and its
// own $RUN/out/POD at /out, where its containers record what they saw with
// /proc/uptime timestamps: the kernel's clock that every container and this
// runner share (busybox's date has no sub-second format).
//
//	scenarios -run $RUN [-only 1,3]
//	scenarios -free-ports N    prints N free loopback TCP ports
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

type scenario struct {
	num  string
	name string
	run  func(k *kube) (figures string, err error)
}

var scenarios = []scenario{
	{"1", "job with a stand-in Linkerd proxy", jobLinkerd},
	{"2", "job with an Istio native sidecar", jobIstioSidecar},
	{"3", "deletion with --term-delay 3s", termDelay},
	{"4", "deletion with --drain-quiet 1s under kept-alive traffic", drainQuiet},
	{"5", "deletion with --rewrite TERM:USR1", rewrite},
	{"6", "--kill-after for an app that ignores TERM", killAfter},
	{"7", "--install from proxy-await's image into an emptyDir", install},
}

// proxyAwaitImage is the release image as scripts/ociimage writes it, built
// from this clone by e2e/build.sh: /proxy-await, its entrypoint, on scratch.
const proxyAwaitImage = "k8s.local/proxy-await:e2e"

func main() {
	run := flag.String("run", "", "the run's working directory (e2e/stack.sh's $RUN)")
	only := flag.String("only", "", "comma-separated scenario numbers to run (default all)")
	freePorts := flag.Int("free-ports", 0, "print this many free loopback TCP ports and exit")
	flag.Parse()
	if *freePorts > 0 {
		ports, err := pickPorts(*freePorts)
		if err != nil {
			fatal(err)
		}
		fmt.Println(strings.Trim(fmt.Sprint(ports), "[]"))
		return
	}
	if *run == "" {
		fatal(fmt.Errorf("-run is required"))
	}
	k, err := connect(*run)
	if err != nil {
		fatal(err)
	}
	defer k.close()
	go k.watchExits()
	if err := k.waitHealthy(90 * time.Second); err != nil {
		fatal(err)
	}

	failed := 0
	for _, s := range scenarios {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.num+",") {
			continue
		}
		start := time.Now()
		figures, err := s.run(k)
		verdict := "PASS"
		if err != nil {
			verdict, figures = "FAIL", err.Error()
			failed++
		}
		fmt.Printf("%s %s %s (%.0fs): %s\n", verdict, s.num, s.name, time.Since(start).Seconds(), figures)
		k.removeAll()
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d scenario(s) failed\n", failed)
		os.Exit(1)
	}
}

// pickPorts returns n distinct free ports on 127.0.0.1. They stay free until
// a pod binds them: nothing else on a test machine takes ephemeral ports
// that fast, and a clash shows as a pod that fails, not a wrong result.
func pickPorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scenarios:", err)
	os.Exit(1)
}
