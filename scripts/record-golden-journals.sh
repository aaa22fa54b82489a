#!/usr/bin/env bash
# Records the golden journals the report tests render (test/fixtures/journals/): real runs of
# real scenarios, passing and failing. Re-run after a change to the journal schema, then review
# the diff of the fixtures like code. Needs `make setup` first.
set -euo pipefail
cd "$(dirname "$0")/.."
out=test/fixtures/journals
work=$(mktemp -d)
chmod 755 "$work" # a sealed run's consumer (another uid) must reach its room inside
trap 'rm -rf "$work"' EXIT
record() { # name scenario [consumer]
  local name=$1 scenario=$2 consumer=${3:-}
  node dist/harness/cli.js run "$scenario" --reports "$work/$name" -q ${consumer:+--consumer "$consumer"} >/dev/null || true
  cp "$work/$name"/2*/journal.jsonl "$out/$name.jsonl"
  echo "recorded $out/$name.jsonl"
}
mkdir -p "$out"
record ack-crash-pass ack-crash
record ack-crash-ack-before-commit ack-crash "node dist/consumer/ledger/mutants/ack-before-commit.js"
record resync-required-pass resync-required
record cuts-pass cuts
record malformed-plus-sign-lenient malformed-plus-sign "node dist/consumer/ledger/mutants/lenient-parser.js"
record mid-transaction-split-commit mid-transaction-visibility "node dist/consumer/ledger/mutants/split-commit.js"
record duplicate-delivery-no-dedupe duplicate-delivery "node dist/consumer/ledger/mutants/no-dedupe.js"
# The feed lab (reference consumer): what the feed report tests render (test/harness/report/feed.test.ts).
record feed-happy-path-pass feed-happy-path
record feed-acceptance-pass feed-acceptance
record feed-crash-apply-pass feed-crash-apply
record feed-cut-30s-pass feed-cut-30s
# The feed lab's server runs (the TypeScript reference server, sealed as root): lanes per party, the memory plot, the delivery table.
record feed-server-slow-reader feed-server-slow-reader
record feed-server-two-instances-pass feed-server-two-instances
