# chaoslab — every target sets itself up, so a fresh clone needs nothing typed before
# `make scenario NAME=ack-crash` or `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
export CONSUMER
export SERVER

NPM_STAMP := node_modules/.chaoslab-npm-ci
BUILD_STAMP := dist/.chaoslab-built
TAP_BUILD_STAMP := node_modules/.chaoslab-tap-built
SOURCES := $(shell find harness publisher consumer protocol -name '*.ts' 2>/dev/null) tsconfig.json
SCENARIOS := $(shell find scenarios -name '*.yaml' -o -type d 2>/dev/null)
CATALOGUE_INDEX := dist/harness/catalogue/catalogue-index.json

.PHONY: help setup deps addon build toxiproxy test scenario catalogue mutants clean check-tools browser bench bench-full bench-render lint format sandbox-tools bench-sandbox schema node-versions chaos chaos-proof server-proof translations-check translations-stamp

help:
	@echo "make scenario NAME=ack-crash [CONSUMER='python3 consumer/ledger/python/client.py']   run one scenario"
	@echo "make scenario NAME=feed-server-snapshot-race [SERVER='python3 path/to/server.py']  run a server scenario against a push server"
	@echo "make scenario FILE=path/to/scenario.yaml                                    run a scenario file"
	@echo "make test                                                                   run the test suite"
	@echo "make catalogue [LAB=<lab>] [CONSUMER=... | SERVER=...] [JOBS=2]             run every scenario (of LAB) against one consumer (SERVER: every server scenario against one push server)"
	@echo "make mutants [JOBS=2]                                                       the full mutant matrix (every consumer x every scenario)"
	@echo "make chaos [LAB=<lab>] [CONSUMER=...] [SEED=n] [RUNS=100] [BUDGET=15m]        random fault schedules; a failure is shrunk into reports/<run>/repro.yaml"
	@echo "make chaos-proof [LABS=a,b] [JOBS=2] [FEED_JOBS=6]                          what chaos finds (every lab with a chaos model): references, every mutant over 3 seeds, repros replayed"
	@echo "make server-proof [RUNS=20] [JOBS=2] [HOG=1] [ONLY=a,b] [SERVERS=typescript,python] [MUTANTS=all|a,b] [REFERENCES=no] both reference servers on every feed-server-* scenario RUNS times (beside HOG CPU hogs), and MUTANTS on their killers; a table, exit 0 only when all pass and every mutant is caught"
	@echo "make grade-validity [LAB=<lab>] [PROGRAM=server] [JOBS=2] [MATRIX=..] [ONLY=a,b] [STABILITY=5 HOG=1] chaoslab grade on the references and mutants (consumers, and a lab's push servers) against the full matrix"
	@echo "make setup                                                                  install everything (done by the targets above)"
	@echo "make lint                                                                   Biome (with unawaited promise assertions), a type check of the tests too, the import graph (no circle, no import up a layer) and function length; make format rewrites"
	@echo "make translations-check                                                     the Japanese pages (*.ja.md) against their English sources, and every doc link (docs/staff.md)"
	@echo "make translations-stamp FILE=README.ja.md [SECTION='Two commands']          after re-translating: record the source sections' SHA-256 in the translation"
	@echo "make schema                                                                 regenerate the scenario JSON Schema files in schemas/"
	@echo "make node-versions [JOBS=2]                                                 ack-crash and the quick mutant matrix under Node 24 and 26 (from npm)"
	@echo "make bench [BENCH_QUICK=1]                                                  what a run costs, each figure beside its floor (docs/benchmarks.md)"
	@echo "make bench-full                                                             the same, with the larger sizes"
	@echo "make bench-render                                                           time report rendering of a 100 000-event run"
	@echo "make bench-sandbox                                                          what sealed mode adds per consumer process and per run"

