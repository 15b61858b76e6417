# Sourced by the e2e scripts: where things live and how Go builds for them.
#
# CACHE keeps what is slow to make (the kubelet, the module and build caches
# it came from) outside the clone, so later clones and CI on this machine
# reuse it. RUN is the one working directory of a run: containerd's root and
# state, the kubelet's root dir, sockets, logs, manifests and the pods'
# hostPath files. Nothing else on the host is written, except the
# /run/containerd/s shim-socket directory containerd 1.6 insists on
# (docs/e2e.md).

E2E=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$E2E/.." && pwd)
CACHE=${PROXY_AWAIT_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/proxy-await/e2e}
RUN=$CACHE/run
BIN=$CACHE/bin
KUBELET_VERSION=v1.33.13

# The e2e module's own caches, so the kubelet's 700 MB of modules never land
# in the user's; GOTOOLCHAIN=local builds with the installed Go.
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gocache GOTOOLCHAIN=local GOFLAGS=
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

log() { printf 'e2e: %s\n' "$*" >&2; }
