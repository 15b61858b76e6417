# Sourced by the e2e scripts: where things live, the cluster's addresses, and
# how Go builds for them.
#
# CACHE keeps what is slow to make (the cluster's binaries, the module and
# build caches they came from) outside the clone, so later clones and CI on
# this machine reuse it. RUN is the one working directory of a run: etcd's,
# containerd's and the kubelet's state, sockets, certificates, logs and the
# pods' hostPath files. Outside it, a run makes only its network namespace
# (/run/netns/$NETNS) and the cgroups of its containers (docs/e2e.md).

E2E=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$E2E/.." && pwd)
CACHE=${PROXY_AWAIT_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/proxy-await/e2e}
RUN=$CACHE/run
BIN=$CACHE/bin
K8S_VERSION=v1.33.13

# The cluster is two nodes, each in a network namespace of its own, joined
# by a veth pair (their "wire"), with addresses from 198.18.0.0/15 (RFC
# 2544's benchmarking range): the nodes' on the wire, each node's pods on a
# bridge of its own, routed to the other node as a CNI's routes would, the
# Services' virtual. No route leads out of the namespaces. Their names are
# the cache's, so that runs with different caches never meet. Node 1 also
# runs the control plane and the scenario runner.
NETNS_PREFIX=proxy-await-e2e-$(printf %s "$CACHE" | sha256sum | cut -c1-8)
NODES="1 2"
NETNS=$NETNS_PREFIX-1
API_IP=198.18.0.1
CLUSTER_PODS=198.19.0.0/16
SERVICE_CIDR=198.18.2.0/24
SERVICE_IP=198.18.2.1
# The cluster's registry (testdata/registry), on node 1's address over TLS
# with the run's CA: the nodes pull from it, proxy-awaitctl inject reads
# images' commands from it.
REGISTRY=198.18.0.1:5000

# node I sets the variables of node I: its name, its address on the wire,
# its pods' range, its network namespace, its directory under $RUN (state,
# sockets, its mount namespace) and its kube-proxy's minSyncPeriod
# (E2E_MIN_SYNC_PERIODS, one a node: 1 s and 5 s by default, so that the
# endpoints' removal spreads at two speeds, as in a cluster whose nodes
# differ).
node() {
	NODE_NAME=e2e-$1
	NODE_IP=198.18.0.$1
	NODE_PODS=198.19.$1.0/24
	NODE_NETNS=$NETNS_PREFIX-$1
	NODE_DIR=$RUN/nodes/$NODE_NAME
	NODE_MIN_SYNC=$(echo "${E2E_MIN_SYNC_PERIODS:-1s 5s}" | cut -d' ' -f"$1")
}

# The e2e module's own caches, so the cluster's 700 MB of modules never land
# in the user's; GOTOOLCHAIN=local builds with the installed Go.
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gocache GOTOOLCHAIN=local GOFLAGS=
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

log() { printf 'e2e: %s\n' "$*" >&2; }

# in_netns runs a command in node 1's network namespace, where the control
# plane is: nsenter, not `ip netns exec`, which would give each command a
# mount namespace of its own.
in_netns() { nsenter --net="/run/netns/$NETNS" "$@"; }
