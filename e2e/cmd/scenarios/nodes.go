package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// node is a node of the cluster as the runner reaches it: its containerd's
// CRI, which still knows a deleted pod's containers for a moment after the
// API server has forgotten the pod, its network namespace, where its
// kube-proxy's rules take a client's connections to Services, and its
// kube-proxy's settings. e2e/stack.sh describes each in $RUN/nodes/NAME.
type node struct {
	name  string
	ip    string
	dir   string // $RUN/nodes/NAME
	netns string // the path of its network namespace
	conn  *grpc.ClientConn
	cri   runtimeapi.RuntimeServiceClient
}

// loadNodes connects to each node e2e/stack.sh describes under run, in the
// order of their names (e2e-1 first: the control plane's, where this runner
// runs).
func loadNodes(run string) ([]*node, error) {
	dirs, err := filepath.Glob(filepath.Join(run, "nodes", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var nodes []*node
	for _, dir := range dirs {
		ip, err1 := os.ReadFile(filepath.Join(dir, "ip"))
		netns, err2 := os.ReadFile(filepath.Join(dir, "netns"))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s does not describe a node: %v %v", dir, err1, err2)
		}
		conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "run", "containerd.sock"),
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, &node{
			name:  filepath.Base(dir),
			ip:    strings.TrimSpace(string(ip)),
			dir:   dir,
			netns: strings.TrimSpace(string(netns)),
			conn:  conn,
			cri:   runtimeapi.NewRuntimeServiceClient(conn),
		})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no node described in %s", filepath.Join(run, "nodes"))
	}
	return nodes, nil
}

