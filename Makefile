# urldedupd: `make demo` shows the main job on a fresh machine; `make test`
# installs what the tests need and runs them all.
GO      ?= go
BIN     := bin/urldedupd
LAB     := bin/urldedupd-lab
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test race bench fuzz fuzz-short lint demo deps clean deb

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/urldedupd
	$(GO) build -ldflags "$(LDFLAGS)" -o $(LAB) ./cmd/urldedupd-lab

# The Debian package (dpkg-deb), in dist/: the binary, the systemd unit,
# the sysusers, logrotate and config files, the dashboard and the docs.
deb: build
	@BIN=$(BIN) bash scripts/make-deb.sh dist

# Tools the tests need beyond Go, installed from Debian when missing.
deps:
	@bash scripts/install-deps.sh

# The tests' temporary files go to a directory scripts/test-tmpdir.sh makes
# (a tmpfs when there is one with room), removed at the end. The command's
# tests (cmd/urldedupd) mostly wait on the processes they start, so the
# plain pass runs four of them at once (-parallel 4): 425 s one after the
# other, 216 s four at a time, on a quiet 2-core machine. The race pass
# leaves out the tests that compute on one goroutine (racetest); its
# packages wait on servers and sockets as much as they compute, so it
# tests four packages at once (-p 4), where two left a third of the
# processors idle. go test starts packages in the order it is given them.
# The plain pass names first the command's tests, the longest, then the
# packages that mostly wait on redis-server and sockets (SLOW), so that
# their waiting overlaps the command's computing and the pass ends on
# packages that compute (shardfile, state) rather than on ones that wait;
# the race pass names its slowest packages first (SLOW_RACE), lest one
# run alone at its end. The fuzzing runs two targets at a time (FUZZJOBS).
# (wildcard: a package gone from the tree leaves the list, so a stale list
# costs time, never the run.)
SLOW := $(addprefix ./,$(wildcard cmd/urldedupd internal/dedupproto internal/redisstate \
	internal/respserver internal/redistest internal/keyedwindow internal/bitmapwindow \
	internal/daemon internal/capture/source))
SLOW_RACE := $(addprefix ./,$(wildcard internal/keyed internal/capture internal/shardfile \
	internal/state internal/keyedwindow internal/daemon internal/respserver \
	internal/bitmapwindow internal/linefilter internal/dedupproto))
test: deps
	$(GO) vet ./...
	@tmp=$$(bash scripts/test-tmpdir.sh) && trap 'rm -rf "$$tmp"' EXIT && echo "tests' TMPDIR=$$tmp" && \
	TMPDIR=$$tmp $(GO) test -count=1 -parallel 4 -timeout 60m $(SLOW) ./... && \
	TMPDIR=$$tmp $(GO) test -count=1 -race -p 4 -timeout 30m $(SLOW_RACE) . ./internal/...
	@$(MAKE) --no-print-directory fuzz-short

race:
	$(GO) test -count=1 -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	bash scripts/bench-filter.sh
	bash scripts/bench-tls.sh
	bash scripts/bench-quic.sh

# Every fuzz target in the repository (found with grep) for FUZZTIME each
# (scripts/fuzz.sh), FUZZJOBS targets at a time, each with its share of
# the processors as workers. fuzz-short, for CI, runs each for 10 s, two
# at a time: every target still fuzzes 10 s, with one worker on this
# 2-core machine where it had two.
FUZZTIME ?= 60s
FUZZJOBS ?= 1
fuzz:
	@FUZZTIME=$(FUZZTIME) FUZZJOBS=$(FUZZJOBS) GO=$(GO) bash scripts/fuzz.sh

fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=10s FUZZJOBS=2

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# The main job on a temporary state: replay a capture shipped in the
# repository (made by scripts/make-captures.sh) twice. The first pass prints
# each URL requested in it; the second prints none, because the state
# persisted. Then the line filter on equivalent spellings of URLs.
CAPTURE := internal/capture/testdata/captures/http.pcap
demo: build
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	echo "== state in $$dir/state"; \
	echo "== replay $(CAPTURE): first pass, new URLs"; \
	$(BIN) --dir $$dir/state replay $(CAPTURE); \
	echo "== replay again: nothing is new any more"; \
	$(BIN) --dir $$dir/state replay $(CAPTURE); \
	echo "== filter testdata/demo-urls.txt: equivalent spellings count once"; \
	$(BIN) --dir $$dir/state filter -v testdata/demo-urls.txt; \
	echo "== check"; \
	$(BIN) --dir $$dir/state check http://raw.example:8080/pipe/3 http://example.com/never-seen; \
	echo "== stats"; \
	$(BIN) --dir $$dir/state stats | head -5

clean:
	rm -rf bin dist
