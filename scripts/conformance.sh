#!/usr/bin/env bash
# Runs the same scenarios against proxy-await, tini and dumb-init and prints
# what each one did as a Markdown page (docs/conformance.md is its output; see
# `make conformance`). Every cell is observed here, never declared.
#
# usage: scripts/conformance.sh [PROXY_AWAIT]
# PROXY_AWAIT is the binary to test: the argument, else $PROXY_AWAIT_BIN, else
# bin/proxy-await next to this script. tini, dumb-init and unshare must be
# installed (`make deps`), and it runs as root, for unshare.
# CONFORMANCE_WRAPPERS picks the columns (default "proxy-await tini dumb-init"):
# the tests measure proxy-await's alone. CONFORMANCE_NO_WAIT overrides NO_WAIT.
#
# The children are sh scripts that write what they see to files, and this
# script polls those files: "ready" before any signal is sent, one line per
# signal received. A "no" can only be seen by waiting, so negative answers
# wait NO_WAIT seconds; everything else waits for its event, bounded by LIMIT.
set -u

PA=${1:-${PROXY_AWAIT_BIN:-$(dirname "$0")/../bin/proxy-await}}
LIMIT=20   # seconds: the bound on waiting for something that must happen
NO_WAIT=${CONFORMANCE_NO_WAIT:-2} # seconds: how long a signal or a reap may take before it is a "no"
TERM_DELAY=1s

read -r -a wrappers <<<"${CONFORMANCE_WRAPPERS:-proxy-await tini dumb-init}"

die() { echo "conformance: $*" >&2; exit 1; }
[ -x "$PA" ] || die "no proxy-await binary at $PA: run make build, or pass its path"
for tool in "${wrappers[@]}" unshare; do
	case $tool in
	proxy-await) ;;
	tini | dumb-init | unshare)
		command -v "$tool" >/dev/null || die "$tool is not installed: run make deps (apt-get install $tool)"
		;;
	*) die "unknown wrapper $tool in CONFORMANCE_WRAPPERS" ;;
	esac
done

# The script runs as the init of a PID namespace of its own: the orphans that
# a wrapper does not adopt come to it, and whatever a scenario leaves behind
# is killed and reaped when it exits, instead of piling up on the machine.
if [ "${CONFORMANCE_INIT:-}" != 1 ]; then
	[ "$(id -u)" -eq 0 ] || die "run me as root: the scenarios run in PID namespaces (unshare --pid)"
	CONFORMANCE_INIT=1 exec unshare --pid --fork --mount-proc bash "$0" "$PA"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# wrap NAME [FEATURE]: set W to the wrapper's command line, with its option
# for FEATURE (group, rewrite, delay) when it has one.
wrap() {
	local feature=${2:-}
	case $1 in
	proxy-await)
		W=("$PA" --proxy none)
		case $feature in
		group) W+=(-g) ;;
		rewrite) W+=(--rewrite TERM:USR1) ;;
		delay) W+=(--term-delay "$TERM_DELAY") ;;
		esac
		W+=(--)
		;;
	tini)
		# -s: a subreaper, since it is not PID 1 here (except in unshare).
		W=(tini -s)
		case $feature in
		group) W+=(-g) ;;
		esac
		W+=(--)
		;;
	dumb-init)
		# Signals go to the child's process group by default (setsid mode).
		W=(dumb-init)
		case $feature in
		rewrite) W+=(--rewrite 15:10) ;;
		esac
		;;
	esac
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# await FILE LINE SECONDS: wait until FILE has LINE, for at most SECONDS.
await() {
	local end=$(($(now_ms) + $3 * 1000))
	until grep -qxF "$2" "$1" 2>/dev/null; do
		[ "$(now_ms)" -ge "$end" ] && return 1
		sleep 0.01
	done
}

# await_file FILE SECONDS: wait until FILE is not empty.
await_file() {
	local end=$(($(now_ms) + $2 * 1000))
	until [ -s "$1" ]; do
		[ "$(now_ms)" -ge "$end" ] && return 1
		sleep 0.01
	done
}

# recorder DIR TAG EXIT_SIGNALS: a child that appends "TAG SIG" to DIR/got
# for each of HUP USR1 USR2 WINCH TERM it receives, exits 0 after one of
# EXIT_SIGNALS, writing the time in ms to DIR/TAG.exit first, and writes its
# PID to DIR/TAG.ready once its traps are set.
# It waits on a sleep that ignores the signals it records, so that signals
# sent to the whole process group do not end it.
export RECORDER='
d=$1 tag=$2 exits=$3
(trap "" HUP USR1 USR2 WINCH; exec sleep 600) &
s=$!
for sig in HUP USR1 USR2 WINCH TERM; do
	case " $exits " in
	*" $sig "*) trap "echo $tag $sig >>$d/got; date +%s%3N >$d/$tag.exit; kill -9 $s 2>/dev/null; exit 0" "$sig" ;;
	*) trap "echo $tag $sig >>$d/got" "$sig" ;;
	esac
