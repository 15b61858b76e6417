#!/bin/sh
# stack.sh up|down|proxy MODE: starts or stops a two-node Kubernetes cluster,
# each node in a network namespace of its own, the two joined by a veth
# pair: on node 1 etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and the cluster's registry; on each node containerd, a kubelet registered as node
# e2e-N, and kube-proxy. Each workaround below is explained in docs/e2e.md.
#
# up leaves the cluster running with both nodes Ready, both kube-proxies
# synced (in mode E2E_PROXY_MODE, iptables by default) and the default
# ServiceAccount made; the admin's kubeconfig is $RUN/pki/admin.kubeconfig,
# for clients run in node 1's namespace (in_netns). Each node describes
# itself in $RUN/nodes/NAME for the scenario runner: its address (ip), its
# network namespace (netns), containerd's socket (run/containerd.sock) and
# kube-proxy's configuration (etc/kube-proxy.yaml). If an earlier run left
# anything behind, up clears it first.
#
# proxy MODE restarts both kube-proxies in another mode (iptables, nftables
# or ipvs); each removes the rules of the mode it replaces as it starts.
# can MODE says whether kube-proxy can run in MODE on this machine, and if
# not, why.
#
# down stops every process of the run, removes every pod, container,
# cgroup, mount and namespace the run made, keeps the logs in $CACHE/logs
# and removes $RUN. It is safe to run at any time, as often as wanted, and
# after a run that was killed at any point.
set -eu
. "$(dirname "$0")/env.sh"

# The sysctls the kubelet sets at start-up: it writes into regular files
# bind-mounted over them in its node's mount namespace, not into the
# host's.
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

PKI=$RUN/pki
KUBECTL="$BIN/kubectl --kubeconfig=$PKI/admin.kubeconfig --cache-dir=$RUN/var/kubectl"

