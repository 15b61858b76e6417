#!/bin/sh
# Fails when git tracks a compiled file (an ELF executable, object or test
# binary, a Mach-O or PE image): build outputs belong in .gitignore, and a
# test binary committed by mistake weighs megabytes in every clone forever.
set -eu
cd "$(dirname "$0")/.."
found=$(git ls-files -z | xargs -0 -r sh -c '
	for f; do
		[ -f "$f" ] || continue
		case $(head -c 4 "$f" | od -An -tx1 | tr -d " \n") in
		7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 4d5a*) echo "$f" ;;
		esac
	done' sh)
if [ -n "$found" ]; then
	echo "no-binaries.sh: compiled files are tracked; git rm --cached them and ignore them:" >&2
	echo "$found" | sed 's/^/  /' >&2
	exit 1
fi
