"""A raw stdio upstream that appends every line it reads to FILE: ``recording_upstream.py FILE
legacy|modern``. ``legacy`` refuses ``server/discover`` (as a 2025 server does: -32601) and
answers ``initialize``; ``modern`` answers ``server/discover``; both list one tool, ``t``."""

import json
import sys

record, era = sys.argv[1], sys.argv[2]
MODERN = "2026-07-28"
for line in sys.stdin:
    with open(record, "a", encoding="utf-8") as f:
        f.write(line)
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    result: object
    if method == "server/discover" and era == "legacy":
        answer = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
        print(json.dumps(answer), flush=True)
        continue
    if method == "server/discover":
        info = {"io.modelcontextprotocol/serverInfo": {"name": "recording", "version": "1"}}
        result = {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "_meta": info}
    elif method == "initialize":
        info = {"name": "recording", "version": "1"}
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    if era == "modern" and isinstance(result, dict):
        result["resultType"] = "complete"
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