up() {
	if [ -e "$RUN" ] || any_netns; then
		log "clearing what an earlier run left behind"
		down
	fi
	mode=${E2E_PROXY_MODE:-iptables}
	if ! proxy_mode_ok "$mode"; then
		exit 1
	fi
	t0=$(date +%s)
	mkdir -p "$RUN"
	# down stops this script first, should it still be starting things.
	echo $$ >"$RUN/up.pid"
	mkdir -p "$RUN"/logs "$RUN"/out "$RUN"/bin "$RUN"/var/kubectl
	# E2E_PROXY_AWAIT and E2E_PROXY_AWAITCTL run the scenarios against
	# another build.
	cp "${E2E_PROXY_AWAIT:-$BIN/proxy-await}" "$RUN/bin/proxy-await"
	cp "${E2E_PROXY_AWAITCTL:-$BIN/proxy-awaitctl}" "$RUN/bin/proxy-awaitctl"
	cp "$BIN/fakeproxy" "$BIN/httpapp" "$RUN/bin/"
	set --
	for i in $NODES; do
		node "$i"
		set -- "$@" -node "$NODE_NAME=$NODE_IP"
	done
	"$BIN/pki" -dir "$PKI" -api-ip "$API_IP" -service-ip "$SERVICE_IP" -registry-ip "${REGISTRY%:*}" "$@"

	# util-linux's mount keeps its lock in /run/mount.
	[ -e /run/mount ] || touch "$RUN/made-run-mount"
	# `ip netns add` mounts /run/netns if it is not a mount yet; down undoes
	# what this run did there.
	[ -e /run/netns ] || touch "$RUN/made-run-netns"
	mountpoint -q /run/netns 2>/dev/null || touch "$RUN/made-run-netns-mount"
	for i in $NODES; do
		node "$i"
		ip netns add "$NODE_NETNS"
		ip -n "$NODE_NETNS" link set lo up
	done

	# The wire: a veth pair with an end in each node, the node's address
	# on it, and a default route through it, so that components looking
	# for one find it; what is sent to an address that neither node has
	# goes nowhere (no neighbour answers for it). Each node routes the
	# other's pod range to the other's address, as a CNI's routes do, and
	# forwards between its bridge, the wire and kube-proxy's rules
	# (/proc/sys/net is the namespace's own).
	node 1
	node1=$NODE_NETNS
	node 2
	ip -n "$node1" link add e2e0 type veth peer name e2e0 netns "$NODE_NETNS"
	for i in $NODES; do
		node "$i"
		ns=$NODE_NETNS
		ip -n "$ns" addr add "$NODE_IP/24" dev e2e0
		ip -n "$ns" link set e2e0 up
		ip -n "$ns" route add default dev e2e0
		nsenter --net="/run/netns/$ns" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward'
		for j in $NODES; do
			[ "$j" != "$i" ] || continue
			node "$j"
			ip -n "$ns" route add "$NODE_PODS" via "$NODE_IP" dev e2e0
		done
	done

	for i in $NODES; do
		node "$i"
		mount_namespace
	done

	# The control plane, on node 1. etcd keeps its data on the node's
	# /run, in memory: a run's state is small and thrown away.
	node 1
	start etcd 10 etcd --name e2e --data-dir /run/etcd \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster e2e=http://127.0.0.1:2380
	wait_for etcd etcd in_netns busybox wget -q -O /dev/null http://127.0.0.1:2379/health

	start kube-apiserver 10 "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
		--advertise-address="$API_IP" --bind-address="$API_IP" --secure-port=6443 \
		--service-cluster-ip-range="$SERVICE_CIDR" --authorization-mode=Node,RBAC \
		--client-ca-file="$PKI/ca.crt" \
		--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
		--kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
		--cert-dir=/run/kube-apiserver --profiling=false
	wait_for kube-apiserver kube-apiserver in_netns $KUBECTL get --raw /readyz

	for c in controller-manager scheduler; do
		conf=$PKI/$c.kubeconfig
		set -- --kubeconfig="$conf" --authentication-kubeconfig="$conf" --authorization-kubeconfig="$conf" \
			--bind-address=127.0.0.1 --leader-elect=false --profiling=false
		if [ $c = controller-manager ]; then
			# nodeipam is off: host-local IPAM gives the pods their
			# addresses, from each node's range. So is the
			# ValidatingAdmissionPolicy status controller: its write of a
			# policy's status makes this API server recompile the policy,
			# which can crash it if an admission evaluates the policy
			# meanwhile (docs/e2e.md). Each controller acts as its own
			# service account, as kubeadm sets it up.
			set -- "$@" --controllers='*,-nodeipam,-validatingadmissionpolicy-status-controller' \
				--use-service-account-credentials=true \
				--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt"
		fi
		start kube-$c 10 "$BIN/kube-$c" "$@"
	done

	# The registry, on node 1's address, with the images the scenarios
	# pull from it; it pushes them to itself before it says it is ready.
	start registry 10 "$BIN/registry" -addr "$REGISTRY" -cert "$PKI/registry.crt" -key "$PKI/registry.key" \
		-ca "$PKI/ca.crt" -ready "$RUN/registry.ready" \
		e2e/busybox:e2e="$BIN/busybox.tar" e2e/httpapp:e2e="$BIN/httpapp.tar" \
		e2e/proxy-await:e2e="$BIN/proxy-await-image"
	wait_for "the registry" registry test -s "$RUN/registry.ready"

	for i in $NODES; do
		node "$i"
		node_up "$mode"
	done
	for i in $NODES; do
		node "$i"
		wait_for "the kubelet of $NODE_NAME" "$NODE_NAME.kubelet" \
			nsenter --net="/run/netns/$NODE_NETNS" busybox wget -q -O /dev/null http://127.0.0.1:10248/healthz
		wait_for "node $NODE_NAME Ready" "$NODE_NAME.kubelet" node_ready
		wait_for "kube-proxy of $NODE_NAME" "$NODE_NAME.kube-proxy" proxy_healthy
	done
	wait_for "the default ServiceAccount" kube-controller-manager in_netns $KUBECTL get serviceaccount default
	node 1
	n1="$NODE_NAME at $NODE_IP (pods $NODE_PODS, minSyncPeriod $NODE_MIN_SYNC)"
	node 2
	log "cluster up in $(($(date +%s) - t0)) s: nodes $n1 and $NODE_NAME at $NODE_IP (pods $NODE_PODS, minSyncPeriod $NODE_MIN_SYNC) Ready, kube-proxy in $mode mode, Services in $SERVICE_CIDR"
}