// dial opens a connection from the node: its socket is made in the node's
// network namespace, so that the node's routes and kube-proxy's rules take
// it, as they take a client running there. The socket is made by a thread
// that has entered the namespace and that ends with the dial: a socket
// stays in the namespace it was made in, and no other goroutine ever runs
// on that thread.
func (n *node) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine.
		runtime.LockOSThread()
		f, err := os.Open(n.netns)
		if err != nil {
			done <- result{nil, err}
			return
		}
		err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		f.Close()
		if err != nil {
			done <- result{nil, fmt.Errorf("entering %s's network namespace: %v", n.name, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		done <- result{c, err}
	}()
	r := <-done
	return r.conn, r.err
}

// client is an HTTP client that sends from the node, each request on a new
// connection, or, pooled, on kept-alive connections.
func (n *node) client(pooled bool) *http.Client {
	t := &http.Transport{DialContext: n.dial, DisableKeepAlives: !pooled, MaxIdleConnsPerHost: 8}
	return &http.Client{Timeout: 5 * time.Second, Transport: t}
}

// get sends one GET from the node on a new connection and returns the body,
// trimmed.
func (n *node) get(url string) (string, error) {
	return getWith(n.client(false), url)
}

// proxyConfig reads the node's kube-proxy mode and minSyncPeriod from the
// configuration e2e/stack.sh wrote; stack.sh proxy rewrites it when it
// restarts kube-proxy in another mode.
func (n *node) proxyConfig() (mode, minSync string) {
	b, _ := os.ReadFile(filepath.Join(n.dir, "etc", "kube-proxy.yaml"))
	mode, minSync = "unknown", "unknown"
	if m := regexp.MustCompile(`(?m)^mode: *(\S+)`).FindSubmatch(b); m != nil {
		mode = string(m[1])
	}
	if m := regexp.MustCompile(`minSyncPeriod: *([^,} ]+)`).FindSubmatch(b); m != nil {
		minSync = string(m[1])
	}
	return mode, minSync
}

// inNode runs a command in the node's network and mount namespaces, where
// its kube-proxy runs and sees its rules.
func (n *node) inNode(args ...string) ([]byte, error) {
	ns := append([]string{"--net=" + n.netns, "--mount=" + filepath.Join(n.dir, "ns", "mnt")}, args...)
	return exec.Command("nsenter", ns...).Output()
}

// programmed says whether the node's kube-proxy has the rules that take a
// new connection to the Service at ip:port on to its endpoints, as its mode
// writes them: a KUBE-SERVICES rule jumping to the Service's chain
// (iptables), an element of the service-ips map going to the Service's
// chain (nftables), a virtual server with a real server (IPVS).
func (n *node) programmed(ip string, port int) (bool, error) {
	mode, _ := n.proxyConfig()
	switch mode {
	case "iptables":
		out, err := n.inNode("iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES")
		if err != nil {
			return false, nil
		}
		want := []string{"-d " + ip + "/32", "--dport " + strconv.Itoa(port) + " ", "-j KUBE-SVC-"}
		for _, rule := range strings.Split(string(out), "\n") {
			if all(rule, want) {
				return true, nil
			}
		}
		return false, nil
	case "nftables":
		out, err := n.inNode("nft", "list", "map", "ip", "kube-proxy", "service-ips")
		if err != nil {
			return false, nil
		}
		elem := regexp.MustCompile(regexp.QuoteMeta(ip+" . tcp . "+strconv.Itoa(port)) + `\s*:\s*goto service-`)
		return elem.Match(out), nil
	case "ipvs":
		out, err := exec.Command("nsenter", "--net="+n.netns, "cat", "/proc/net/ip_vs").Output()
		if err != nil {
			return false, nil
		}
		return ipvsHasReal(string(out), ip, port), nil
	}
	return false, fmt.Errorf("%s: kube-proxy mode %q", n.name, mode)
}

// ipvsHasReal says whether /proc/net/ip_vs lists the virtual server ip:port
// (TCP) with at least one real server behind it.
func ipvsHasReal(table, ip string, port int) bool {
	addr := net.ParseIP(ip).To4()
	if addr == nil {
		return false
	}
	vs := fmt.Sprintf("TCP  %02X%02X%02X%02X:%04X", addr[0], addr[1], addr[2], addr[3], port)
	in := false
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "TCP") || strings.HasPrefix(line, "UDP") || strings.HasPrefix(line, "FWM"):
			in = strings.HasPrefix(line, vs+" ")
		case in && strings.HasPrefix(strings.TrimSpace(line), "->"):
			return true
		}
	}
	return false
}

// programmed waits until every node's kube-proxy takes new connections to
// the Service at ip:port on to its endpoints. Nothing may be sent to a
// ClusterIP from a node before then: the kernel tracks a connection sent to
// it while no rule translates its address as one to the ClusterIP itself,
// and keeps that entry (SYN_SENT, two minutes); a later connection from the
// same source port, which the runner's load reuses within seconds, is taken
// for a retransmission of it, goes untranslated to an address nothing
// answers, and fails with "no route to host", whatever the pods do.
func (k *kube) programmed(ip string, port int) error {
	for _, n := range k.nodes {
		if err := poll(60*time.Second, "kube-proxy rule for "+ip+" on "+n.name, func() (bool, error) {
			return n.programmed(ip, port)
		}); err != nil {
			return err
		}
	}
	return nil
}

// proxyModes says how each node's kube-proxy runs: "iptables, minSyncPeriod
// 1s on e2e-1, 5s on e2e-2".
func (k *kube) proxyModes() string {
	var modes, syncs []string
	for _, n := range k.nodes {
		mode, sync := n.proxyConfig()
		if len(modes) == 0 || modes[len(modes)-1] != mode {
			modes = append(modes, mode)
		}
		syncs = append(syncs, sync+" on "+n.name)
	}
	return strings.Join(modes, "/") + ", minSyncPeriod " + strings.Join(syncs, ", ")
}

// nodeOf finds a node by name.
func (k *kube) nodeOf(name string) (*node, error) {
	for _, n := range k.nodes {
		if n.name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q", name)
}
