package config

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/proxy-await/proxy-await/proxies"
)

// Set at build time by goreleaser (-X
// github.com/proxy-await/proxy-await/config.version=... and so on, in
// .goreleaser.yaml); when they are empty, PrintVersion falls back to what Go
// recorded in the binary.
var (
	version = ""
	commit  = ""
	date    = ""
)

const helpHead = `proxy-await waits for a service-mesh proxy to be ready, runs COMMAND as its
child with init-grade signal handling and zombie reaping, and can tell the
proxy to shut down when COMMAND exits. Without COMMAND it only waits, and exits
0 once the proxy is ready (for init containers and postStart hooks).

usage: proxy-await [FLAGS] [--] [COMMAND [ARG...]]
       proxy-await --install DIR

Manifests are proxy-awaitctl's (check, inject, policy), the platform tool.

Flags stop at COMMAND, so its own flags pass through. A boolean flag takes a
value only after "=" (--timeout-fatal=false). Each flag can also be set from
the environment variable shown; the command line wins.

flags:
`

// helpEnv follows the flags, up to the presets' table (presetTable).
const helpEnv = `
environment:
  PROXY_AWAIT_DISABLED, LINKERD_AWAIT_DISABLED, LINKERD_DISABLED
      any non-empty value skips the readiness wait
  LINKERD_AWAIT_VERBOSE
      turns on debug logging (as --verbose), unless 0, f, false, n, no or off
  A repeatable flag's variable takes a comma-separated list:
  PROXY_AWAIT_READY_URL=URL1,URL2, where a comma starts the next URL only
  where one begins (http://, https://). On the command line give a URL flag
  once per URL (a URL may hold a comma); --proxy, --rewrite, --exit-code-map
  and --drain-ports take a list there too.

presets:
`

// helpTail follows the presets' table.
const helpTail = `  Several at once: --proxy istio,cloudsql awaits both and shuts both down.

durations: Go syntax (250ms, 1m30s), d for days (2d), or a bare number of seconds.
signals: names (TERM, SIGTERM, RTMIN+1, RTMAX-2) or decimal numbers. Ports are
decimal too.

exit codes:
  0        without COMMAND: the proxy is ready
  N        the command exited with N
  128+N    the command was killed by signal N, or signal N ended the wait
  2        usage error
  69       the proxy was not ready within --timeout (with --timeout-fatal), or was
           lost while the command ran (--proxy-lost)
  70       internal error
  73       --install could not write DIR
  126      the command is not executable
  127      the command was not found
  --exit-code-map FROM:TO turns any of these into TO

examples:
  # a Job with a classic Linkerd sidecar (before 2.20): wait, run, then shut the proxy down
  proxy-await --shutdown -- ./migrate --all

  # HAProxy behind a load balancer: keep serving 20s after SIGTERM, then stop softly
  proxy-await --proxy none --term-delay 20s --rewrite TERM:USR1 -- haproxy -f /etc/haproxy.cfg
`

// helpWidth is the width the help wraps at.
const helpWidth = 100

func PrintHelp(w io.Writer) {
	c := &Config{}
	fmt.Fprint(w, helpHead)
	fmt.Fprint(w, flagSet(c).FlagUsagesWrapped(helpWidth))
	fmt.Fprint(w, helpEnv)
	fmt.Fprint(w, presetTable())
	fmt.Fprint(w, helpTail)
}

// presetTable is the presets' lines of the help: each preset's readiness
// and shutdown URLs, the shutdown URLs in one column, as wide as the
// widest readiness URL whose line fits the help's width; a longer one puts
// its shutdown URL on a line of its own, under the column.
func presetTable() string {
	names := presetNames()
	nameWidth := 0
	for _, n := range names {
		nameWidth = max(nameWidth, len(n))
	}
	indent := len("  ") + nameWidth + len(" ready ")
	type row struct{ name, ready, shutdown string }
	var rows []row
	column := 0
	for _, p := range proxies.All {
		ready, shutdown := p.URLs(0)
		rows = append(rows, row{p.Preset, ready, shutdown})
		if indent+len(ready)+len(" shutdown ")+len(shutdown) <= helpWidth {
			column = max(column, len(ready))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s ready %s", nameWidth, r.name, r.ready)
		if len(r.ready) > column {
			fmt.Fprintf(&b, "\n%*s", indent+column, "")
		} else {
			b.WriteString(strings.Repeat(" ", column-len(r.ready)))
		}
		fmt.Fprintf(&b, " shutdown %s\n", r.shutdown)
	}
	fmt.Fprintf(&b, "  %-*s no readiness wait, no shutdown\n", nameWidth, none)
	return b.String()
}

func PrintVersion(w io.Writer) {
	v, rev, when := version, known(commit), known(date)
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.time" && when == "":
				when = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev = "unknown"
	}
	if when == "" {
		when = "unknown"
	}
	fmt.Fprintf(w, "proxy-await %s\ncommit %s, built %s, %s\n", v, rev, when, runtime.Version())
}

// known drops the placeholders goreleaser injects when it has no git state.
func known(s string) string {
	if s == "none" || s == "unknown" || strings.HasPrefix(s, "0001-01-01") {
		return ""
	}
	return s
}

// ImageRepository is where the release image is pushed (.goreleaser.yaml).
const ImageRepository = "ghcr.io/proxy-await/proxy-await"

// ReleaseImage is this release's own image, ImageRepository:vVERSION, as
// .goreleaser.yaml tags it: what --inject's init container runs unless
// --image says otherwise. A build between releases (git describe's
// 1.2.3-4-gabc1234, -dirty) gives the image of the release it is built on;
// a build with no release version at all (a clone without tags, a Go
// pseudo-version, "(devel)") gives :v1, the latest release of major version
// 1.
func ReleaseImage() string {
	v := version
	if v == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			v = info.Main.Version
		}
	}
	return ImageRepository + ":" + imageTag(v)
}

// imageTag is the image tag of the release version v, as ReleaseImage says.
func imageTag(v string) string {
	v = strings.TrimPrefix(v, "v")
	base, pre, _ := strings.Cut(strings.TrimSuffix(v, "-dirty"), "-")
	if !semver(base) || pseudoVersion(pre) {
		return "v1"
	}
	if n, hash, ok := strings.Cut(pre, "-g"); ok && isDigits(n) && hexDigits(hash) {
		return "v" + base // git describe: commits after the tag base
	}
	if pre != "" {
		return "v" + base + "-" + pre // a release candidate, a snapshot
	}
	return "v" + base
}

// semver says whether s is MAJOR.MINOR.PATCH.
func semver(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !isDigits(p) {
			return false
		}
	}
	return true
}

// pseudoVersion says whether pre is the tail of a Go pseudo-version,
// [0.]YYYYMMDDhhmmss-abcdefabcdef: a commit, not a release.
func pseudoVersion(pre string) bool {
	pre = strings.TrimPrefix(pre, "0.")
	i := strings.LastIndexByte(pre, '.')
	pre = pre[i+1:]
	stamp, hash, ok := strings.Cut(pre, "-")
	return ok && len(stamp) == 14 && isDigits(stamp) && len(hash) == 12 && hexDigits(hash)
}

func hexDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdef") == ""
}