# mount_namespace makes the current node's mount namespace, kept by a bind
# mount of it under $NODE_DIR/ns (a private mount, which such a bind
# needs). In it /run, /tmp, /var/lib and /var/log, which components write
# whatever their flags say, are the node's own; /etc/resolv.conf is empty,
# so no name is looked up anywhere; and the six sysctls the kubelet writes
# are regular files. Mounts made there (containers' root filesystems,
# volumes, the pods' network namespaces) never show on the host or on the
# other node, and vanish with it.
mount_namespace() {
	d=$NODE_DIR
	mkdir -p "$d"/etc/cni "$d"/var/containerd "$d"/var/kubelet "$d"/var/log "$d"/var/lib "$d"/var/cni \
		"$d"/run "$d"/opt "$d"/tmp "$d"/fakesys "$d"/ns
	echo "$NODE_IP" >"$d/ip"
	echo "/run/netns/$NODE_NETNS" >"$d/netns"
	mount --bind "$d/ns" "$d/ns"
	mount --make-private "$d/ns"
	touch "$d/ns/mnt"
	: >"$d/etc/resolv.conf"
	fakes=""
	for s in $SYSCTLS; do
		f=$d/fakesys/$(echo "$s" | tr / .)
		cat "/proc/sys/$s" >"$f"
		fakes="$fakes mount --bind $f /proc/sys/$s;"
	done
	unshare --mount="$d/ns/mnt" --propagation private sh -c "
		set -e
		mount -t tmpfs -o mode=0755 proxy-await-e2e /run
		mount --bind $d/tmp /tmp
		mount --bind $d/var/lib /var/lib
		mount --bind $d/var/log /var/log
		mount --bind $d/etc/resolv.conf /etc/resolv.conf
		$fakes"
}

