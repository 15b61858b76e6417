#!/bin/sh
# make bench-rollout: the rollout's variants ROLLOUT_RUNS times each (20 by
# default) on the two-node cluster of make e2e, whose kube-proxies sync at
# most every 1 s (node e2e-1) and 5 s (e2e-2, a larger cluster's slower
# propagation), in each kube-proxy mode of E2E_PROXY_MODES that this
# machine can run (iptables, nftables, and ipvs where the kernel has it),
# each run's trace saved in $CACHE/rollouts; then a Markdown table of every
# run on stdout, for BENCHMARKS.md, and the picture of each variant's run of
# median rollout time in docs/rollout.svg. E2E_ROLLOUT_VARIANTS picks other
# variants than the control, the preStop sleep and the drain, under load
# and for a quiet service. Needs root; not run by CI.
set -eu
. "$(dirname "$0")/env.sh"
runs=${ROLLOUT_RUNS:-20}
traces=$CACHE/rollouts
rm -rf "$traces"
E2E_BENCH_ROLLOUT=$runs E2E_ROLLOUT_TRACES=$traces "$E2E/run.sh"
"$BIN/scenarios" -report "$traces" -picture "$REPO/docs/rollout.svg"
