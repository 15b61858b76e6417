#!/bin/sh
# Installs the release tools at pinned versions with `go install`, each into
# its own directory of a cache outside the clone, and prints the PATH entries
# that reach them. A tool already in the cache is reused; bumping a version
# below installs the new one beside the old.
#
#   PATH="$(scripts/release-tools.sh):$PATH"
set -eu

TOOLS="${PROXY_AWAIT_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/proxy-await/tools}"
GO="${GO:-go}"

path=""
install() { # name module/cmd@version [go install flag]
	dir="$TOOLS/$1@${2##*@}"
	if [ ! -x "$dir/$1" ]; then
		echo "installing $2 into $dir (once; this takes minutes)" >&2
		rm -rf "$dir.tmp"
		GOBIN="$dir.tmp" GOFLAGS=-mod=mod nice -n 10 "$GO" install ${3:+"$3"} "$2" >&2
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	path="$path${path:+:}$dir"
}

install goreleaser github.com/goreleaser/goreleaser/v2@v2.12.0
# syft names itself and its version in every SBOM it writes.
install syft github.com/anchore/syft/cmd/syft@v1.57.0 "-ldflags=-X main.version=1.57.0"
install cosign github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5
install actionlint github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
install crane github.com/google/go-containerregistry/cmd/crane@v0.20.6
echo "$path"
