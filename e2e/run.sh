#!/bin/sh
# make e2e: proxy-await's lifecycle claims as Kubernetes objects in a real
# two-node cluster. Installs what is missing (containerd, runc,
# busybox-static, etcd, the CNI plugins, iptables, nftables), builds (the
# cluster's binaries once, then from the cache), brings the cluster up, each
# node in a network namespace of its own, runs the scenarios there with
# kube-proxy in iptables mode, then those that go through kube-proxy's
# rules again in each further mode of E2E_PROXY_MODES ("iptables nftables
# ipvs" by default; a mode the kernel cannot run is left out, and the log
# says why), and tears it all down whatever happened: on success, failure,
# INT, TERM or HUP. A run killed outright is cleared by the next one, or by
# `e2e/stack.sh down`.
# E2E_ONLY=1,3 runs some scenarios; E2E_PROXY_AWAIT=PATH and
# E2E_PROXY_AWAITCTL=PATH test other builds of proxy-await and
# proxy-awaitctl; E2E_BENCH_ROLLOUT=N runs no scenario but the rollout's
# variants (E2E_ROLLOUT_VARIANTS, default all) N times each, saving their
# traces in E2E_ROLLOUT_TRACES (e2e/bench-rollout.sh, make bench-rollout).
# Needs root. See docs/e2e.md.
set -eu
. "$(dirname "$0")/env.sh"
if [ "$(id -u)" -ne 0 ]; then
	log "needs root: namespaces, mounts, containerd and runc do"
	exit 1
fi
# The cluster's mount namespace has /run, /tmp, /var/lib and /var/log of
# its own (stack.sh): a run directory below one of them would vanish there.
case "$(realpath -m "$RUN")/" in
/run/* | /tmp/* | /var/lib/* | /var/log/*)
	log "the cache $CACHE is below /run, /tmp, /var/lib or /var/log, which the cluster's mount namespace replaces with its own: set PROXY_AWAIT_E2E_CACHE (or XDG_CACHE_HOME) to a directory elsewhere"
	exit 1
	;;
esac
start=$(date +%s)
# One run at a time per cache: a second would clear the first's cluster.
# The daemons do not inherit the lock (stack.sh closes it for them).
mkdir -p "$CACHE"
exec 9>"$CACHE/run.lock"
if ! flock -n 9; then
	log "another make e2e is running with $CACHE"
	exit 1
fi
"$REPO/scripts/install-deps.sh" containerd runc busybox-static etcd-server containernetworking-plugins iptables nftables
modes=${E2E_PROXY_MODES:-iptables nftables ipvs}

# Each step runs in the background, so that a signal ends this script at
# once; the trap then stops the step (the build with all its compilers: it
# has a process group of its own) and tears down.
step=""
group=""
finish() {
	status=$?
	trap '' INT TERM HUP
	if [ -n "$step" ]; then
		if [ -n "$group" ]; then
			kill -TERM -- "-$step" 2>/dev/null || true
		else
			kill -TERM "$step" 2>/dev/null || true
		fi
		wait "$step" 2>/dev/null || true
	fi
	"$E2E/stack.sh" down
	log "done in $(($(date +%s) - start)) s (logs: $CACHE/logs)"
	exit $status
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

setsid "$E2E/build.sh" &
step=$! group=1
wait $step
built=$(date +%s)
# shellcheck disable=SC2086
set -- $modes
E2E_PROXY_MODE=$1 "$E2E/stack.sh" up 9>&- &
step=$! group=""
wait $step
up=$(date +%s)
bench=""
if [ -n "${E2E_BENCH_ROLLOUT:-}" ]; then
	bench="-bench-rollout $E2E_BENCH_ROLLOUT -traces ${E2E_ROLLOUT_TRACES:-$CACHE/rollouts}"
	if [ -n "${E2E_ROLLOUT_VARIANTS:-}" ]; then
		bench="$bench -variants $E2E_ROLLOUT_VARIANTS"
	fi
fi
# Each pass: the scenarios (the first), or those through kube-proxy (the
# others), or the rollout's variants. A failed pass fails the run, after
# the others have run. nsenter, not in_netns: a function would put a
# subshell between this script and the runner, and the trap's TERM would
# miss the runner.
failed=0
again=""
for mode in $modes; do
	if [ -n "$again" ] && [ -z "$bench" ] && [ -n "${E2E_ONLY:-}" ]; then
		# Only 8 and 12 go through kube-proxy's rules.
		case ",$E2E_ONLY," in
		*,8,* | *,12,*) ;;
		*) break ;;
		esac
	fi
	if [ -n "$again" ]; then
		"$E2E/stack.sh" can "$mode" || continue
		"$E2E/stack.sh" proxy "$mode" 9>&- &
		step=$!
		wait $step
		step=""
	fi
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$NETNS" "$BIN/scenarios" -run "$RUN" -kubectl "$BIN/kubectl" \
		-examples "$REPO/examples" -registry "$REGISTRY" ${E2E_ONLY:+-only "$E2E_ONLY"} $again $bench 9>&- &
	step=$!
	wait $step || failed=1
	step=""
	again=-again
done
log "build $((built - start)) s, up $((up - built)) s, scenarios $(($(date +%s) - up)) s"
exit $failed