# node_up MODE starts the current node's containerd, kubelet and kube-proxy
# (in MODE), and imports the images into its containerd.
node_up() {
	d=$NODE_DIR
	sock=$d/run/containerd.sock
	# containerd runs at the usual priority: its shims and the pods
	# inherit it, and the pods' timing is what the scenarios measure.
	cat >"$d/etc/containerd.toml" <<-TOML
	version = 2
	root = "$d/var/containerd"
	state = "$d/run/containerd"
	[grpc]
	  address = "$sock"
	[plugins."io.containerd.internal.v1.opt"]
	  path = "$d/opt"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "k8s.local/pause:e2e"
	  restrict_oom_score_adj = true
	  netns_mounts_under_state_dir = true
	  stream_server_address = "127.0.0.1"
	  stream_server_port = "0"
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "/usr/lib/cni"
	    conf_dir = "$d/etc/cni"
	  [plugins."io.containerd.grpc.v1.cri".registry]
	    config_path = "$d/etc/certs.d"
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	    runtime_type = "io.containerd.runc.v2"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	      SystemdCgroup = false
	      Root = "$d/run/runc"
	TOML
	# Each pod gets an address from its node's range on the node's bridge;
	# host-local keeps its leases under the node's directory.
	cat >"$d/etc/cni/10-e2e.conflist" <<-JSON
	{
	  "cniVersion": "1.0.0",
	  "name": "e2e",
	  "plugins": [{
	    "type": "bridge",
	    "bridge": "cni0",
	    "isGateway": true,
	    "hairpinMode": true,
	    "ipam": {
	      "type": "host-local",
	      "ranges": [[{"subnet": "$NODE_PODS"}]],
	      "routes": [{"dst": "0.0.0.0/0"}],
	      "dataDir": "$d/var/cni"
	    }
	  }]
	}
	JSON
	# The cluster's registry, trusted through the run's CA.
	mkdir -p "$d/etc/certs.d/$REGISTRY"
	cat >"$d/etc/certs.d/$REGISTRY/hosts.toml" <<-TOML
	server = "https://$REGISTRY"
	[host."https://$REGISTRY"]
	  capabilities = ["pull", "resolve"]
	  ca = "$PKI/ca.crt"
	TOML
	start "$NODE_NAME.containerd" 0 containerd --config "$d/etc/containerd.toml"
	wait_for "containerd of $NODE_NAME" "$NODE_NAME.containerd" ctr --address "$sock" version
	for img in pause busybox proxy-await-image; do
		ctr --address "$sock" -n k8s.io images import "$BIN/$img.tar" >/dev/null
	done

	cat >"$d/etc/kubelet.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	syncFrequency: 5s
	address: $NODE_IP
	port: 10250
	readOnlyPort: 0
	healthzBindAddress: 127.0.0.1
	healthzPort: 10248
	tlsCertFile: $PKI/kubelet-serving-$NODE_NAME.crt
	tlsPrivateKeyFile: $PKI/kubelet-serving-$NODE_NAME.key
	authentication:
	  anonymous: {enabled: false}
	  webhook: {enabled: false}
	  x509: {clientCAFile: $PKI/ca.crt}
	authorization: {mode: AlwaysAllow}
	containerRuntimeEndpoint: unix://$sock
	imageServiceEndpoint: unix://$sock
	cgroupDriver: cgroupfs
	cgroupsPerQOS: false
	enforceNodeAllocatable: ["none"]
	failSwapOn: false
	failCgroupV1: false
	makeIPTablesUtilChains: false
	podLogsDir: $d/var/log/pods
	volumePluginDir: $d/var/kubelet-plugins
	resolvConf: ""
	evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
	imageGCHighThresholdPercent: 100
	imageGCLowThresholdPercent: 99
	YAML
	start "$NODE_NAME.kubelet" 19 "$BIN/kubelet" --config="$d/etc/kubelet.yaml" \
		--kubeconfig="$PKI/kubelet-$NODE_NAME.kubeconfig" --root-dir="$d/var/kubelet" \
		--cert-dir="$d/var/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=2
	proxy_start "$1"
}

# proxy_start MODE starts the current node's kube-proxy in MODE, with the
# node's minSyncPeriod. It leaves the host's conntrack sysctls alone (0: as
# they are) and opens no node ports on localhost (which would need
# route_localnet). Traffic from outside the pods' range to a Service is
# masqueraded, as in any cluster.
proxy_start() {
	d=$NODE_DIR
	cat >"$d/etc/kube-proxy.yaml" <<-YAML
	apiVersion: kubeproxy.config.k8s.io/v1alpha1
	kind: KubeProxyConfiguration
	clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
	hostnameOverride: $NODE_NAME
	mode: $1
	clusterCIDR: $CLUSTER_PODS
	healthzBindAddress: 127.0.0.1:10256
	metricsBindAddress: 127.0.0.1:10249
	conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	iptables: {minSyncPeriod: $NODE_MIN_SYNC, localhostNodePorts: false}
	nftables: {minSyncPeriod: $NODE_MIN_SYNC}
	ipvs: {minSyncPeriod: $NODE_MIN_SYNC}
	YAML
	# --v=2: each sync of the rules, with its time, for the rollout traces.
	start "$NODE_NAME.kube-proxy" 10 "$BIN/kube-proxy" --config="$d/etc/kube-proxy.yaml" --v=2
}

# proxy MODE: both kube-proxies stopped, then started in MODE.
proxy() {
	mode=$1
	proxy_mode_ok "$mode" || exit 1
	for i in $NODES; do
		node "$i"
		stop "$NODE_NAME.kube-proxy"
	done
	for i in $NODES; do
		node "$i"
		proxy_start "$mode"
	done
	for i in $NODES; do
		node "$i"
		wait_for "kube-proxy of $NODE_NAME" "$NODE_NAME.kube-proxy" proxy_healthy
	done
	log "kube-proxy in $mode mode on every node"
}

