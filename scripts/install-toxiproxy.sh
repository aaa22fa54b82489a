#!/usr/bin/env bash
# Makes the real Toxiproxy server available to chaoslab as .tools/bin/toxiproxy-server.
#
# Idempotent and quiet when already done. Nothing is installed when TOXIPROXY_URL points at a
# running server or when a toxiproxy-server is already on PATH (the harness uses that one).
# Otherwise the pinned tag is built with `go install` (go's module and build caches stay where
# go keeps them). There is no fallback to anything but the real server.
set -euo pipefail

TOXIPROXY_VERSION="v2.12.0" # pinned tag of github.com/Shopify/toxiproxy
TOXIPROXY_MODULE="github.com/Shopify/toxiproxy/v2"

ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
TARGET="$BIN_DIR/toxiproxy-server"

say() { printf 'install-toxiproxy: %s\n' "$*"; }

# `toxiproxy-server -version` prints "toxiproxy-server version 2.12.0" (release builds drop the "v").
reports_pinned_version() {
  local out
  out="$("$1" -version 2>/dev/null)" || return 1
  [[ "$out" =~ version[[:space:]]+v?${TOXIPROXY_VERSION#v}([[:space:]]|$) ]]
}

how_to_get_one() {
  cat >&2 <<EOF
install-toxiproxy: cannot build toxiproxy-server $TOXIPROXY_VERSION: $1
Get the real server in one of these ways, then run this script (or 'make setup') again:
  - the release binary from https://github.com/Shopify/toxiproxy/releases/tag/$TOXIPROXY_VERSION
    (toxiproxy-server-<os>-<arch>), saved as $TARGET (chmod +x) or put on PATH as toxiproxy-server;
  - a package manager, e.g. 'brew install toxiproxy' (puts toxiproxy-server on PATH);
  - a container: docker run -d --network host ghcr.io/shopify/toxiproxy:${TOXIPROXY_VERSION#v}
    then export TOXIPROXY_URL=http://127.0.0.1:8474 (host networking, because chaoslab's proxies
    listen on and connect to 127.0.0.1);
  - install Go >= 1.23 (Toxiproxy v2.12.0's go.mod asks for 1.23.0) (https://go.dev/dl/) and run this script again.
EOF
  exit 1
}

# 1. Already installed (quiet).
if [[ -x "$TARGET" ]] && reports_pinned_version "$TARGET"; then
  exit 0
fi

# 2. A running server is given explicitly.
if [[ -n "${TOXIPROXY_URL:-}" ]]; then
  say "TOXIPROXY_URL is set ($TOXIPROXY_URL): using that server, nothing to install"
  exit 0
fi

# 3. One on PATH -- unless a stale project-local binary exists: the harness prefers that one,
#    so it is rebuilt instead.
if [[ ! -e "$TARGET" ]] && on_path="$(command -v toxiproxy-server 2>/dev/null)" && [[ -n "$on_path" ]]; then
  version="$("$on_path" -version 2>/dev/null || true)"
  say "using toxiproxy-server on PATH: $on_path (${version:-version unknown}); nothing to install"
  if ! reports_pinned_version "$on_path"; then
    say "note: chaoslab is tested with $TOXIPROXY_VERSION"
  fi
  exit 0
fi

# 4. Build the pinned tag.
if ! command -v go >/dev/null 2>&1; then
  how_to_get_one "'go' is not on PATH"
fi

if [[ -e "$TARGET" ]]; then
  say "replacing $TARGET ($("$TARGET" -version 2>/dev/null || echo 'does not run')) with $TOXIPROXY_VERSION"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/chaoslab-toxiproxy.XXXXXX")"
trap 'rm -rf -- "$tmp"' EXIT

say "building toxiproxy-server $TOXIPROXY_VERSION with $(go version | cut -d' ' -f3) (takes about half a minute)"
# The version variable is what release builds set (goreleaser: -X ...Version={{.Version}});
# without it `go install` yields a binary that reports version "git".
if ! GOBIN="$tmp" go install \
  -ldflags "-s -w -X $TOXIPROXY_MODULE.Version=${TOXIPROXY_VERSION#v}" \
  "$TOXIPROXY_MODULE/cmd/server@$TOXIPROXY_VERSION" >"$tmp/build.log" 2>&1; then
  cat "$tmp/build.log" >&2
  how_to_get_one "'go install $TOXIPROXY_MODULE/cmd/server@$TOXIPROXY_VERSION' failed (output above)"
fi

if [[ ! -x "$tmp/server" ]]; then
  how_to_get_one "go install succeeded but produced no 'server' binary in $tmp"
fi
if ! reports_pinned_version "$tmp/server"; then
  how_to_get_one "the built binary reports '$("$tmp/server" -version 2>&1 || true)', not $TOXIPROXY_VERSION"
fi

mkdir -p "$BIN_DIR"
# Move into place atomically (same directory, then rename) so a half-copied binary is never seen.
cp "$tmp/server" "$BIN_DIR/.toxiproxy-server.tmp.$$"
mv -f "$BIN_DIR/.toxiproxy-server.tmp.$$" "$TARGET"
say "installed $TARGET ($("$TARGET" -version))"
