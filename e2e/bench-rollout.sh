#!/bin/sh
# make bench-rollout: the rollout's variants ROLLOUT_RUNS times each (20 by
# default) on the cluster of make e2e, with kube-proxy's minSyncPeriod at
# 1 s (every variant) and at 5 s (a larger cluster's slower propagation:
# the control, the preStop sleep and the drains), each run's trace saved in
# $CACHE/rollouts; then a Markdown table of every run on stdout, for
# BENCHMARKS.md, and the picture of each variant's run of median rollout
# time in docs/rollout.svg. Needs root; not run by CI.
set -eu
. "$(dirname "$0")/env.sh"
runs=${ROLLOUT_RUNS:-20}
traces=$CACHE/rollouts
rm -rf "$traces"
E2E_MIN_SYNC_PERIOD=1s E2E_BENCH_ROLLOUT=$runs E2E_ROLLOUT_TRACES=$traces "$E2E/run.sh"
E2E_MIN_SYNC_PERIOD=5s E2E_BENCH_ROLLOUT=$runs E2E_ROLLOUT_TRACES=$traces \
	E2E_ROLLOUT_VARIANTS=none,prestop,drain,drain-quiet "$E2E/run.sh"
"$BIN/scenarios" -report "$traces" -picture "$REPO/docs/rollout.svg"
