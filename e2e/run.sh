#!/bin/sh
# make e2e: proxy-await's lifecycle claims as pods under a real kubelet.
# Installs containerd, runc and busybox-static when missing, builds (the
# kubelet once, then from the cache), brings up containerd and a standalone
# kubelet, runs the scenarios, and tears it all down whatever happened.
# E2E_ONLY=1,3 runs some scenarios; E2E_PROXY_AWAIT=PATH tests another build
# of proxy-await. Needs root. See docs/e2e.md.
set -eu
. "$(dirname "$0")/env.sh"
if [ "$(id -u)" -ne 0 ]; then
	log "needs root: containerd, runc and the kubelet's mount namespace do"
	exit 1
fi
start=$(date +%s)
"$REPO/scripts/install-deps.sh" containerd runc busybox-static
"$E2E/build.sh"

trap '"$E2E/stack.sh" down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$E2E/stack.sh" up
# In the background, so that a signal to this script ends the runner too,
# then tears down, without waiting for the scenarios to finish.
"$BIN/scenarios" -run "$RUN" ${E2E_ONLY:+-only "$E2E_ONLY"} &
runner=$!
trap 'kill $runner 2>/dev/null; exit 130' INT
trap 'kill $runner 2>/dev/null; exit 143' TERM
status=0
wait $runner || status=$?
log "done in $(($(date +%s) - start)) s (logs: $CACHE/logs)"
exit $status
