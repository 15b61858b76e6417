#!/usr/bin/env bash
# Fuzzes every Fuzz* target of every package for $FUZZTIME each (default 30s),
# one target at a time, as `go test -fuzz` requires. Exits 1 when any target
# fails; the failing input is then in that package's testdata/fuzz/<target>/,
# where plain `go test` keeps running it as a regression case.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}

failed=()
for pkg in $($GO list ./...); do
	list=$($GO test -list '^Fuzz' "$pkg") # a package that does not build stops the run
	targets=$(grep '^Fuzz' <<<"$list" || true)
	for target in $targets; do
		echo "fuzz: $pkg $target for $FUZZTIME" >&2
		# Seeds and testdata/fuzz first, in full: -fuzztime also counts the
		# time spent replaying the corpus, and a short run can end before a
		# recorded failure comes up.
		if ! $GO test -count=1 -run "^$target\$" "$pkg" ||
			! $GO test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" "$pkg"; then
			failed+=("$pkg $target")
		fi
	done
done

if ((${#failed[@]})); then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: every target passed" >&2
