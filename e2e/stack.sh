#!/bin/sh
# stack.sh up|down: starts or stops containerd and a standalone kubelet whose
# every file lives under $RUN. Each workaround below is explained in
# docs/e2e.md.
#
# up writes $RUN/ports (the kubelet's read-only, secure and healthz ports,
# picked free) and leaves containerd and the kubelet running; down stops
# them, removes every pod, mount, cgroup and /run directory the run made,
# keeps the logs in $CACHE/logs and removes $RUN.
set -eu
. "$(dirname "$0")/env.sh"

# The sysctls the kubelet sets at start-up: it writes into regular files
# bind-mounted over them in its own mount namespace, not into the host's.
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

up() {
	if [ -e "$RUN" ]; then
		log "$RUN exists: a run is going on, or was interrupted; 'e2e/stack.sh down' clears it"
		exit 1
	fi
	mkdir -p "$RUN"/etc "$RUN"/manifests "$RUN"/var/containerd "$RUN"/var/kubelet \
		"$RUN"/var/log "$RUN"/var/lib "$RUN"/run "$RUN"/opt "$RUN"/cni/bin "$RUN"/cni/conf \
		"$RUN"/fakesys "$RUN"/logs "$RUN"/out "$RUN"/bin
	# containerd 1.6 puts its shim sockets in /run/containerd/s whatever the
	# config says; down removes the directory if this run created it.
	[ -e /run/containerd ] || touch "$RUN/made-run-containerd"
	[ -e /run/mount ] || touch "$RUN/made-run-mount"
	# E2E_PROXY_AWAIT runs the scenarios against another build.
	cp "${E2E_PROXY_AWAIT:-$BIN/proxy-await}" "$RUN/bin/proxy-await"
	cp "$BIN/fakeproxy" "$BIN/httpapp" "$RUN/bin/"
	"$BIN/scenarios" -free-ports 3 >"$RUN/ports"
	read -r ro secure healthz <"$RUN/ports"

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
	  stream_server_address = "127.0.0.1"
	  stream_server_port = "0"
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "$RUN/cni/bin"
	    conf_dir = "$RUN/cni/conf"
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	    runtime_type = "io.containerd.runc.v2"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	      SystemdCgroup = false
	      Root = "$RUN/run/runc"
	TOML
	# containerd runs at the usual priority: its shims and the pods inherit
	# it, and the pods' timing is what the scenarios measure.
	containerd --config "$RUN/etc/containerd.toml" >"$RUN/logs/containerd.log" 2>&1 &
	echo $! >"$RUN/containerd.pid"
	i=0
	until ctr --address "$sock" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || { log "containerd did not come up: $RUN/logs/containerd.log"; exit 1; }
		sleep 0.1
	done
	for img in pause busybox proxy-await-image; do
		ctr --address "$sock" -n k8s.io images import "$BIN/$img.tar" >/dev/null
	done

	cat >"$RUN/etc/kubelet.yaml" <<-YAML
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	staticPodPath: $RUN/manifests
	fileCheckFrequency: 5s
	syncFrequency: 5s
	address: 127.0.0.1
	readOnlyPort: $ro
	port: $secure
	healthzBindAddress: 127.0.0.1
	healthzPort: $healthz
	authentication:
	  anonymous: {enabled: true}
	  webhook: {enabled: false}
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

	fakes=""
	for s in $SYSCTLS; do
		f=$RUN/fakesys/$(echo "$s" | tr / .)
		cat "/proc/sys/$s" >"$f"
		fakes="$fakes mount --bind $f /proc/sys/$s;"
	done
	# Its own mount namespace: /var/log and /var/lib (paths the kubelet
	# hardcodes) and the sysctls are bind-mounted from $RUN there only, and
	# every mount it makes vanishes with it.
	unshare -m --propagation private sh -c "
		mount -n --bind $RUN/var/log /var/log
		mount -n --bind $RUN/var/lib /var/lib
		$fakes
		exec nice -n 19 $BIN/kubelet --config=$RUN/etc/kubelet.yaml \
			--root-dir=$RUN/var/kubelet --cert-dir=$RUN/var/kubelet/pki \
			--hostname-override=e2e --v=2" >"$RUN/logs/kubelet.log" 2>&1 &
	echo $! >"$RUN/kubelet.pid"
	i=0
	until busybox wget -q -O /dev/null "http://127.0.0.1:$healthz/healthz" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 "$(cat "$RUN/kubelet.pid")" 2>/dev/null; then
			log "the kubelet is not healthy: see $CACHE/logs/kubelet.log"
			exit 1
		fi
		sleep 0.1
	done
}

# stop PIDFILE NAME: SIGTERM, then SIGKILL after 20 s.
stop() {
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -eq 200 ]; then
			log "$2 ignored SIGTERM for 20 s: SIGKILL"
			kill -9 "$pid" 2>/dev/null || true
		fi
		sleep 0.1
	done
	rm -f "$1"
}

down() {
	[ -d "$RUN" ] || return 0
	stop "$RUN/kubelet.pid" kubelet
	if [ -f "$RUN/containerd.pid" ]; then
		"$BIN/cri" -endpoint "unix://$RUN/run/containerd.sock" rmp-all >/dev/null ||
			log "could not remove every pod: see $RUN/logs/containerd.log"
	fi
	stop "$RUN/containerd.pid" containerd
	# A shim outlives containerd if a pod could not be removed.
	for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $RUN/" || true); do
		log "killing leftover shim $pid"
		kill -9 "$pid" 2>/dev/null || true
	done
	# Mounts under $RUN (container root filesystems, sandbox /dev/shm),
	# deepest first.
	awk -v run="$RUN/" 'index($5, run) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" || true; done
	# cgroupfs driver without per-QoS cgroups: containerd's k8s.io parents.
	for d in /sys/fs/cgroup/*/k8s.io; do
		[ -d "$d" ] && rmdir "$d"/* "$d" 2>/dev/null || true
	done
	[ -f "$RUN/made-run-containerd" ] && rm -rf /run/containerd
	[ -f "$RUN/made-run-mount" ] && rm -rf /run/mount
	rm -rf "$CACHE/logs"
	cp -r "$RUN/logs" "$CACHE/logs" 2>/dev/null || true
	rm -rf "$RUN"
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
	echo "usage: $0 up|down" >&2
	exit 2
	;;
esac
