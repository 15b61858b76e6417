#!/bin/sh
# `make release-check`: a full snapshot release on this machine, then checks
# of what it made. Nothing is published; the network is used only by the first
# run, to build the pinned tools (scripts/release-tools.sh) from the Go module
# proxy.
#
#  1. actionlint on the release workflow;
#  2. goreleaser check, then `goreleaser release --snapshot --clean
#     --skip=publish`, which signs checksums.txt with a throwaway cosign key;
#  3. the signature verifies, and checksums.txt matches what it lists;
#  4. every archive holds the binary, LICENSE and README.md, and every
#     relative link of its Markdown pages finds its file in it; every linux
#     binary is static; every archive and each platform of the image has an
#     SPDX SBOM that lists the binary's modules;
#  5. the image goes through a registry on loopback as the release workflow
#     pushes it (same digest, the OCI labels), and is signed and verified there;
#  6. the amd64 image, imported into a private containerd, runs
#     `/proxy-await --version`, which prints the snapshot's version and commit.
set -eu
cd "$(dirname "$0")/.."

fail() {
	echo "release-check: FAIL: $*" >&2
	exit 1
}
step() { echo "release-check: $*" >&2; }
# cosign looks for Sigstore's public trust root even when it verifies with a
# key and no transparency log; a proxy on loopback that refuses keeps every
# connection it makes on this machine (registries on loopback are reached
# directly, never through a proxy).
cosign_offline() { HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 cosign "$@"; }

scripts/install-deps.sh file containerd runc jq shellcheck
PATH="$(scripts/release-tools.sh):$PATH:/usr/sbin:/sbin"
export PATH

tmp="$(mktemp -d)"
registry_pid="" containerd_pid="" created_run_containerd=""
ns=proxy-await-release-check
# running PID: the process exists and has not exited (a zombie has).
running() {
	state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)"
	[ -n "$state" ] && [ "$state" != Z ]
}
# stop PID: TERM, then KILL if it is still running after 5 s (a signal that
# lands between fork and exec is lost), and reap it.
stop() {
	kill "$1" 2>/dev/null || return 0
	i=0
	while running "$1" && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
cleanup() {
	status=$?
	[ -z "$containerd_pid" ] || stop "$containerd_pid"
	[ -z "$registry_pid" ] || stop "$registry_pid"
	# containerd 1.6 keeps its shims' sockets in /run/containerd/s whatever
	# its state directory is; rmdir leaves it to any other containerd that
	# has started using it since.
	if [ -n "$created_run_containerd" ]; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null || true
	fi
	# The runc containers' cgroups are gone; their namespace's parent stays.
	for d in /sys/fs/cgroup/*/"$ns" /sys/fs/cgroup/"$ns"; do
		[ ! -d "$d" ] || rmdir "$d" 2>/dev/null || true
	done
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The workflow.
step "actionlint .github/workflows/release.yml"
actionlint .github/workflows/release.yml

# 2. The release, signed with a throwaway key.
step "goreleaser release --snapshot"
export COSIGN_PASSWORD=""
(cd "$tmp" && cosign generate-key-pair >/dev/null 2>&1) || fail "cosign generate-key-pair"
goreleaser check
# goreleaser reads nothing from git (no commit, no date) in a clone without
# a remote; give it the project's URL for this run only.
if [ -z "$(git remote)" ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url \
		GIT_CONFIG_VALUE_0=https://github.com/proxy-await/proxy-await
fi
COSIGN_KEY="$tmp/cosign.key" goreleaser release --snapshot --clean --skip=publish

version="$(jq -r .version dist/metadata.json)"
commit="$(git rev-parse HEAD)"
project="$(jq -r .project_name dist/metadata.json)"
step "made $project $version at $commit"

# 3. The signature and the checksums.
step "checksums.txt: signature and contents"
cosign_offline verify-blob --key "$tmp/cosign.pub" --bundle dist/checksums.txt.cosign.bundle \
	--insecure-ignore-tlog=true dist/checksums.txt ||
	fail "the signature of dist/checksums.txt does not verify"
(cd dist && sha256sum --quiet --strict -c checksums.txt) || fail "dist/checksums.txt does not match the files"

# 4. Archives, binaries, SBOMs.
# sbom_lists FILE WHAT: FILE is an SPDX document naming the Go modules of
# proxy-await, so syft found the binary in WHAT.
sbom_lists() {
	[ -s "$1" ] || fail "no SBOM $1 for $2"
	jq -e '.spdxVersion | startswith("SPDX-2")' "$1" >/dev/null || fail "$1 is not an SPDX document"
	jq -e '[.packages[].name] | index("github.com/spf13/pflag")' "$1" >/dev/null ||
		fail "$1 does not list the binary's modules: syft found no Go binary in $2"
	grep -q " $(basename "$1")\$" dist/checksums.txt || fail "$1 is not in checksums.txt"
}

archives="$(jq -r '.[] | select(.type == "Archive") | .path' dist/artifacts.json)"
[ "$(echo "$archives" | wc -l)" -eq 5 ] || fail "want 5 archives (linux amd64, arm64, armv7; darwin amd64, arm64), got: $archives"
for a in $archives; do
	step "$a"
	list="$(tar -tzf "$a")"
	for f in proxy-await LICENSE README.md; do
		echo "$list" | grep -qx "$f" || fail "$a does not hold $f (it holds: $(echo "$list" | paste -sd' ' -))"
	done
	tar -xzOf "$a" LICENSE | cmp -s - LICENSE || fail "$a: LICENSE is not the repository's"
	# Every example, in every directory of examples/, once.
	for f in $(git ls-files examples); do
		[ "$(echo "$list" | grep -Fcx "$f")" -eq 1 ] || fail "$a holds $f $(echo "$list" | grep -Fcx "$f") times, not once"
	done
	# The README's links, and those of the pages they lead to, work in the
	# unpacked archive (.goreleaser.yaml's archive files).
	rm -rf "$tmp/unpacked" && mkdir -p "$tmp/unpacked" && tar -xzf "$a" -C "$tmp/unpacked"
	missing="$(cd "$tmp/unpacked" && find . -name '*.md' | while read -r page; do
		grep -o '](\([^)[:space:]]*\))' "$page" | sed 's/^](//; s/)$//; s/#.*//' |
			grep -v -e '^[a-zA-Z][a-zA-Z0-9+.-]*:' -e '^$' | while read -r link; do
			[ -e "$(dirname "$page")/$link" ] || echo "$page links to $link"
		done
	done | sort -u)"
	[ -z "$missing" ] || fail "$a lacks files its pages link to: $missing"
	case "$a" in *_linux_*)
		mkdir -p "$tmp/bin" && tar -xzf "$a" -C "$tmp/bin" proxy-await
		kind="$(file -b "$tmp/bin/proxy-await")"
		case "$kind" in *"statically linked"*) ;; *) fail "$a: proxy-await is not static: $kind" ;; esac
		;;
	esac
	sbom_lists "$a.sbom.json" "$a"