# proxy_mode_ok MODE says whether kube-proxy can run in MODE here, and if
# not, why. IPVS needs the kernel's ip_vs (built in, or a module that
# modprobe loads: /proc/net/ip_vs then exists), the dummy link type for its
# kube-ipvs0 interface, and ipset.
proxy_mode_ok() {
	case $1 in
	iptables) ;;
	nftables)
		if ! command -v nft >/dev/null 2>&1; then
			log "kube-proxy mode nftables: no nft command (Debian's nftables)"
			return 1
		fi
		;;
	ipvs)
		if command -v modprobe >/dev/null 2>&1; then
			modprobe ip_vs 2>/dev/null || true
		fi
		if [ ! -e /proc/net/ip_vs ]; then
			log "kube-proxy mode ipvs: this kernel has no IPVS ($(ipvs_why))"
			return 1
		fi
		if ! command -v ipset >/dev/null 2>&1; then
			log "kube-proxy mode ipvs: no ipset command (Debian's ipset)"
			return 1
		fi
		;;
	*)
		log "kube-proxy mode $1: not one of iptables, nftables, ipvs"
		return 1
		;;
	esac
}

# ipvs_why says how the kernel was found to lack IPVS.
ipvs_why() {
	why="no /proc/net/ip_vs"
	if command -v modprobe >/dev/null 2>&1; then
		why="$why after modprobe ip_vs: $(modprobe ip_vs 2>&1 | tail -n 1)"
	else
		why="$why, and no modprobe"
	fi
	if [ -r /proc/config.gz ]; then
		conf=$(zcat /proc/config.gz | grep -E '^(# )?CONFIG_(IP_VS|MODULES)[ =]' | tr '\n' ';' | sed 's/;$//')
		why="$why; /proc/config.gz: $conf"
	fi
	printf %s "$why"
}

