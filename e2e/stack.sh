#!/bin/sh
# stack.sh up|down: starts or stops a single-node Kubernetes cluster (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, containerd, a
# kubelet registered as node $NODE_NAME, kube-proxy) inside a network
# namespace of its own. Each workaround below is explained in docs/e2e.md.
#
# up leaves the cluster running with the node Ready, kube-proxy synced and
# the default ServiceAccount made; the admin's kubeconfig is
# $RUN/pki/admin.kubeconfig, for clients run in the namespace (in_netns).
# If an earlier run left anything behind, up clears it first.
#
# down stops every process of the run, removes every pod, container,
# cgroup, mount and namespace the run made, keeps the logs in $CACHE/logs
# and removes $RUN. It is safe to run at any time, as often as wanted, and
# after a run that was killed at any point.
set -eu
. "$(dirname "$0")/env.sh"

# The sysctls the kubelet sets at start-up: it writes into regular files
# bind-mounted over them in the stack's mount namespace, not into the
# host's.
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

PKI=$RUN/pki
KUBECTL="$BIN/kubectl --kubeconfig=$PKI/admin.kubeconfig --cache-dir=$RUN/var/kubectl"

up() {
	if [ -e "$RUN" ] || netns_exists; then
		log "clearing what an earlier run left behind"
		down
	fi
	t0=$(date +%s)
	mkdir -p "$RUN"
	# down stops this script first, should it still be starting things.
	echo $$ >"$RUN/up.pid"
	mkdir -p "$RUN"/etc/cni "$RUN"/var/containerd "$RUN"/var/kubelet "$RUN"/var/log \
		"$RUN"/var/lib "$RUN"/var/cni "$RUN"/var/kubectl "$RUN"/run "$RUN"/opt "$RUN"/tmp \
		"$RUN"/fakesys "$RUN"/logs "$RUN"/out "$RUN"/bin "$RUN"/ns
	# E2E_PROXY_AWAIT and E2E_PROXY_AWAITCTL run the scenarios against
	# another build.
	cp "${E2E_PROXY_AWAIT:-$BIN/proxy-await}" "$RUN/bin/proxy-await"
	cp "${E2E_PROXY_AWAITCTL:-$BIN/proxy-awaitctl}" "$RUN/bin/proxy-awaitctl"
	cp "$BIN/fakeproxy" "$BIN/httpapp" "$RUN/bin/"
	"$BIN/pki" -dir "$PKI" -node "$NODE_NAME" -node-ip "$NODE_IP" -service-ip "$SERVICE_IP"

	# util-linux's mount keeps its lock in /run/mount.
	[ -e /run/mount ] || touch "$RUN/made-run-mount"

	# The network namespace: the node's address on a veth pair whose ends
	# are both inside, and a default route through it, so that components
	# looking for one find it, and what they send to any other address
	# goes nowhere. `ip netns add` mounts /run/netns if it is not a mount
	# yet; down undoes what this run did there.
	[ -e /run/netns ] || touch "$RUN/made-run-netns"
	mountpoint -q /run/netns 2>/dev/null || touch "$RUN/made-run-netns-mount"
	ip netns add "$NETNS"
	ip -n "$NETNS" link set lo up
	ip -n "$NETNS" link add e2e0 type veth peer name e2e1
	ip -n "$NETNS" addr add "$NODE_IP/24" dev e2e0
	ip -n "$NETNS" link set e2e0 up
	ip -n "$NETNS" link set e2e1 up
	ip -n "$NETNS" route add default dev e2e0
	# Pods reach Services through the node: it routes between the bridge
	# and kube-proxy's rules. /proc/sys/net is the namespace's own.
	in_netns sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward'

	# The mount namespace every component runs in, kept by a bind mount of
	# it under $RUN/ns (a private mount, which such a bind needs). In it
	# /run, /tmp, /var/lib and /var/log, which components write whatever
	# their flags say, are the run's own; /etc/resolv.conf is empty, so no
	# name is looked up anywhere; and the six sysctls the kubelet writes
	# are regular files. Mounts made there (containers' root filesystems,
	# volumes, the pods' network namespaces) never show on the host, and
	# vanish with it.
	mount --bind "$RUN/ns" "$RUN/ns"
	mount --make-private "$RUN/ns"
	touch "$RUN/ns/mnt"
	: >"$RUN/etc/resolv.conf"
	fakes=""
	for s in $SYSCTLS; do
		f=$RUN/fakesys/$(echo "$s" | tr / .)
		cat "/proc/sys/$s" >"$f"
		fakes="$fakes mount --bind $f /proc/sys/$s;"
	done
	unshare --mount="$RUN/ns/mnt" --propagation private sh -c "
		set -e
		mount -t tmpfs -o mode=0755 proxy-await-e2e /run
		mount --bind $RUN/tmp /tmp
		mount --bind $RUN/var/lib /var/lib
		mount --bind $RUN/var/log /var/log
		mount --bind $RUN/etc/resolv.conf /etc/resolv.conf
		$fakes"

	# etcd keeps its data on the namespace's /run, in memory: a run's
	# state is small and thrown away.
	start etcd 10 etcd --name e2e --data-dir /run/etcd \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster e2e=http://127.0.0.1:2380
	wait_for etcd etcd in_netns busybox wget -q -O /dev/null http://127.0.0.1:2379/health

	start kube-apiserver 10 "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
		--advertise-address="$NODE_IP" --bind-address="$NODE_IP" --secure-port=6443 \
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
			# addresses. Each controller acts as its own service account,
			# as kubeadm sets it up.
			set -- "$@" --controllers='*,-nodeipam' --use-service-account-credentials=true \
				--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt"
		fi
		start kube-$c 10 "$BIN/kube-$c" "$@"
	done

	# containerd runs at the usual priority: its shims and the pods inherit
	# it, and the pods' timing is what the scenarios measure.
	sock=$RUN/run/containerd.sock
	cat >"$RUN/etc/containerd.toml" <<-TOML
	version = 2
	root = "$RUN/var/containerd"
	state = "$RUN/run/containerd"
	[grpc]
	  address = "$sock"
	[plugins."io.containerd.internal.v1.opt"]
	  path = "$RUN/opt"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "k8s.local/pause:e2e"
	  restrict_oom_score_adj = true
	  netns_mounts_under_state_dir = true
	  stream_server_address = "127.0.0.1"
	  stream_server_port = "0"
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "/usr/lib/cni"
	    conf_dir = "$RUN/etc/cni"
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	    runtime_type = "io.containerd.runc.v2"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	      SystemdCgroup = false
	      Root = "$RUN/run/runc"
	TOML
	# Each pod gets an address on the bridge; host-local keeps its leases
	# under $RUN.
	cat >"$RUN/etc/cni/10-e2e.conflist" <<-JSON
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
	      "ranges": [[{"subnet": "$POD_CIDR"}]],
	      "routes": [{"dst": "0.0.0.0/0"}],
	      "dataDir": "$RUN/var/cni"
	    }
	  }]
	}
	JSON
	start containerd 0 containerd --config "$RUN/etc/containerd.toml"
	wait_for containerd containerd ctr --address "$sock" version
	for img in pause busybox proxy-await-image; do
		ctr --address "$sock" -n k8s.io images import "$BIN/$img.tar" >/dev/null
	done

	cat >"$RUN/etc/kubelet.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	syncFrequency: 5s
	address: $NODE_IP
	port: 10250
	readOnlyPort: 0
	healthzBindAddress: 127.0.0.1
	healthzPort: 10248
	tlsCertFile: $PKI/kubelet-serving.crt
	tlsPrivateKeyFile: $PKI/kubelet-serving.key
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
	podLogsDir: $RUN/var/log/pods
	volumePluginDir: $RUN/var/kubelet-plugins
	resolvConf: ""
	evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
	imageGCHighThresholdPercent: 100
	imageGCLowThresholdPercent: 99
	YAML
	start kubelet 19 "$BIN/kubelet" --config="$RUN/etc/kubelet.yaml" \
		--kubeconfig="$PKI/kubelet.kubeconfig" --root-dir="$RUN/var/kubelet" \
		--cert-dir="$RUN/var/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=2

	# kube-proxy leaves the host's conntrack sysctls alone (0: as they are)
	# and does not open node ports on localhost (which would need
	# route_localnet).
	cat >"$RUN/etc/kube-proxy.yaml" <<-YAML
	apiVersion: kubeproxy.config.k8s.io/v1alpha1
	kind: KubeProxyConfiguration
	clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
	hostnameOverride: $NODE_NAME
	mode: iptables
	clusterCIDR: $POD_CIDR
	healthzBindAddress: 127.0.0.1:10256
	metricsBindAddress: 127.0.0.1:10249
	conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	iptables: {minSyncPeriod: ${E2E_MIN_SYNC_PERIOD:-1s}, localhostNodePorts: false}
	YAML
	# --v=2: each sync of the rules, with its time, for the rollout traces.
	start kube-proxy 10 "$BIN/kube-proxy" --config="$RUN/etc/kube-proxy.yaml" --v=2

	wait_for kubelet kubelet in_netns busybox wget -q -O /dev/null http://127.0.0.1:10248/healthz
	wait_for "node $NODE_NAME Ready" kubelet node_ready
	wait_for kube-proxy kube-proxy in_netns busybox wget -q -O /dev/null http://127.0.0.1:10256/healthz
	wait_for "the default ServiceAccount" kube-controller-manager in_netns $KUBECTL get serviceaccount default
	log "cluster up in $(($(date +%s) - t0)) s: node $NODE_NAME Ready at $NODE_IP, pods in $POD_CIDR, Services in $SERVICE_CIDR"
}

