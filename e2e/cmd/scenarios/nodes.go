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
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
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
	here  bool   // this runner runs in it
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
		path := strings.TrimSpace(string(netns))
		here, err := sameFile(path, "/proc/self/ns/net")
		if err != nil {
			return nil, err
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
			netns: path,
			here:  here,
			conn:  conn,
			cri:   runtimeapi.NewRuntimeServiceClient(conn),
		})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no node described in %s", filepath.Join(run, "nodes"))
	}
	return nodes, nil
}

// sameFile says whether two paths name the same file (two namespace files,
// the same namespace).
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// dial opens a connection from the node: its socket is made in the node's
// network namespace, so that the node's routes and kube-proxy's rules take
// it, as they take a client running there. The socket is made by a thread
// that has entered the namespace and that ends with the dial: a socket
// stays in the namespace it was made in, and no other goroutine ever runs
// on that thread. In the runner's own namespace it is an ordinary dial.
func (n *node) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.here {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
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

// endpoints reads, from the node's kube-proxy rules, where they take a new
// connection to the Service at ip:port: each endpoint as IP:PORT, sorted,
// or none while the Service has no rules there. The rules are as the
// node's mode writes them: a KUBE-SERVICES rule jumping to the Service's
// chain, whose KUBE-SEP chains DNAT to the endpoints (iptables); an element
// of the service-ips map going to the Service's chain, whose numgen map
// goes to one chain an endpoint (nftables); a virtual server and its real
// servers (IPVS).
func (n *node) endpoints(ip string, port int) ([]string, error) {
	mode, _ := n.proxyConfig()
	var eps []string
	switch mode {
	case "iptables":
		out, err := n.inNode("iptables-save", "-t", "nat")
		if err != nil {
			return nil, nil
		}
		eps = iptablesEndpoints(string(out), ip, port)
	case "nftables":
		out, err := n.inNode("nft", "list", "map", "ip", "kube-proxy", "service-ips")
		if err != nil {
			return nil, nil
		}
		m := regexp.MustCompile(regexp.QuoteMeta(ip+" . tcp . "+strconv.Itoa(port)) + `\s*:\s*goto (service-\S+?)\s*[,}]`).FindSubmatch(out)
		if m == nil {
			return nil, nil
		}
		chain, err := n.inNode("nft", "list", "chain", "ip", "kube-proxy", string(m[1]))
		if err != nil {
			return nil, nil
		}
		for _, e := range regexp.MustCompile(`goto endpoint-\S+?__([0-9.]+)/([0-9]+)`).FindAllSubmatch(chain, -1) {
			eps = append(eps, string(e[1])+":"+string(e[2]))
		}
	case "ipvs":
		out, err := exec.Command("nsenter", "--net="+n.netns, "cat", "/proc/net/ip_vs").Output()
		if err != nil {
			return nil, nil
		}
		eps = ipvsEndpoints(string(out), ip, port)
	default:
		return nil, fmt.Errorf("%s: kube-proxy mode %q", n.name, mode)
	}
	sort.Strings(eps)
	return slices.Compact(eps), nil
}

// iptablesEndpoints reads iptables-save's nat table: the chain
// KUBE-SERVICES sends ip:port to, the KUBE-SEP chains it jumps to, and the
// address each of those DNATs to.
func iptablesEndpoints(nat, ip string, port int) []string {
	var rules [][]string
	for _, line := range strings.Split(nat, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "-A" {
			rules = append(rules, f[1:])
		}
	}
	arg := func(rule []string, flag string) string {
		if i := slices.Index(rule, flag); i >= 0 && i+1 < len(rule) {
			return rule[i+1]
		}
		return ""
	}
	svc := ""
	for _, r := range rules {
		if r[0] == "KUBE-SERVICES" && arg(r, "-d") == ip+"/32" && arg(r, "--dport") == strconv.Itoa(port) &&
			strings.HasPrefix(arg(r, "-j"), "KUBE-SVC-") {
			svc = arg(r, "-j")
		}
	}
	seps := map[string]bool{}
	for _, r := range rules {
		if r[0] == svc && strings.HasPrefix(arg(r, "-j"), "KUBE-SEP-") {
			seps[arg(r, "-j")] = true
		}
	}
	var eps []string
	for _, r := range rules {
		if seps[r[0]] && arg(r, "-j") == "DNAT" {
			eps = append(eps, arg(r, "--to-destination"))
		}
	}
	return eps
}

// ipvsEndpoints reads /proc/net/ip_vs: the real servers of the virtual
// server ip:port (TCP), each as IP:PORT.
func ipvsEndpoints(table, ip string, port int) []string {
	hex := func(addr net.IP, port int) string {
		a := addr.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", a[0], a[1], a[2], a[3], port)
	}
	addr := net.ParseIP(ip)
	if addr == nil || addr.To4() == nil {
		return nil
	}
	vs := "TCP  " + hex(addr, port) + " "
	var eps []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "TCP") || strings.HasPrefix(line, "UDP") || strings.HasPrefix(line, "FWM"):
			in = strings.HasPrefix(line, vs)
		case in && len(f) > 1 && f[0] == "->":
			a, p, ok := strings.Cut(f[1], ":")
			b, err1 := strconv.ParseUint(a, 16, 32)
			q, err2 := strconv.ParseUint(p, 16, 16)
			if ok && err1 == nil && err2 == nil {
				eps = append(eps, fmt.Sprintf("%d.%d.%d.%d:%d", byte(b>>24), byte(b>>16), byte(b>>8), byte(b), q))
			}
		}
	}
	return eps
}

