#!/bin/sh
# Builds the Cloud SQL Auth Proxy VERSION into DIR (DIR/cloud-sql-proxy) from
# the Go module proxy, unless that version is there already. The build takes
# minutes, so the binary is kept outside the clone and built once.
set -eu

version=$1
dir=$2
bin="$dir/cloud-sql-proxy"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "cloud-sql-proxy version ${version#v}" ]; then
	exit 0
fi
echo "building cloud-sql-proxy $version into $dir (once; it takes minutes)" >&2
mkdir -p "$dir"
rm -f "$bin" # go install will not replace a file it did not build
GOBIN="$dir" GOFLAGS=-mod=mod nice -n 10 "${GO:-go}" install "github.com/GoogleCloudPlatform/cloud-sql-proxy/v2@$version"
"$bin" --version >/dev/null
