"""A stdio server (no mcpio) that answers ``tools/call`` with a 2 MiB line, closes its stdin
and exits: the client, capped at 1 MiB, must skip the line without answering it and end
without "Task exception was never retrieved" (issue 12, break 6g)."""

from __future__ import annotations

import json
import os
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        out = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oversized", "version": "1"},
        }
    elif msg["method"] == "tools/call":
        os.close(0)
        big = {"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "x" * (2 << 20)}]}}
        sys.stdout.write(json.dumps(big) + "\n")
        sys.stdout.flush()
        sys.exit(0)
    else:
        out = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": out}) + "\n")
    sys.stdout.flush()
