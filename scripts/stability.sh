#!/usr/bin/env bash
# Runs the quick mutant matrix N times (default 20): each round runs both references against
# the whole catalogue and every mutant against happy-path and its designated killer. Rounds
# 2, 4, 6, ... keep the other core busy with a spinning process. Prints, per consumer, how
# often it was judged ok, and per scenario how often a reference failed it.
# Usage: scripts/stability.sh [rounds] [reports-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
out=${2:-reports/stability-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
  load_pid=""
  if (( i % 2 == 0 )); then
    node -e 'for (;;) {}' & load_pid=$!
  fi
  start=$(date +%s)
  status=0
  node dist/harness/cli.js mutants --quick --jobs 2 --reports "$out/round-$i" > "$out/round-$i.log" 2>&1 || status=$?
  [ -n "$load_pid" ] && kill "$load_pid"
  echo "round $i: exit $status, $(( $(date +%s) - start )) s$([ -n "$load_pid" ] && echo ', other core busy')"
done
node -e '
const fs = require("fs"), path = require("path");
const out = process.argv[1], tally = new Map(), refFails = new Map();
for (const round of fs.readdirSync(out).filter((d) => d.startsWith("round-") && !d.endsWith(".log"))) {
  for (const batch of fs.readdirSync(path.join(out, round)).filter((d) => d.includes("mutants-quick"))) {
    for (const row of JSON.parse(fs.readFileSync(path.join(out, round, batch, "matrix.json"), "utf8"))) {
      const t = tally.get(row.consumer) ?? { ok: 0, runs: 0 };
      t.runs++; if (row.ok) t.ok++;
      tally.set(row.consumer, t);
      if (row.kind === "reference") for (const c of row.cells) if (c.status !== "pass") refFails.set(c.scenario, [...(refFails.get(c.scenario) ?? []), c.reason]);
    }
  }
}
for (const [consumer, t] of tally) console.log(`${consumer.padEnd(40)} ${t.ok}/${t.runs} judged ok`);
console.log(refFails.size ? "reference failures:" : "reference failures: none");
for (const [s, reasons] of refFails) console.log(`  ${s}: ${reasons.length}x — ${reasons[0]}`);
' "$out"