node_ready() {
	[ "$(in_netns $KUBECTL get node "$NODE_NAME" \
		-o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# start NAME NICE COMMAND...: runs COMMAND in the stack's namespaces, in the
# background, with its output in logs/NAME.log and its pid in NAME.pid.
# nsenter and nice exec what they run, so the pid is COMMAND's (in_stack,
# a function, would leave a subshell in between).
start() {
	name=$1 nice=$2
	shift 2
	nsenter --net="/run/netns/$NETNS" --mount="$RUN/ns/mnt" nice -n "$nice" "$@" \
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

netns_exists() { [ -e "/run/netns/$NETNS" ]; }

# ours PID: whether the process runs in the run's network namespace, so
# that a pid file left by a run long gone never names another process.
ours() {
	netns_exists &&
		[ "$(stat -L -c %i "/proc/$1/ns/net" 2>/dev/null)" = "$(stat -L -c %i "/run/netns/$NETNS")" ]
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
		stop kubelet kube-proxy kube-scheduler kube-controller-manager
		if [ -S "$RUN/run/containerd.sock" ] && [ -f "$RUN/containerd.pid" ] && ours "$(cat "$RUN/containerd.pid")"; then
			"$BIN/cri" -endpoint "unix://$RUN/run/containerd.sock" rmp-all >/dev/null ||
				log "could not remove every pod through the CRI: see $CACHE/logs/containerd.log"
		fi
		# etcd last: an API server without it hangs in its shutdown.
		stop containerd kube-apiserver
		stop etcd
	fi
	# Whatever still runs in the namespace: a shim whose pod could not be
	# removed, a client, what an interrupted run had started.
	i=0
	while netns_exists; do
		pids=$(ip netns pids "$NETNS")
		[ -n "$pids" ] || break
		i=$((i + 1))
		[ $i -lt 100 ] || { log "processes $pids in $NETNS survive SIGKILL"; break; }
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null || true
		sleep 0.1
	done
	if [ -d "$RUN/run/runc/k8s.io" ]; then
		# Containers whose shim is gone: runc kills what runs in them and
		# removes their cgroups.
		for id in $(runc --root "$RUN/run/runc/k8s.io" list -q 2>/dev/null); do
			runc --root "$RUN/run/runc/k8s.io" delete --force "$id" 2>/dev/null ||
				log "runc could not delete container $id"
		done
	fi
	# The mount namespace's bind mount, and anything else mounted under
	# $RUN, deepest first.
	awk -v run="$RUN/" 'index($5, run) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" || true; done
	# cgroupfs driver without per-QoS cgroups: containerd's k8s.io parents.
	for d in /sys/fs/cgroup/*/k8s.io; do
		[ -d "$d" ] && rmdir "$d"/* "$d" 2>/dev/null || true
	done
	if netns_exists; then
		ip netns del "$NETNS"
	fi
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
*)
	echo "usage: $0 up|down" >&2
	exit 2
	;;
esac