done
echo $$ >"$d/$tag.tmp" && mv "$d/$tag.tmp" "$d/$tag.ready"
while kill -0 $s 2>/dev/null; do wait $s; done
'

# ORPHANER DIR TICKS: a child that orphans a grandchild, checks that the
# grandchild was reparented to the wrapper (its own parent), lets it exit and
# checks that it is reaped within TICKS hundredths of a second, then writes
# the verdict to DIR/result.
ORPHANER='
d=$1 ticks=$2
mkfifo "$d/fifo"
(sh -c "echo \$\$ >$d/orphan.tmp && mv $d/orphan.tmp $d/orphan; exec cat $d/fifo >/dev/null" &)
i=0
while [ ! -s "$d/orphan" ]; do
	i=$((i + 1)); [ $i -gt 2000 ] && { echo "error: no orphan" >"$d/result"; exit 1; }
	sleep 0.01
done
o=$(cat "$d/orphan")
reaper=$(awk "/^PPid:/ { print \$2 }" /proc/$o/status)
echo >"$d/fifo"
if [ "$reaper" != "$PPID" ]; then
	echo "no (reparented elsewhere)" >"$d/result"
	exit 0
fi
i=0
while [ -e /proc/$o ]; do
	i=$((i + 1)); [ $i -gt $ticks ] && { echo "no (zombie left)" >"$d/result"; exit 0; }
	sleep 0.01
done
echo yes >"$d/result"
'

declare -A R # R[row,wrapper] = cell
failed=0
cell() { R[$1,$2]=$3; case $3 in error*) failed=1 ;; esac; }

# start DIR CMD...: run CMD in the background with output in DIR; sets pid.
start() {
	local d=$1
	shift
	"$@" </dev/null >"$d/out" 2>"$d/err" &
	pid=$!
}

finish() { wait "$pid"; }

yesno() { if "$@"; then echo yes; else echo no; fi; }

exit_codes() { # exit, killed, notfound, notexec
	local w=$1 d
	wrap "$w"
	"${W[@]}" sh -c 'exit 3' </dev/null >/dev/null 2>&1
	cell exit "$w" "exit $?"
	"${W[@]}" sh -c 'kill -KILL $$' </dev/null >/dev/null 2>&1
	cell killed "$w" "exit $?"
	"${W[@]}" /nonexistent/conformance-command </dev/null >/dev/null 2>&1
	cell notfound "$w" "exit $?"
	d=$work/$w-exec && mkdir "$d" && printf '#!/bin/sh\n' >"$d/script" && chmod 644 "$d/script"
	"${W[@]}" "$d/script" </dev/null >/dev/null 2>&1
	cell notexec "$w" "exit $?"
}

forwarding() { # HUP USR1 USR2 WINCH, then TERM
	local w=$1 d=$work/$1-fwd sig
	mkdir "$d" && wrap "$w"
	start "$d" "${W[@]}" sh -c "$RECORDER" sh "$d" main TERM
	if ! await_file "$d/main.ready" $LIMIT; then
		for sig in HUP USR1 USR2 WINCH TERM; do cell "$sig" "$w" "error: child not ready"; done
		kill -KILL "$pid"
		return
	fi
	for sig in HUP USR1 USR2 WINCH; do
		kill -"$sig" "$pid"
		cell "$sig" "$w" "$(yesno await "$d/got" "main $sig" $NO_WAIT)"
	done
	kill -TERM "$pid"
	if await "$d/got" "main TERM" $NO_WAIT; then
		cell TERM "$w" yes
	else
		cell TERM "$w" no
		kill -KILL "$pid"
	fi
	finish
}

rewrite() {
	local w=$1 d=$work/$1-rewrite got
	mkdir "$d" && wrap "$w" rewrite
	start "$d" "${W[@]}" sh -c "$RECORDER" sh "$d" main "TERM USR1"
	if ! await_file "$d/main.ready" $LIMIT; then
		cell rewrite "$w" "error: child not ready"
		kill -KILL "$pid"
		return
	fi
	kill -TERM "$pid"
	await_file "$d/got" $LIMIT
	got=$(head -n 1 "$d/got" 2>/dev/null)
	case $got in
	"main USR1") cell rewrite "$w" yes ;;
	"main TERM") cell rewrite "$w" "no (child got TERM)" ;;
	*)
		cell rewrite "$w" "error: child got \"$got\""
		kill -KILL "$pid"
		;;
	esac
	finish
}