done
for b in $(jq -r '.[] | select(.type == "Binary" and .goos == "linux") | .path' dist/artifacts.json); do
	kind="$(file -b "$b")"
	case "$kind" in *"statically linked"*) ;; *) fail "$b is not static: $kind" ;; esac
done
for p in amd64 arm64 armv7; do
	sbom_lists "dist/${project}_${version}_image_linux_$p.spdx.json" "the linux/$p image"
done

# 5. Through a registry, as the release workflow pushes it.
image="ghcr.io/proxy-await/proxy-await:v$version"
index="$(jq -r '.manifests[0].digest' dist/image/index.json)"
[ "$(jq -r '.manifests[0].annotations["io.containerd.image.name"]' dist/image/index.json)" = "$image" ] ||
	fail "dist/image is not named $image"
step "registry on loopback"
: >"$tmp/registry.log"
crane registry serve --address 127.0.0.1:0 2>"$tmp/registry.log" &
registry_pid=$!
port=""
while [ -z "$port" ]; do
	kill -0 "$registry_pid" 2>/dev/null || fail "crane registry serve exited: $(cat "$tmp/registry.log")"
	port="$(sed -n 's/.*serving on port \([0-9][0-9]*\).*/\1/p' "$tmp/registry.log")"
	[ -n "$port" ] || sleep 0.1
done
repo="127.0.0.1:$port/proxy-await/proxy-await"
pushed="$(crane push dist/image "$repo:v$version")"
[ "$pushed" = "$repo@$index" ] || fail "crane push gave $pushed, not the layout's index $index"
config="$(crane config --platform linux/amd64 "$repo@$index")"
for label in \
	"org.opencontainers.image.source=https://github.com/proxy-await/proxy-await" \
	"org.opencontainers.image.revision=$commit" \
	"org.opencontainers.image.version=$version" \
	"org.opencontainers.image.licenses=Apache-2.0"; do
	got="$(echo "$config" | jq -r --arg k "${label%%=*}" '.config.Labels[$k]')"
	[ "$got" = "${label#*=}" ] || fail "label ${label%%=*} is \"$got\", want \"${label#*=}\""
done
for p in linux/amd64 linux/arm64 linux/arm/v7; do
	crane digest --platform "$p" "$repo@$index" >/dev/null || fail "the image has no $p"
done
cosign_offline sign --yes --key "$tmp/cosign.key" --tlog-upload=false "$repo@$index" ||
	fail "cosign sign $repo@$index"
cosign_offline verify --key "$tmp/cosign.pub" --insecure-ignore-tlog=true "$repo@$index" >/dev/null ||
	fail "the image's signature does not verify"
stop "$registry_pid"
registry_pid=""

# 6. The amd64 image runs in containerd: a private daemon in $tmp.
step "containerd"
c="$tmp/containerd"
mkdir -p "$c"
cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
[grpc]
  address = "$c/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  # No CAP_SYS_RESOURCE here: containerd must not lower any process's
  # oom_score_adj below its own.
  restrict_oom_score_adj = true
EOF
[ -e /run/containerd ] || created_run_containerd=yes
nice -n 10 containerd --config "$c/config.toml" >"$c/containerd.log" 2>&1 &
containerd_pid=$!
sock="$c/containerd.sock"
until ctr -a "$sock" version >/dev/null 2>&1; do
	kill -0 "$containerd_pid" 2>/dev/null || fail "containerd exited: $(tail -20 "$c/containerd.log")"
	sleep 0.1
done
tar -C dist/image -cf "$tmp/image.tar" .
ctr -a "$sock" -n "$ns" images import --platform linux/amd64 "$tmp/image.tar" >&2 ||
	fail "ctr images import: $(tail -20 "$c/containerd.log")"
got="$(ctr -a "$sock" -n "$ns" run --rm --fifo-dir "$c/fifo" --runc-root "$c/runc" \
	"$image" release-check /proxy-await --version)" ||
	fail "ctr run $image /proxy-await --version: $(tail -20 "$c/containerd.log")"
step "the image says: $got"
first="$(echo "$got" | sed -n 1p)"
second="$(echo "$got" | sed -n 2p)"
[ "$first" = "proxy-await $version" ] || fail "--version's first line is \"$first\", want \"proxy-await $version\""
case "$second" in "commit $commit, "*) ;; *) fail "--version's second line is \"$second\", want \"commit $commit, ...\"" ;; esac

step "OK: $project $version"