# The parts that do not need each other run side by side: better-sqlite3's addon (where it is
# compiled, one core for about 80 s), the TypeScript build, Toxiproxy's `go install` (about 35 s
# of two cores where Go's build cache is cold) and the sandbox tools (apt-get, when missing). No
# output sync: each prints whole lines, and a step's "about 80 s" must show when it starts.
setup: check-tools deps
	@$(MAKE) --no-print-directory -j4 addon build toxiproxy sandbox-tools

check-tools:
	@command -v node >/dev/null || { echo "chaoslab needs Node.js 20 or later (https://nodejs.org)"; exit 1; }
	@node -e 'const [a]=process.versions.node.split(".").map(Number); if (a < 20) { console.error("chaoslab needs Node.js 20 or later (22, 24 and 26 are the maintained lines), found " + process.version); process.exit(1) }'
	@command -v python3 >/dev/null || { echo "chaoslab needs python3 for the Python reference consumer"; exit 1; }

# Without install scripts but esbuild's (it only picks its binary): better-sqlite3's is `addon`, below,
# so that `make test` can run it beside the type checks.
deps: $(NPM_STAMP)
$(NPM_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	npm rebuild esbuild
	@touch $@

# better-sqlite3's native addon, built when it does not load (a fresh install, or another Node than
# the one it was built for): its install script fetches a prebuilt binary from GitHub, or, where it
# cannot (no route to GitHub, as on this project's machines), compiles SQLite: one core for 105 s
# at the package's -O3, 81 s at -O2, SQLite's own default, under which our commits and reads ran
# as fast (2026-12-07). A CFLAGS of your own wins.
addon: deps
	@node -e 'new (require("better-sqlite3"))(":memory:").close()' 2>/dev/null || { \
	 echo "better-sqlite3: fetching its prebuilt addon, or compiling SQLite where that fails (about 80 s)"; \
	 CFLAGS="$${CFLAGS:--O2}" npm rebuild better-sqlite3; }

# tap builds its Test class with the plugins .taprc names. A run that finds that build stale remakes
# it, but only after it has chosen its test processes' loaders: so the first `make test` after
# `npm ci` (every CI run, every clean clone) started each test file with @tapjs/typescript's
# ts-node loader, which .taprc leaves out (0.5-0.65 s of CPU a file). Built here, before tap runs.
$(TAP_BUILD_STAMP): $(NPM_STAMP) .taprc
	npx tap build
	@touch $@

build: $(BUILD_STAMP) $(CATALOGUE_INDEX)
$(BUILD_STAMP): $(NPM_STAMP) $(SOURCES) scripts/build-validators.mjs
	npx tsc -p tsconfig.json
	node scripts/build-validators.mjs
	@touch $@

# Remade when a scenario file (or folder: one added or removed) changes, not only the code: a
# stale index is still right, but `chaoslab list` then parses every file it no longer vouches for.
$(CATALOGUE_INDEX): $(BUILD_STAMP) $(SCENARIOS) scripts/build-catalogue-index.mjs
	node scripts/build-catalogue-index.mjs

# Quick and quiet when Toxiproxy is already there (or TOXIPROXY_URL / PATH provide one).
toxiproxy:
	@bash scripts/install-toxiproxy.sh

# NAME, FILE, CONSUMER, SERVER and JOBS reach the recipes as environment variables, never as recipe
# text, so a value with quotes or `;` is passed as data and cannot run as shell code.
export NAME FILE JOBS

scenario: setup
	@if [ -n "$${FILE:-}" ]; then target="$$FILE"; elif [ -n "$${NAME:-}" ]; then target="$$NAME"; \
	 else echo "usage: make scenario NAME=<scenario> | FILE=<path> [CONSUMER='<command>' | SERVER='<command>']"; exit 2; fi; \
	 if [ -n "$${CONSUMER:-}" ] && [ -n "$${SERVER:-}" ]; then echo "make scenario: give CONSUMER or SERVER, not both"; exit 2; fi; \
	 if [ -n "$${CONSUMER:-}" ]; then node dist/harness/cli.js run "$$target" --consumer "$$CONSUMER"; \
	 elif [ -n "$${SERVER:-}" ]; then node dist/harness/cli.js run "$$target" --server "$$SERVER"; \
	 else node dist/harness/cli.js run "$$target"; fi

# The browser test (test/harness/report/browser.test.ts) opens report.html in Debian's chromium through
# playwright-core (a devDependency), with a Japanese font so that it can check Japanese text draws
# (fonts-ipafont-gothic, 3.5 MB). Installs what is missing when apt can; never fails: without
# chromium that test skips, without the font its glyph check does, each saying why.
browser:
	@pkgs=""; \
	 if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && [ -z "$${CHROMIUM_PATH:-}" ]; then pkgs="chromium"; fi; \
	 if command -v fc-list >/dev/null && [ -z "$$(fc-list :lang=ja family 2>/dev/null)" ]; then pkgs="$$pkgs fonts-ipafont-gothic"; fi; \
	 pkgs="$${pkgs# }"; \
	 if [ -z "$$pkgs" ]; then :; \
	 elif ! command -v apt-get >/dev/null; then \
	   echo "note: no apt-get here to install $$pkgs: the browser test will skip what needs it (set CHROMIUM_PATH to a Chromium binary to run it)"; \
	 else \
	   if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo=none; fi; \
	   if [ "$$sudo" = none ]; then echo "note: installing $$pkgs needs root (apt-get install): the browser test will skip what needs it"; \
	   else echo "installing $$pkgs for the browser test..."; \
	     { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs >/dev/null; } \
	       || echo "note: apt-get install $$pkgs failed: the browser test will skip what needs it"; \
	   fi; \
	 fi

# Sealed runs (harness/sandbox/) use util-linux (unshare, nsenter, setpriv, prlimit), iproute2,
# nftables and tini. Installs the missing ones when root and apt can; never fails: without them
# (or without root) the probe says sealing is not available, runs go unsealed and the sandbox
# tests skip, saying why.
SANDBOX_PROGRAMS := nft:nftables tini:tini unshare:util-linux nsenter:util-linux setpriv:util-linux prlimit:util-linux ip:iproute2
sandbox-tools:
	@missing=""; for pair in $(SANDBOX_PROGRAMS); do prog=$${pair%%:*}; pkg=$${pair#*:}; \
	   PATH="$$PATH:/usr/sbin:/sbin" command -v $$prog >/dev/null || missing="$$missing $$pkg"; done; \
	 missing=$$(echo $$missing | tr ' ' '\n' | sort -u | xargs); \
	 if [ -z "$$missing" ]; then :; \
	 elif [ "$$(id -u)" != 0 ]; then echo "note: sealed runs need root anyway; missing packages ($$missing) not installed: runs go unsealed"; \
	 elif ! command -v apt-get >/dev/null; then echo "note: no apt-get here: install $$missing for sealed runs; runs go unsealed"; \
	 else echo "installing $$missing for sealed runs..."; \
	   { apt-get update -qq && env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; } \
	     || echo "note: apt-get install $$missing failed: runs go unsealed, the sandbox tests skip"; \
	 fi

export BENCH_QUICK
bench: setup
	node bench/bench.mjs

bench-full: setup
	node bench/bench.mjs --full

bench-render: setup
	node bench/render.bench.mjs

bench-sandbox: setup
	node bench/sandbox.bench.mjs

# LAB=<lab> narrows it to one lab's scenarios (a consumer speaks one lab's protocol: CONSUMER needs it).
catalogue: setup
	@if [ -n "$${CONSUMER:-}" ] && [ -n "$${SERVER:-}" ]; then echo "make catalogue: give CONSUMER or SERVER, not both"; exit 2; fi; \
	 args=(run --all --jobs "$${JOBS:-2}"); \
	 if [ -n "$${LAB:-}" ]; then args+=(--lab "$$LAB"); fi; \
	 if [ -n "$${CONSUMER:-}" ]; then args+=(--consumer "$$CONSUMER"); elif [ -n "$${SERVER:-}" ]; then args+=(--server "$$SERVER"); fi; \
	 node dist/harness/cli.js "$${args[@]}"

mutants: setup
	node dist/harness/cli.js mutants --jobs "$${JOBS:-2}"

# Nightly chaos (docs/chaos.md): LAB, CONSUMER, SEED, RUNS, BUDGET reach the recipe as
# environment variables, never as recipe text. Exit 1 means a confirmed failure (repro written).
export SEED RUNS BUDGET LAB
chaos: setup
	@args=(chaos); \
	 if [ -n "$${LAB:-}" ]; then args+=(--lab "$$LAB"); fi; \
	 if [ -n "$${CONSUMER:-}" ]; then args+=(--consumer "$$CONSUMER"); fi; \
	 if [ -n "$${SEED:-}" ]; then args+=(--seed "$$SEED"); fi; \
	 if [ -n "$${RUNS:-}" ]; then args+=(--runs "$$RUNS"); fi; \
	 if [ -n "$${BUDGET:-}" ]; then args+=(--budget "$$BUDGET"); fi; \
	 node dist/harness/cli.js "$${args[@]}"

chaos-proof: setup
	node scripts/chaos-proof.mjs

# RUNS, JOBS, HOG, ONLY, SERVERS and OUT reach the script as environment variables (docs/testing.md "The server proof").
export HOG ONLY SERVERS OUT MUTANTS REFERENCES
server-proof: setup
	node scripts/server-proof.mjs

# The scenario JSON Schema for editors, generated from harness/scenario/schema.ts and the labs'
# parts; test/harness/catalogue/export-schema.test.ts fails when the files are not current.
schema: build
	node scripts/export-schema.mjs

# ack-crash and the quick mutant matrix under other Node lines, each with its own node_modules
# under .node-versions/<line>/ (see scripts/node-versions.sh). Not part of `make test`: it builds
# better-sqlite3 from source once per line and runs the matrix twice.
NODE_LINES ?= 24 26
export NODE_LINES
node-versions: setup
	bash scripts/node-versions.sh

# Biome: formatting and lint rules in one pass; `make test` runs it first. The tests are type-checked
# against the Test class .taprc's plugins make (TAP_BUILD_STAMP).
# The import graph (.dependency-cruiser.cjs): no circle, no import up a layer (docs/ARCHITECTURE.md).
lint: deps $(TAP_BUILD_STAMP)
	npx biome check .
	npx tsc -p tsconfig.test.json
	npx depcruise harness publisher consumer protocol --output-type err
	node scripts/check-function-length.mjs

format: deps
	npx biome check --write .

# The addon's compile, where it happens (a clean clone here: 81 s of one core), runs beside the
# TypeScript build and the lint instead of before them.
test: check-tools deps
	@$(MAKE) --no-print-directory -j2 --output-sync=target addon build lint
	@$(MAKE) --no-print-directory toxiproxy sandbox-tools browser
	@mkdir -p .tap
	@# The summary (failures, then the count) is printed even when tap fails, as the log's last lines.
	@# Without NODE_EXTRA_CA_CERTS: every Node process parses the bundle it names as it starts
	@# (45 ms where it is the system's), the tests start thousands, and none makes a TLS connection
	@# (npm, above, keeps it). Beside a CPU hog on 2 cores, with it and without: make test 6m24s
	@# and 5m28s; tap alone 5m41s and 5m26s (2026-12-06).
	@# Each test file's process gets tap's processinfo without its module hooks, which Node before
	@# 24.13 runs on a thread that every import crosses: 0.25-0.35 s of CPU a file less
	@# (test/helpers/processinfo-no-hooks.mjs).
	status=0; env -u NODE_EXTRA_CA_CERTS NODE_OPTIONS="--import=$(CURDIR)/test/helpers/processinfo-no-hooks.mjs $${NODE_OPTIONS:-}" \
	  npx tap 2>&1 | tee .tap/test-output.txt || status=$$?; \
	node scripts/test-summary.mjs .tap/test-output.txt; exit $$status
	node scripts/check-coverage.mjs 95 80

clean:
	rm -rf dist .tap node_modules/.cache/chaoslab-ts

# The Japanese pages stay in step with their English sources (docs/staff.md "Translations"):
# each names the SHA-256 of every source section it translates. test/scripts/translations.test.ts
# runs the same check in `make test`.
export SECTION
translations-check:
	node scripts/translations.mjs check
	node scripts/check-doc-links.mjs

translations-stamp:
	@if [ -z "$${FILE:-}" ]; then echo "usage: make translations-stamp FILE=<file.ja.md> [SECTION='<heading>']"; exit 2; fi; \
	 if [ -n "$${SECTION:-}" ]; then node scripts/translations.mjs stamp "$$FILE" "$$SECTION"; \
	 else node scripts/translations.mjs stamp "$$FILE"; fi

# Grading a class (docs/grading.md "Grading a class"): every sub-folder of SUBMISSIONS is a submission.
# OUT (default grades/), RUBRIC (default rubrics/<lab>.yaml), SHARD=i/n, JOBS, and GRADE_FLAGS
# (e.g. --unsealed) reach the recipe as environment variables, never as recipe text.
.PHONY: grade
export SUBMISSIONS OUT RUBRIC SHARD GRADE_FLAGS
grade: setup
	@if [ -z "$${SUBMISSIONS:-}" ]; then echo "usage: make grade SUBMISSIONS=<dir> [OUT=grades] [RUBRIC=<file>] [SHARD=i/n] [JOBS=2] [GRADE_FLAGS=--unsealed]"; exit 2; fi; \
	 args=(grade "$$SUBMISSIONS" --out "$${OUT:-grades}" --jobs "$${JOBS:-1}"); \
	 if [ -n "$${RUBRIC:-}" ]; then args+=(--rubric "$$RUBRIC"); fi; \
	 if [ -n "$${SHARD:-}" ]; then args+=(--shard "$$SHARD"); fi; \
	 read -ra flags <<< "$${GRADE_FLAGS:-}"; \
	 node dist/harness/cli.js "$${args[@]}" "$${flags[@]}"

# The validity proof of `chaoslab grade` (docs/grading.md "Grading a class"): the lab's references and
# mutants as a class, graded twice with rubrics/<LAB>.yaml, against the full mutant matrix (run
# here unless MATRIX=<matrix.json> gives one). ONLY=a,b limits the mutants (the references stay);
# RUBRIC and OUT as for grade. Hours of machine time for a whole lab. Exit 0 valid, 1 not, 2 not judged.
# STABILITY=N [HOG=n]: instead, grade the class N times (beside n CPU hogs) and compare each
# submission's scores (stability.md/.json); exit 0 identical, 1 not, 2 not judged.
.PHONY: grade-validity
export MATRIX ONLY RERUNS STABILITY HOG PROGRAM
grade-validity: setup
	@args=(--jobs "$${JOBS:-2}"); \
	 if [ -n "$${LAB:-}" ]; then args+=(--lab "$$LAB"); fi; \
	 if [ -n "$${PROGRAM:-}" ]; then args+=(--program "$$PROGRAM"); fi; \
	 if [ -n "$${MATRIX:-}" ]; then args+=(--matrix "$$MATRIX"); fi; \
	 if [ -n "$${ONLY:-}" ]; then args+=(--only "$$ONLY"); fi; \
	 if [ -n "$${RUBRIC:-}" ]; then args+=(--rubric "$$RUBRIC"); fi; \
	 if [ -n "$${OUT:-}" ]; then args+=(--out "$$OUT"); fi; \
	 if [ -n "$${RERUNS:-}" ]; then args+=(--reruns "$$RERUNS"); fi; \
	 if [ -n "$${STABILITY:-}" ]; then args+=(--stability "$$STABILITY"); fi; \
	 if [ -n "$${HOG:-}" ]; then args+=(--hog "$$HOG"); fi; \
	 node scripts/grade-validity.mjs "$${args[@]}"
