#!/bin/sh
# proxy-await's main job, end to end, on this machine, as the README
# recommends it for a Job with the Cloud SQL Auth Proxy as a classic sidecar
# (examples/cloudsql-job.yaml): proxy-awaitctl check finds nothing wrong in
# the manifest; a stand-in proxy serves /startup on 127.0.0.1:9090, ready
# after 1.5s, and /quitquitquit on 127.0.0.1:9091; proxy-await waits for it,
# runs a short "job", POSTs /quitquitquit when the job exits, and exits with
# the job's status.
set -u
cd "$(dirname "$0")/.." || exit 1
bin=bin
tmp=$(mktemp -d)
log=$tmp/requests.log
proxy="" guard=""
trap 'kill $proxy $guard 2>/dev/null; rm -rf "$tmp"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "proxy-awaitctl check examples/cloudsql-job.yaml"
$bin/proxy-awaitctl check examples/cloudsql-job.yaml || exit 1

step "starting a stand-in Cloud SQL Auth Proxy: /startup on 127.0.0.1:9090 (ready after 1.5s), /quitquitquit on 127.0.0.1:9091"
# It says "serving" once it listens, or exits if it cannot.
mkfifo "$tmp/out"
$bin/fakeproxy -flavor cloudsql -ready-addr 127.0.0.1:9090 -addr 127.0.0.1:9091 -ready-after 1.5s -log "$log" >"$tmp/out" &
proxy=$!
serving=""
while read -r line; do
	[ "$line" = serving ] && serving=yes && break
done <"$tmp/out"
if [ -z "$serving" ]; then
	echo "demo: the stand-in proxy could not start; is something else listening on 127.0.0.1:9090 or 9091?" >&2
	exit 1
fi

step "proxy-await --proxy cloudsql --shutdown -- sh -c '...job that exits 3...'"
$bin/proxy-await --proxy cloudsql --shutdown -- sh -c '
	echo "job: started, the proxy is ready, doing work..."
	sleep 1
	echo "job: done, exiting with status 3"
	exit 3'
code=$?

step "proxy-await exited with status $code (the job's)"

# The proxy exits once it has answered the shutdown; 10 s only guard a hang
# (the guard's sleep holds no output open, so nothing waits for it).
(sleep 10 && kill $proxy) >/dev/null 2>&1 &
guard=$!
wait $proxy
exited=$?
kill $guard 2>/dev/null
proxy=""

step "what the proxy saw"
# Readiness probes until ready, then one POST /quitquitquit; repeats are folded.
sed -e 's/^{"time":"[^"]*T\([0-9:.]\{12\}\)[^"]*",/\1 /' -e 's/"remote":"[^"]*",//' \
	-e 's/"method":"-","path":"-","note":"\([^"]*\)"/proxy \1/' \
	-e 's/"method":"\([A-Z]*\)","path":"\([^"]*\)","status":\([0-9]*\)/\1 \2 -> \3/' -e 's/[{}"]//g' "$log" |
	awk '{ what = $2 " " $3 " " $4 " " $5 }
	     what == last { n++; next }
	     { if (n > 0) printf "             ... and %d more like it\n", n; print; last = what; n = 0 }
	     END { if (n > 0) printf "             ... and %d more like it\n", n }'

if [ "$exited" -ne 0 ]; then
	echo "demo: the proxy was still running 10 s after proxy-await exited: the shutdown did not reach it" >&2
	exit 1
fi
echo "(the proxy has exited after /quitquitquit, so the Job's pod can complete)"
[ "$code" -eq 3 ]
