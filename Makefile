# proxy-await: build, demo, test, benchmark, fuzz, release checks.
# `make demo` and `make test` are all a new user needs (see README.md).

GO        ?= go
BIN       := bin
# The version stamp, as .goreleaser.yaml's ldflags set it for a release:
# the tag without its v (between tags, git describe's 1.2.3-4-gabc1234, or
# the short commit where no tag is; -dirty for uncommitted changes), the
# commit, and the commit's time in UTC, not the build's, so that one commit
# builds one binary. Outside a git checkout of this tree they are empty, and
# --version says (devel) and unknown.
IN_GIT     = $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && echo yes)
GIT_VERSION = $(if $(IN_GIT),$(shell git describe --tags --always --dirty | sed 's/^v//'))
GIT_COMMIT  = $(if $(IN_GIT),$(shell git rev-parse HEAD))
GIT_DATE    = $(if $(IN_GIT),$(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ))
STAMP     := github.com/proxy-await/proxy-await/config
LDFLAGS    = -s -w -X $(STAMP).version=$(GIT_VERSION) -X $(STAMP).commit=$(GIT_COMMIT) -X $(STAMP).date=$(GIT_DATE)
# net/http without its bundled HTTP/2, as .goreleaser.yaml builds it: every
# exchange proxy-await makes or serves (readiness, shutdown, the pod's
# probes, --app-probe) is HTTP/1.1, and HTTP/2's code is 0.55 MB of the
# binary. The tests build without it: their children serve h2c.
TAGS      := nethttpomithttp2
# No inlining but in the runtime's packages, as .goreleaser.yaml builds
# proxy-await: the copies of small functions that inlining makes weigh more
# than the binary would have over its 6.5 MiB limit
# (scripts/release-check.sh), and proxy-await's work is waiting and
# forwarding, where the calls they save cost little (BENCHMARKS.md, "The
# entrypoint's weight", prices them). The runtime keeps its inlining: every
# allocation, channel operation and signal goes through it. The tests
# build without these flags.
GCFLAGS   := -gcflags=all=-l -gcflags=runtime/...=
# Debian packages the tests and benchmarks run for real: tini and dumb-init to
# compare against, haproxy for the graceful-stop test, runc and busybox-static
# for the container test, hyperfine for start-up timing.
TEST_PKGS := tini dumb-init haproxy runc busybox-static hyperfine

# The real Cloud SQL Auth Proxy v2 the sidecar tests run, built from the Go
# module proxy once and kept outside the clone; the tests find it here.
TOOLS_BIN               ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/proxy-await/tools/bin
CLOUD_SQL_PROXY_VERSION := v2.27.0
export CLOUD_SQL_PROXY  := $(TOOLS_BIN)/cloud-sql-proxy

# haproxy and runc live in sbin, which a non-login PATH may lack.
export PATH := $(PATH):/usr/local/sbin:/usr/sbin:/sbin

.PHONY: all build demo test deps bench conformance fuzz release-check clean e2e bench-rollout FORCE

all: build

build: $(BIN)/proxy-await $(BIN)/proxy-awaitctl $(BIN)/fakeproxy

# Built every time: a new commit changes the stamp and no source file, and
# go build's cache makes a build with nothing changed cheap.
$(BIN)/proxy-await: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' $(GCFLAGS) -ldflags '$(LDFLAGS)' -o $@ .

# The platform tool (check, inject, policy), from the same module and stamp.
$(BIN)/proxy-awaitctl: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/proxy-awaitctl

$(BIN)/fakeproxy: $(wildcard testdata/fakeproxy/*.go internal/fakeproxy/*.go)
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./testdata/fakeproxy

# examples/cloudsql-job.yaml played on this machine: proxy-awaitctl check
# finds nothing in the manifest; a stand-in Cloud SQL Auth Proxy turns ready
# after 1.5 s; proxy-await waits for it, runs a short job that exits 3, POSTs
# /quitquitquit, and exits with the job's status; then every request the
# proxy received is shown.
demo: build
	@scripts/demo.sh

# Installs what the tests need when it is missing, then runs every test with
# the race detector. No compiled file may be tracked by git.
test: deps
	@scripts/no-binaries.sh
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

deps:
	@scripts/install-deps.sh $(TEST_PKGS)
	@GO=$(GO) scripts/install-cloud-sql-proxy.sh $(CLOUD_SQL_PROXY_VERSION) $(TOOLS_BIN)

bench: deps build
	@bench/run.sh

# docs/conformance.md: proxy-await, tini and dumb-init on the same scenarios,
# as measured here (a test checks the committed table is current).
conformance: deps build
	scripts/conformance.sh > docs/conformance.md

# Every fuzz target in turn, FUZZTIME each (default 30s); found crashers land
# in testdata/fuzz and become regression cases of plain `go test`.
fuzz:
	@scripts/fuzz.sh

clean:
	rm -rf $(BIN) dist

# proxy-await's claims as Jobs, a CronJob, deletions, Deployments and a
# Service in a real two-node cluster v1.33, each node in a network namespace
# of its own, kube-proxy in iptables mode, then nftables (and IPVS where the
# kernel has it) for the scenarios through its rules; one line per scenario
# (root; the cluster's build is cached outside the clone). See docs/e2e.md.
e2e:
	@e2e/run.sh

# The rollout of scenario 12 on the two nodes of make e2e, whose kube-proxies
# sync at most every 1 s and 5 s: no delay, a preStop sleep and the drain,
# under load and for a quiet service (the drain there at the sleep's
# --term-delay), ROLLOUT_RUNS times each, in each kube-proxy mode the
# machine can run: a Markdown table for BENCHMARKS.md and the picture
# docs/rollout.svg (root; about two hours). Not run by CI.
ROLLOUT_RUNS ?= 20
bench-rollout:
	@ROLLOUT_RUNS=$(ROLLOUT_RUNS) e2e/bench-rollout.sh

# A full snapshot release (archives, image, SBOMs, signed checksums) and
# checks of it: scripts/release-check.sh. Tools are installed once, pinned, in
# ~/.cache/proxy-await/tools (scripts/release-tools.sh).
release-check:
	@scripts/release-check.sh
