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

# The cluster lives in a network namespace of its own, with addresses from
# 198.18.0.0/15 (RFC 2544's benchmarking range): the node's on a veth pair
# whose both ends are inside, the pods' on a bridge there, the Services'
# virtual. No route leads out of the namespace. Its name is the cache's,
# so that runs with different caches never meet.
NETNS=proxy-await-e2e-$(printf %s "$CACHE" | sha256sum | cut -c1-8)
NODE_NAME=e2e
NODE_IP=198.18.0.1
POD_CIDR=198.18.1.0/24
SERVICE_CIDR=198.18.2.0/24
SERVICE_IP=198.18.2.1

# The e2e module's own caches, so the cluster's 700 MB of modules never land
# in the user's; GOTOOLCHAIN=local builds with the installed Go.
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gocache GOTOOLCHAIN=local GOFLAGS=
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

log() { printf 'e2e: %s\n' "$*" >&2; }

# in_netns runs a command in the run's network namespace, and in_stack in
# its network and mount namespaces: nsenter, not `ip netns exec`, which
# would give each command a mount namespace of its own.
in_netns() { nsenter --net="/run/netns/$NETNS" "$@"; }
in_stack() { nsenter --net="/run/netns/$NETNS" --mount="$RUN/ns/mnt" "$@"; }
