#!/bin/sh
# The image step of a release, run by goreleaser (.goreleaser.yaml, sboms id
# "image") in the dist directory once every binary is built:
#
#   release-image.sh PLATFORM=SBOM... -- OCIIMAGE-FLAGS...
#
# writes the image from the linux binaries of both commands with
# scripts/ociimage (the flags say where, what, and which is the entrypoint),
# then each platform's SPDX SBOM with syft.
set -eu

sboms=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	sboms="$sboms $1"
	shift
done
[ $# -gt 0 ] || { echo "release-image.sh: no -- before the ociimage flags" >&2; exit 2; }
shift

out="" name=""
for arg in "$@"; do
	case "$arg" in
	-out=*) out="${arg#-out=}" ;;
	-name=*) name="${arg#-name=}" ;;
	esac
done
if [ -z "$out" ] || [ -z "$name" ]; then
	echo "release-image.sh: want -out=DIR and -name=REPOSITORY:TAG among the ociimage flags" >&2
	exit 2
fi

# goreleaser's build directories are ID_OS_ARCH[_VARIANT], one for each
# command and platform; ociimage reads each binary's platform from the binary
# itself, and fails unless every platform has both.
go run ../scripts/ociimage "$@" ./*_linux_*/proxy-await ./*_linux_*/proxy-awaitctl

for pair in $sboms; do
	platform="${pair%%=*}" sbom="${pair#*=}"
	syft scan "oci-dir:$out" --platform "$platform" --source-name "${name%:*}" --source-version "${name##*:}" \
		--quiet --output "spdx-json=$sbom"
done
