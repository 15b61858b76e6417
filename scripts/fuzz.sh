#!/usr/bin/env bash
# Fuzzes every Fuzz* target of every package for $FUZZTIME each (default 30s),
# one target at a time, as `go test -fuzz` requires. Exits 1 when any target
# fails; the failing input is then in that package's testdata/fuzz/<target>/,
# where plain `go test` keeps running it as a regression case.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
# Go minimizes each new interesting input for up to a minute by default: a
# target whose inputs are large (a manifest) then spends its whole time
# minimizing and barely runs. A failing input is small enough in seconds.
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}

# Go's fuzzing coordinator up to go1.26 can report its own -fuzztime deadline
# as the target's failure (https://go.dev/issue/75804): the run ends with
# "--- FAIL: <target>" and the single line "context deadline exceeded", and
# no input is written. A real failure always writes its input to the corpus
# directory, so a run that ends that way with no new file found nothing.
deadline_race() { # target output-file corpus-listing-before corpus-dir
	local after
	after=$(ls -A "$4" 2>/dev/null || true)
	[[ $after == "$3" ]] || return 1
	awk -v t="$1" '
		/^--- FAIL: / { fails++; if (index($0, "--- FAIL: " t " (") == 1) { getline; sig = ($0 == "    context deadline exceeded") } }
		END { exit !(fails == 1 && sig) }' "$2"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=()
for pkg in $($GO list ./...); do
	list=$($GO test -list '^Fuzz' "$pkg") # a package that does not build stops the run
	targets=$(grep '^Fuzz' <<<"$list" || true)
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	for target in $targets; do
		echo "fuzz: $pkg $target for $FUZZTIME" >&2
		# Seeds and testdata/fuzz first, in full: -fuzztime also counts the
		# time spent replaying the corpus, and a short run can end before a
		# recorded failure comes up.
		if ! $GO test -count=1 -run "^$target\$" "$pkg"; then
			failed+=("$pkg $target")
			continue
		fi
		corpus=$dir/testdata/fuzz/$target
		before=$(ls -A "$corpus" 2>/dev/null || true)
		if ! $GO test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" 2>&1 | tee "$out"; then
			if deadline_race "$target" "$out" "$before" "$corpus"; then
				echo "fuzz: $pkg $target: no failing input; the failure is Go's own -fuzztime deadline (go.dev/issue/75804)" >&2
			else
				failed+=("$pkg $target")
			fi
		fi
	done
done

if ((${#failed[@]})); then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: every target passed" >&2