node_ready() {
	[ "$(in_netns $KUBECTL get node "$NODE_NAME" \
		-o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

proxy_healthy() {
	nsenter --net="/run/netns/$NODE_NETNS" busybox wget -q -O /dev/null http://127.0.0.1:10256/healthz
}

# start NAME NICE COMMAND...: runs COMMAND in the current node's namespaces,
# in the background, with its output in logs/NAME.log and its pid in
# NAME.pid. nsenter and nice exec what they run, so the pid is COMMAND's (a
# function would leave a subshell in between).
start() {
	name=$1 nice=$2
	shift 2
	nsenter --net="/run/netns/$NODE_NETNS" --mount="$NODE_DIR/ns/mnt" nice -n "$nice" "$@" \
		</dev/null >"$RUN/logs/$name.log" 2>&1 9>&- &
	echo $! >"$RUN/$name.pid"
}

# wait_for WHAT NAME COMMAND...: polls COMMAND every 0.1 s until it
# succeeds; fails after 90 s, or at once if process NAME has ended.
wait_for() {
	what=$1 name=$2
	shift 2
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 900 ] || ! kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then
			log "$what did not come up: see $CACHE/logs/$name.log"
			exit 1
		fi
		sleep 0.1
	done
}

# The run's network namespaces, those that exist.
netns_list() {
	for i in $NODES; do
		[ -e "/run/netns/$NETNS_PREFIX-$i" ] && echo "$NETNS_PREFIX-$i"
	done
	return 0
}

any_netns() { [ -n "$(netns_list)" ]; }

# ours PID: whether the process runs in one of the run's network
# namespaces, so that a pid file left by a run long gone never names
# another process.
ours() {
	inode=$(stat -L -c %i "/proc/$1/ns/net" 2>/dev/null) || return 1
	for ns in $(netns_list); do
		[ "$inode" = "$(stat -L -c %i "/run/netns/$ns")" ] && return 0
	done
	return 1
}

# stop NAME...: SIGTERM to each, then waits for all, with SIGKILL after 20 s.
stop() {
	pids=""
	for name in "$@"; do
		f=$RUN/$name.pid
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		rm -f "$f"
		if ours "$pid"; then
			kill "$pid" 2>/dev/null || true
			pids="$pids $pid"
		fi
	done
	i=0
	for pid in $pids; do
		while kill -0 "$pid" 2>/dev/null; do
			i=$((i + 1))
			if [ $i -eq 200 ]; then
				log "some of $* ignored SIGTERM for 20 s: SIGKILL"
				# shellcheck disable=SC2086
				kill -9 $pids 2>/dev/null || true
			fi
			sleep 0.1
		done
	done
}

down() {
	# An up still running (its caller was killed): it must start nothing
	# more.
	if [ -f "$RUN/up.pid" ]; then
		pid=$(cat "$RUN/up.pid")
		if [ "$pid" != $$ ] && grep -q stack.sh "/proc/$pid/cmdline" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		fi
	fi
	if [ -d "$RUN" ]; then
		set --
		for i in $NODES; do
			node "$i"
			set -- "$@" "$NODE_NAME.kubelet" "$NODE_NAME.kube-proxy"
		done
		stop "$@" kube-scheduler kube-controller-manager registry
		set --
		for i in $NODES; do
			node "$i"
			sock=$NODE_DIR/run/containerd.sock pidf=$RUN/$NODE_NAME.containerd.pid
			if [ -S "$sock" ] && [ -f "$pidf" ] && ours "$(cat "$pidf")"; then
				"$BIN/cri" -endpoint "unix://$sock" rmp-all >/dev/null ||
					log "could not remove every pod of $NODE_NAME through the CRI: see $CACHE/logs/$NODE_NAME.containerd.log"
			fi
			set -- "$@" "$NODE_NAME.containerd"
		done
		# etcd last: an API server without it hangs in its shutdown.
		stop "$@" kube-apiserver
		stop etcd
	fi
	# Whatever still runs in the namespaces: a shim whose pod could not be
	# removed, a client, what an interrupted run had started.
	for ns in $(netns_list); do
		i=0
		while :; do
			pids=$(ip netns pids "$ns")
			[ -n "$pids" ] || break
			i=$((i + 1))
			[ $i -lt 100 ] || { log "processes $pids in $ns survive SIGKILL"; break; }
			# shellcheck disable=SC2086
			kill -9 $pids 2>/dev/null || true
			sleep 0.1
		done
	done
	for i in $NODES; do
		node "$i"
		root=$NODE_DIR/run/runc/k8s.io
		[ -d "$root" ] || continue
		# Containers whose shim is gone: runc kills what runs in them and
		# removes their cgroups.
		for id in $(runc --root "$root" list -q 2>/dev/null); do
			runc --root "$root" delete --force "$id" 2>/dev/null ||
				log "runc could not delete container $id of $NODE_NAME"
		done
	done
	# The mount namespaces' bind mounts, and anything else mounted under
	# $RUN, deepest first.
	awk -v run="$RUN/" 'index($5, run) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" || true; done
	# cgroupfs driver without per-QoS cgroups: containerd's k8s.io parents.
	for d in /sys/fs/cgroup/*/k8s.io; do
		[ -d "$d" ] && rmdir "$d"/* "$d" 2>/dev/null || true
	done
	for ns in $(netns_list); do
		ip netns del "$ns"
	done
	if [ -f "$RUN/made-run-netns-mount" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
		umount /run/netns 2>/dev/null || true
	fi
	if [ -f "$RUN/made-run-netns" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
		rmdir /run/netns 2>/dev/null || true
	fi
	if [ -f "$RUN/made-run-mount" ]; then
		# Only if no other mount command put anything else there.
		rm -f /run/mount/utab.lock
		rmdir /run/mount 2>/dev/null || true
	fi
	if [ -d "$RUN" ]; then
		rm -rf "$CACHE/logs"
		cp -r "$RUN/logs" "$CACHE/logs" 2>/dev/null || true
		rm -rf "$RUN"
	fi
}

case "${1:-}" in
up) up ;;
down) down ;;
proxy) proxy "${2:?usage: $0 proxy iptables|nftables|ipvs}" ;;
can) proxy_mode_ok "${2:?usage: $0 can iptables|nftables|ipvs}" ;;
*)
	echo "usage: $0 up|down|proxy MODE|can MODE" >&2
	exit 2
	;;
esac