group() { # group, leftover
	local w=$1 d=$work/$1-group
	mkdir "$d" && wrap "$w" group
	# The main child exits on USR2, leaving its group's other member behind.
	start "$d" "${W[@]}" sh -c 'sh -c "$RECORDER" sh "$1" member TERM & exec sh -c "$RECORDER" sh "$1" main USR2' sh "$d"
	if ! await_file "$d/main.ready" $LIMIT || ! await_file "$d/member.ready" $LIMIT; then
		cell group "$w" "error: children not ready"
		cell leftover "$w" "error: children not ready"
		kill -KILL "$pid"
		return
	fi
	kill -USR1 "$pid"
	if await "$d/got" "main USR1" $LIMIT; then
		cell group "$w" "$(yesno await "$d/got" "member USR1" $NO_WAIT)"
	else
		cell group "$w" "error: USR1 not forwarded"
	fi
	kill -USR2 "$pid"
	finish
	cell leftover "$w" "$(yesno await "$d/got" "member TERM" $NO_WAIT)"
	kill -TERM "$(cat "$d/member.ready")" 2>/dev/null
}

orphans() { # ROW [PREFIX...]: the orphaner under the wrapper, under PREFIX
	local row=$1 w=$2 d=$work/$2-$1
	shift 2
	mkdir "$d" && wrap "$w"
	"$@" "${W[@]}" sh -c "$ORPHANER" sh "$d" $((NO_WAIT * 100)) </dev/null >"$d/out" 2>"$d/err"
	if [ -s "$d/result" ]; then
		cell "$row" "$w" "$(cat "$d/result")"
	else
		cell "$row" "$w" "error: $(head -n 1 "$d/err")"
	fi
}

term_delay() {
	local w=$1 d=$work/$1-delay t0 t1
	mkdir "$d" && wrap "$w" delay
	start "$d" "${W[@]}" sh -c "$RECORDER" sh "$d" main TERM
	if ! await_file "$d/main.ready" $LIMIT; then
		cell delay "$w" "error: child not ready"
		kill -KILL "$pid"
		return
	fi
	t0=$(now_ms)
	kill -TERM "$pid"
	finish
	if [ ! -s "$d/main.exit" ]; then
		cell delay "$w" "error: the child got no TERM"
		return
	fi
	# Until the child's TERM, not the wrapper's exit, which a loaded machine
	# may delay; in whole seconds, rounded down, so that a 1 s hold reads
	# "1 s" from one run to the next.
	t1=$(cat "$d/main.exit")
	cell delay "$w" "$(((t1 - t0) / 1000)) s"
}

for w in "${wrappers[@]}"; do
	exit_codes "$w"
	forwarding "$w"
	rewrite "$w"
	group "$w"
	orphans reap "$w"
	orphans reap1 "$w" unshare --pid --fork --mount-proc
	term_delay "$w"
done

rows=(
	"exit|child exits 3"
	"killed|child killed by SIGKILL (128+9)"
	"notfound|command not found"
	"notexec|command not executable"
	"TERM|SIGTERM forwarded"
	"HUP|SIGHUP forwarded"
	"USR1|SIGUSR1 forwarded"
	"USR2|SIGUSR2 forwarded"
	"WINCH|SIGWINCH forwarded"
	"rewrite|SIGTERM delivered as SIGUSR1 (\`--rewrite TERM:USR1\`; dumb-init \`--rewrite 15:10\`)"
	"group|signals reach the child's process group (\`-g\`; dumb-init by default)"
	"leftover|the rest of the group gets SIGTERM when the child exits (same options)"
	"reap|orphans adopted and reaped when not PID 1 (subreaper)"
	"reap1|orphans reaped as PID 1 (\`unshare --pid --fork --mount-proc\`)"
	"delay|SIGTERM to exit with \`--term-delay $TERM_DELAY\` (proxy-await only)"
)

versions=
for w in "${wrappers[@]}"; do
	case $w in
	tini) versions="$versions and $(tini --version | sed 's/ version//')" ;;
	dumb-init) versions="$versions and $(dumb-init --version 2>&1)" ;;
	esac
done
versions=${versions# and }
dot=.
[ -n "$versions" ] && dot=

echo "# proxy-await, tini and dumb-init side by side"
echo
echo "Generated by \`scripts/conformance.sh\` (\`make conformance\`); a test checks proxy-await's column"
echo "against a fresh run. Every cell is what the script observed on real processes and signals${versions:+, with}${dot}"
echo "${versions:+$versions. }The wrappers run as \`proxy-await --proxy none --\`,"
echo "\`tini -s --\` (\`-s\`: a child subreaper, as it is not PID 1) and \`dumb-init\`, plus the option a"
echo "row names where the wrapper has one."
echo
header="| scenario" rule="|---"
for w in "${wrappers[@]}"; do header="$header | $w" rule="$rule|---"; done
echo "$header |"
echo "$rule|"
for row in "${rows[@]}"; do
	key=${row%%|*}
	line="| ${row#*|}"
	for w in "${wrappers[@]}"; do line="$line | ${R[$key,$w]:-error: not measured}"; done
	echo "$line |"
	case ${R[$key,proxy-await]:-error} in error*) failed=1 ;; esac
done
exit $failed
