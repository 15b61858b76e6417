#!/bin/sh
# Builds what the end-to-end run needs into $CACHE/bin: the cluster's
# binaries (once per e2e/go.mod and go.sum: 8 to 15 minutes cold on 2
# cores), the CRI client, the pause program, the certificate maker, the
# image builder, the scenario runner, its HTTP server, proxy-await, the
# platform tool proxy-awaitctl (check, inject, policy), the stand-in proxy and
# the registry; then the pause, busybox and HTTP server images, and
# proxy-await's own.
set -eu
. "$(dirname "$0")/env.sh"
mkdir -p "$BIN"
cd "$E2E"

# The cluster's binaries, from one k8s.io/kubernetes release in one build
# (they share most of their 2,000 packages), are rebuilt only when the
# module pinning them changes.
K8S_CMDS="kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl"
key=$(cat go.mod go.sum | sha256sum | cut -c1-16)
built=true
for cmd in $K8S_CMDS; do
	[ -x "$BIN/$cmd" ] || built=false
done
if [ "$(cat "$BIN/k8s.key" 2>/dev/null)" != "$key" ] || ! $built; then
	log "building $K8S_CMDS $K8S_VERSION (the first time: 12 to 20 minutes on 2 cores; then cached in $CACHE)"
	start=$(date +%s)
	rm -rf "$BIN/k8s.new"
	mkdir -p "$BIN/k8s.new"
	major=${K8S_VERSION#v}; major=${major%%.*}
	minor=$(echo "$K8S_VERSION" | cut -d. -f2)
	pkgs=""
	for cmd in $K8S_CMDS; do
		pkgs="$pkgs k8s.io/kubernetes/cmd/$cmd"
	done
	# shellcheck disable=SC2086
	CGO_ENABLED=0 nice -n 19 go build -trimpath -o "$BIN/k8s.new/" -ldflags "-s -w \
		-X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
		-X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor \
		-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" $pkgs
	mv "$BIN"/k8s.new/* "$BIN/"
	rmdir "$BIN/k8s.new"
	echo "$key" >"$BIN/k8s.key"
	log "$K8S_CMDS built in $(($(date +%s) - start)) s"
fi

for cmd in cri pause pki mkimage scenarios httpapp; do
	CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$BIN/$cmd" "./cmd/$cmd"
done
# The project's own module, with the user's caches, built by the Makefile's
# own rules (flags, tags and version stamp as `make build` and the release
# have them) into $BIN; every time, as `make build` does for the first two
# (the cache may hold a build of another checkout), from go's build cache.
cd "$REPO"
rm -f "$BIN/proxy-await" "$BIN/proxy-awaitctl" "$BIN/fakeproxy"
env -u GOMODCACHE -u GOCACHE nice -n 10 make -s BIN="$BIN" \
	"$BIN/proxy-await" "$BIN/proxy-awaitctl" "$BIN/fakeproxy"
# proxy-await's own image, as the release writes it (scripts/ociimage):
# /proxy-await its entrypoint, /proxy-awaitctl beside it; containerd
# imports the layout as a tarball.
rm -rf "$BIN/proxy-await-image"
env -u GOMODCACHE -u GOCACHE nice -n 10 go run ./scripts/ociimage -out "$BIN/proxy-await-image" \
	-name k8s.local/proxy-await:e2e -entrypoint proxy-await -created 1970-01-01T00:00:00Z -license LICENSE \
	"$BIN/proxy-await" "$BIN/proxy-awaitctl" >/dev/null
tar -C "$BIN/proxy-await-image" -cf "$BIN/proxy-await-image.tar" .

# The cluster's registry, go-containerregistry's, from the project's module.
env -u GOMODCACHE -u GOCACHE CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$BIN/registry" ./testdata/registry

# Images, built here from files: nothing is downloaded. containerd imports
# the pause and busybox images and proxy-await's; the registry serves
# busybox, proxy-await's and the HTTP server's, whose ENTRYPOINT and CMD
# run it as scenario 15's Deployment does without a command of its own.
"$BIN/mkimage" -o "$BIN/pause.tar" -name k8s.local/pause:e2e -entrypoint /pause \
	"$BIN/pause:/pause"
"$BIN/mkimage" -o "$BIN/busybox.tar" -name k8s.local/busybox:e2e -entrypoint /bin/sh \
	-busybox /bin/busybox
"$BIN/mkimage" -o "$BIN/httpapp.tar" -name k8s.local/httpapp:e2e -entrypoint /httpapp \
	-cmd -serve -cmd :8080 -cmd -out -cmd /out/app "$BIN/httpapp:/httpapp"
