"""A hand-written stdio server (2025-11-25) whose ``tools/list`` fails: the inspector's list
error state. It offers tools and prompts; tools/list answers a JSON-RPC error, prompts/list
an empty list, and every other request "method not found"."""

import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue  # a notification
    method, answer = msg.get("method"), {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "initialize":
        answer["result"] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "prompts": {}},
            "serverInfo": {"name": "failing-list", "version": "0.1.0"},
        }
    elif method == "tools/list":
        answer["error"] = {"code": -32603, "message": "the tool catalogue is broken"}
    elif method == "prompts/list":
        answer["result"] = {"prompts": []}
    elif method == "ping":
        answer["result"] = {}
    else:
        answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