// programmed waits until every node's kube-proxy takes new connections to
// the Service at ip:port on to endpoints: to exactly want (IP:PORT each)
// when it is not empty, to any otherwise. Nothing may be sent to a
// ClusterIP from a node before then: the kernel tracks a connection sent to
// it while no rule translates its address as one to the ClusterIP itself,
// and keeps that entry (SYN_SENT, two minutes); a later connection from the
// same source port, which the runner's load reuses within seconds, is taken
// for a retransmission of it, goes untranslated to an address nothing
// answers, and fails with "no route to host", whatever the pods do. The
// rules are read, not tried: a request would be traffic the pods count.
func (k *kube) programmed(ip string, port int, want []string) error {
	want = slices.Sorted(slices.Values(want))
	for _, n := range k.nodes {
		var got []string
		if err := poll(90*time.Second, "", func() (bool, error) {
			var err error
			if got, err = n.endpoints(ip, port); err != nil {
				return false, err
			}
			if len(want) == 0 {
				return len(got) > 0, nil
			}
			return slices.Equal(got, want), nil
		}); err != nil {
			return fmt.Errorf("%s's kube-proxy rules for %s:%d lead to %v, want %v", n.name, ip, port, got, want)
		}
	}
	return nil
}

// endpointsOf is the pods' addresses on port, as kube-proxy's rules give
// them.
func endpointsOf(pods []corev1.Pod, port int) []string {
	var eps []string
	for _, p := range pods {
		eps = append(eps, p.Status.PodIP+":"+strconv.Itoa(port))
	}
	return eps
}

// conntrack reads the node's connection tracking table and returns the
// entries whose original destination is ip and whose state is neither
// ESTABLISHED nor TIME_WAIT: where a connection that failed may have gone.
// A connection left unanswered stays there in SYN_SENT, with the endpoint
// it was translated to, or none; a refused one is not there at all (the
// kernel drops an entry at a reset).
func (n *node) conntrack(ip string) []string {
	out, err := exec.Command("nsenter", "--net="+n.netns, "cat", "/proc/net/nf_conntrack").Output()
	if err != nil {
		return []string{"unread: " + err.Error()}
	}
	var entries []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[2] != "tcp" {
			continue
		}
		// The first dst= is the original direction's, the second the
		// reply's.
		if i := slices.IndexFunc(f, func(s string) bool { return strings.HasPrefix(s, "dst=") }); i < 0 || f[i] != "dst="+ip {
			continue
		}
		if state := f[5]; state != "ESTABLISHED" && state != "TIME_WAIT" {
			entries = append(entries, strings.Join(f[2:], " "))
		}
	}
	return entries
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
