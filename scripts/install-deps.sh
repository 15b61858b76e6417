#!/bin/sh
# Installs the Debian packages named as arguments when they are missing.
# Needs root (or sudo) and apt-get; says what to install otherwise.
set -eu

missing=""
for pkg in "$@"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

echo "installing test dependencies:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "error: missing packages:$missing; install them as root with apt-get" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "error: missing packages:$missing, and there is no apt-get here to install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
