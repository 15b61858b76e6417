#!/bin/sh
# Builds what the end-to-end run needs into $CACHE/bin: the kubelet (once per
# e2e/go.sum: about 9 minutes cold on 2 cores), the CRI client, the pause
# program, the image builder, the scenario runner and its keep-alive client,
# proxy-await and the stand-in proxy; then the pause and busybox images, and
# proxy-await's own.
set -eu
. "$(dirname "$0")/env.sh"
mkdir -p "$BIN"
cd "$E2E"

# The kubelet is rebuilt only when the module pinning it changes.
key=$(cat go.mod go.sum | sha256sum | cut -c1-16)
if [ "$(cat "$BIN/kubelet.key" 2>/dev/null)" != "$key" ] || [ ! -x "$BIN/kubelet" ]; then
	log "building kubelet $KUBELET_VERSION (the first time: about 9 minutes on 2 idle cores, more on busy ones; then cached in $CACHE)"
	start=$(date +%s)
	CGO_ENABLED=0 nice -n 19 go build -trimpath -o "$BIN/kubelet.new" \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBELET_VERSION" \
		k8s.io/kubernetes/cmd/kubelet
	mv "$BIN/kubelet.new" "$BIN/kubelet"
	echo "$key" >"$BIN/kubelet.key"
	log "kubelet built in $(($(date +%s) - start)) s"
fi

for cmd in cri pause mkimage scenarios httpapp; do
	CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$BIN/$cmd" "./cmd/$cmd"
done
# The project's own module, with the user's caches.
cd "$REPO"
env -u GOMODCACHE -u GOCACHE CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$BIN/proxy-await" .
env -u GOMODCACHE -u GOCACHE CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$BIN/fakeproxy" ./testdata/fakeproxy
# proxy-await's own image, as the release writes it (scripts/ociimage), for
# the --install scenario; containerd imports the layout as a tarball.
rm -rf "$BIN/proxy-await-image"
env -u GOMODCACHE -u GOCACHE nice -n 10 go run ./scripts/ociimage -out "$BIN/proxy-await-image" \
	-name k8s.local/proxy-await:e2e -created 1970-01-01T00:00:00Z -license LICENSE "$BIN/proxy-await" >/dev/null
tar -C "$BIN/proxy-await-image" -cf "$BIN/proxy-await-image.tar" .

# Images for containerd: no registry, so both are built here from files.
"$BIN/mkimage" -o "$BIN/pause.tar" -name k8s.local/pause:e2e -entrypoint /pause \
	"$BIN/pause:/pause"
"$BIN/mkimage" -o "$BIN/busybox.tar" -name k8s.local/busybox:e2e -entrypoint /bin/sh \
	-busybox /bin/busybox
