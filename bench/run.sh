#!/usr/bin/env bash
# Measures proxy-await against tini, dumb-init, the Go floor (bench/gofloor)
# and a direct exec on this machine, and proxy-await's memory and size
# against the dependency floor (bench/depfloor: its dependencies without its
# own code, whole and without each), and writes the figures to
# bench/results.md: start-up, readiness latency, CPU while waiting, signal
# forwarding, memory, binary size, reaping, signal storms and the Go
# benchmarks. It reports figures; it fails only when something does not work
# at all, never on machine speed. BENCHMARKS.md, written by hand, says what
# they mean.
#
# Needs: go, hyperfine, tini, dumb-init, unshare (root, for a PID namespace);
# losetup and mkfs.ext4 (root) for the cold memory figures, which are left
# out without them.
# `make bench` installs the Debian packages first. Takes about four minutes.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)

for tool in go hyperfine tini dumb-init unshare; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "bench: $tool is missing (make deps installs the Debian packages)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/proxy-await-bench.XXXXXX")
loopdev=""
cleanup() {
	local pids
	pids=$(jobs -p)
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086
		kill $pids 2>/dev/null || true
	fi
	if mountpoint -q "$tmp/cold" 2>/dev/null; then
		# lazily: a wrapper started from it may outlive an interrupted run
		umount -l "$tmp/cold" || true
	fi
	if [ -n "$loopdev" ]; then
		losetup -d "$loopdev" || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

step() { printf 'bench: %s\n' "$*" >&2; }

cut -d' ' -f1-3 /proc/loadavg >"$tmp/load-start.txt"
step "building proxy-await and the helpers"
make --no-print-directory -s build
pa="$root/bin/proxy-await"
export CGO_ENABLED=0
# The same build with its symbol table, for the sizes and pages by package.
go build -trimpath -tags nethttpomithttp2 -o "$tmp/proxy-await-syms" .
go build -trimpath -ldflags '-s -w' -o "$tmp/stamp" ./bench/stamp
go build -trimpath -ldflags '-s -w' -o "$tmp/gofloor" ./bench/gofloor
# The dependency floor as proxy-await is built (its tags), whole and without
# each dependency; the driver names each build by its suffix (depFloorBuilds).
depfloor() { # SUFFIX [TAG...]
	suffix=$1
	shift
	go build -trimpath -ldflags '-s -w' -tags "$(echo nethttpomithttp2 "$@" | tr ' ' ,)" \
		-o "$tmp/depfloor$suffix" ./bench/depfloor
}
depfloor ""
for dep in pflag slog retryablehttp server client; do
	depfloor "-no-$dep" "no_$dep"
done
depfloor -client-alone no_pflag no_slog no_retryablehttp no_server
depfloor -none no_pflag no_slog no_retryablehttp no_server no_client
go build -trimpath -o "$tmp/child" ./bench/child
go build -trimpath -o "$tmp/driver" ./bench/driver

# The cold memory figures start copies of the wrappers from a file system
# of their own, on a loop device whose read-ahead is off, so that a start
# reads only the pages it touches. The setting is the loop device's own:
# nothing of the machine's changes, and detaching the device ends it.
cold=""
setup_cold() {
	if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
		return 1
	fi
	truncate -s 128M "$tmp/cold.img" && mkfs.ext4 -q -F "$tmp/cold.img" || return 1
	loopdev=$(losetup -f --show "$tmp/cold.img") || return 1
	echo 0 >"/sys/block/${loopdev#/dev/}/queue/read_ahead_kb" || return 1
	mkdir "$tmp/cold" && mount "$loopdev" "$tmp/cold" || return 1
	cp "$pa" "$tmp/gofloor" "$tmp"/depfloor* "$(command -v tini)" "$(command -v dumb-init)" "$tmp/cold/" || return 1
	sync -f "$tmp/cold/"
	cold="$tmp/cold"
}

driver() {
	"$tmp/driver" -out "$tmp" -proxy-await "$pa" -fakeproxy "$root/bin/fakeproxy" \
		-proxy-await-syms "$tmp/proxy-await-syms" -stamp "$tmp/stamp" -gofloor "$tmp/gofloor" \
		-depfloor "$tmp/depfloor" -child "$tmp/child" -cold "$cold" "$@"
}

{
	go version | awk '{print $3}'
	tini --version | awk '{print "tini " $3}'
	dumb-init --version 2>&1 | head -n1
	hyperfine --version
} >"$tmp/versions.txt"


step "1. start-up: hyperfine, 5 rounds"
for round in 1 2 3 4 5; do
	hyperfine -N --style none --warmup 20 --runs 200 --export-json "$tmp/hyperfine-$round.json" \
		-n proxy-await "$pa --proxy none -- /bin/true" \
		-n dumb-init "dumb-init /bin/true" \
		-n tini "tini -- /bin/true" \
		-n /bin/true "/bin/true" \
		-n "Go floor" "$tmp/gofloor /bin/true" \
		-n "dependency floor" "$tmp/depfloor /bin/true" >/dev/null 2>&1
done
step "1. start-up: time to the child's first instruction"
driver launch

step "2. readiness latency: 2 x 50 runs"
driver readiness
step "3. CPU while waiting: 2 x 10 s"
driver cpuwait
step "4. signal forwarding latency"
driver signals
step "5. memory: warm, and cold from a loop device without read-ahead"
setup_cold || step "5. memory: no loop device without read-ahead (root, losetup, mkfs.ext4): warm figures only"
driver memory
step "5. proxy-await's binary by package: sizes, and pages resident after a readiness wait"
driver packages
step "7. scale: reaping orphans as PID 1, signal storm"
driver reap
driver storm

step "Go benchmarks"
go test -run '^$' -bench . -benchmem ./... >"$tmp/gotest.txt" 2>&1 || {
	cat "$tmp/gotest.txt" >&2
	exit 1
}

step "the --drain-quiet watch: CPU and delivery delay, 10 s drains and holds beside other ports' churn, in a network namespace of their own, as in a pod"
go test -c -o "$tmp/drain.test" ./drain/
echo "# the drain's benchmarks again: 10 s drains and holds, in a network namespace of their own" >>"$tmp/gotest.txt"
DRAIN_BENCH_TIME=10s unshare -n sh -c 'ip link set lo up && exec "$0" -test.run x -test.bench Watch' "$tmp/drain.test" \
	| tee -a "$tmp/gotest.txt" >&2

driver -report "$root/bench/results.md" report
step "wrote bench/results.md"
