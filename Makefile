# proxy-await: build, demo, test, benchmark, fuzz, release checks.
# `make demo` and `make test` are all a new user needs (see README.md).

GO        ?= go
BIN       := bin
LDFLAGS   := -s -w
# Debian packages the tests and benchmarks run for real: tini and dumb-init to
# compare against, haproxy for the graceful-stop test, runc and busybox-static
# for the container test, hyperfine for start-up timing.
TEST_PKGS := tini dumb-init haproxy runc busybox-static hyperfine

# haproxy and runc live in sbin, which a non-login PATH may lack.
export PATH := $(PATH):/usr/local/sbin:/usr/sbin:/sbin

.PHONY: all build demo test deps bench conformance fuzz release-check clean

all: build

build: $(BIN)/proxy-await $(BIN)/fakeproxy

$(BIN)/proxy-await: $(shell find . -name '*.go' -not -path './testdata/*') go.mod go.sum
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ .

$(BIN)/fakeproxy: $(wildcard testdata/fakeproxy/*.go)
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./testdata/fakeproxy

# A stand-in Linkerd proxy turns ready after a moment; proxy-await waits for
# it, runs a short job, POSTs /shutdown and exits with the job's status.
demo: build
	@scripts/demo.sh

# Installs what the tests need when it is missing, then runs every test with
# the race detector.
test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

deps:
	@scripts/install-deps.sh $(TEST_PKGS)

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

# A full snapshot release (archives, image, SBOMs, signed checksums) and
# checks of it: scripts/release-check.sh. Tools are installed once, pinned, in
# ~/.cache/proxy-await/tools (scripts/release-tools.sh).
release-check:
	@scripts/release-check.sh
