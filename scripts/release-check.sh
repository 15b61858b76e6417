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
#  4. every archive holds both commands, proxy-await and proxy-awaitctl,
#     LICENSE and README.md, and every relative link of its Markdown pages
#     finds its file in it; every linux binary is static; every archive and
#     each platform of the image has an SPDX SBOM that lists the modules of
#     both commands;
#  5. the image goes through a registry on loopback as the release workflow
#     pushes it (same digest, the OCI labels), and is signed and verified
#     there; /proxy-await is its entrypoint, and each platform's layer holds
#     both commands, built for that platform;
#  6. the amd64 image, imported into a private containerd, runs
#     `/proxy-await --version` and `/proxy-awaitctl --version`, which print
#     the snapshot's version and commit; and runc, in its file system as the
#     registry gives it, runs `/proxy-awaitctl check -`, which reads a
#     manifest from its stdin and finds its mistake, as
#     `docker run --rm -i --entrypoint /proxy-awaitctl IMAGE check -` does.
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
commands="proxy-await proxy-awaitctl"
# sbom_lists FILE WHAT: FILE is an SPDX document naming the Go modules of
# each command, so syft found both binaries in WHAT: the project's module
# read from each binary, a module both link (pflag) and one that only
# proxy-awaitctl links (the YAML library).
sbom_lists() {
	[ -s "$1" ] || fail "no SBOM $1 for $2"
	jq -e '.spdxVersion | startswith("SPDX-2")' "$1" >/dev/null || fail "$1 is not an SPDX document"
	for module in github.com/spf13/pflag go.yaml.in/yaml/v3; do
		jq -e --arg m "$module" '[.packages[].name] | index($m)' "$1" >/dev/null ||
			fail "$1 does not list $module: syft did not find both commands in $2"
	done
	for c in $commands; do
		jq -e --arg c "$c" '[.packages[] | select(.name == "github.com/proxy-await/proxy-await")
			| .sourceInfo | select(endswith("/" + $c))] | length == 1' "$1" >/dev/null ||
			fail "$1 does not list the modules of $c: syft found no $c in $2"
	done
	grep -q " $(basename "$1")\$" dist/checksums.txt || fail "$1 is not in checksums.txt"
}

archives="$(jq -r '.[] | select(.type == "Archive") | .path' dist/artifacts.json)"
[ "$(echo "$archives" | wc -l)" -eq 5 ] || fail "want 5 archives (linux amd64, arm64, armv7; darwin amd64, arm64), got: $archives"
for a in $archives; do
	step "$a"
	list="$(tar -tzf "$a")"
	for f in $commands LICENSE README.md; do
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
		rm -rf "$tmp/commands" && mkdir -p "$tmp/commands"
		for c in $commands; do
			tar -xzf "$a" -C "$tmp/commands" "$c"
			kind="$(file -b "$tmp/commands/$c")"
			case "$kind" in *"statically linked"*) ;; *) fail "$a: $c is not static: $kind" ;; esac
		done
		;;
	esac
	sbom_lists "$a.sbom.json" "$a"
done
binaries="$(jq -r '.[] | select(.type == "Binary") | .path' dist/artifacts.json)"
for c in $commands; do
	[ "$(echo "$binaries" | grep -c "/$c\$")" -eq 5 ] ||
		fail "want 5 binaries of $c (linux amd64, arm64, armv7; darwin amd64, arm64), got: $binaries"
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
entrypoint="$(echo "$config" | jq -c .config.Entrypoint)"
[ "$entrypoint" = '["/proxy-await"]' ] || fail "the image's entrypoint is $entrypoint, want [\"/proxy-await\"]"
# Each platform's layer holds both commands, executable, built for it.
for p in linux/amd64:x86-64 linux/arm64:aarch64 linux/arm/v7:ARM; do
	platform="${p%%:*}" machine="${p#*:}"
	crane digest --platform "$platform" "$repo@$index" >/dev/null || fail "the image has no $platform"
	fs="$tmp/rootfs-$(echo "$platform" | tr / -)"
	mkdir -p "$fs"
	crane export --platform "$platform" "$repo@$index" - | tar -xf - -C "$fs" ||
		fail "crane export --platform $platform $repo@$index"
	for c in $commands; do
		[ -x "$fs/$c" ] || fail "the $platform image has no executable /$c (it holds: $(ls -m "$fs"))"
		kind="$(file -b "$fs/$c")"
		case "$kind" in *"statically linked"*) ;; *) fail "the $platform image's /$c is not static: $kind" ;; esac
		case "$kind" in *"$machine"*) ;; *) fail "the $platform image's /$c is not for $machine: $kind" ;; esac
	done
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
# run ARGS...: ARGS (the command's path first) in a container of the amd64
# image.
run() {
	ctr -a "$sock" -n "$ns" run --rm --fifo-dir "$c/fifo" --runc-root "$c/runc" \
		"$image" release-check "$@"
}
# versions_say NAME TEXT: TEXT is NAME's --version of this snapshot.
versions_say() {
	step "the image's /$1 says: $2"
	first="$(echo "$2" | sed -n 1p)"
	second="$(echo "$2" | sed -n 2p)"
	[ "$first" = "$1 $version" ] || fail "$1 --version's first line is \"$first\", want \"$1 $version\""
	case "$second" in "commit $commit, "*) ;; *) fail "$1 --version's second line is \"$second\", want \"commit $commit, ...\"" ;; esac
}
for cmd in $commands; do
	got="$(run "/$cmd" --version </dev/null)" ||
		fail "ctr run $image /$cmd --version: $(tail -20 "$c/containerd.log")"
	versions_say "$cmd" "$got"
done
# The tool reads a manifest from stdin, as `docker run --rm -i --entrypoint
# /proxy-awaitctl IMAGE check -` gives it one, and finds what is wrong in
# it: the kubelet's SIGKILL would come before proxy-await's own. runc runs
# it in the amd64 image's file system (step 5), read-only, with this
# script's stdin, whose end ctr run would never pass on.
bundle="$tmp/bundle"
mkdir -p "$bundle"
(cd "$bundle" && runc spec) || fail "runc spec"
jq --arg rootfs "$tmp/rootfs-linux-amd64" --arg cgroup "/$ns/check" \
	'.process.terminal = false | .process.args = ["/proxy-awaitctl", "check", "-q", "-"]
	| .root = {path: $rootfs, readonly: true} | .linux.cgroupsPath = $cgroup' \
	"$bundle/config.json" >"$bundle/config.json.new" && mv "$bundle/config.json.new" "$bundle/config.json"
status=0
got="$(runc --root "$tmp/runc" run --bundle "$bundle" release-check-tool <<EOF
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 15
  containers:
    - name: web
      image: registry.example.com/web:1
      command: [proxy-await, --proxy, none, --term-delay, 10s, --kill-after, 10s, --, /web]
EOF
)" || status=$?
step "the image's /proxy-awaitctl check - says: $got"
[ "$status" -eq 1 ] || fail "/proxy-awaitctl check - exited $status, want 1 (an error found)"
case "$got" in
"<stdin>:5: error: grace-period: Pod/web container web: "*) ;;
*) fail "/proxy-awaitctl check - printed \"$got\", want the grace-period error at <stdin>:5" ;;
esac

step "OK: $project $version"
