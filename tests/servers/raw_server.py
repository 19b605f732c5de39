"""A hand-written stdio MCP server (no mcpio, no SDK) that misbehaves on request.

    python tests/servers/raw_server.py [options]

Options (any combination):
  --bad-catalog        tools/list returns bad names, an invalid schema, no titles/annotations
  --crash-on-call      tools/call writes to stderr and exits with code 3 (no answer)
  --answer-then-exit   tools/call writes its answer, then exits with code 0 at once
  --holder             with --crash-on-call: first start `sleep 60` that inherits stdout
  --ignore-sigterm     ignore SIGTERM and stdin EOF (and so does a child it starts)
  --stderr-flood N     write N bytes to stderr before reading anything
  --cursor-loop        tools/list always answers nextCursor "again"
  --malformed-tools    tools/list lists "ok" between a tool without a name and one whose
                       inputSchema is a string
  --duplicates         tools/list pages repeat a tool
  --pid-file PATH      write "<pid> <child pid>" to PATH once running
  --resources          announce resources (no subscribe) and list mem://a, but answer
                       resources/templates/list with -32601 (as an SDK server without templates does);
                       a tool call's answer links to mem://report, read but not listed
  --templates          with --resources: list the templates users://{user-id}/profile (a variable
                       name RFC 6570 refuses) and mem://{name}, and read any URI (its text: the URI)
Every tool call otherwise answers with the text "ok".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

args = sys.argv[1:]


def opt(name: str) -> bool:
    return name in args


def value(name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


child_pid = 0
if opt("--ignore-sigterm"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    child_pid = child.pid
if value("--pid-file"):
    with open(value("--pid-file"), "w") as f:  # type: ignore[arg-type]
        f.write(f"{os.getpid()} {child_pid}")
if value("--stderr-flood"):
    n = int(value("--stderr-flood"))  # type: ignore[arg-type]
    line = b"x" * 99 + b"\n"
    for _ in range(n // 100):
        os.write(2, line)

BAD_TOOLS = [
    {"name": "has space", "inputSchema": {"type": "object"}},
    {"name": "x" * 70, "title": "Long", "annotations": {"readOnlyHint": True}, "inputSchema": {"type": "object"}},
    {
        "name": "typo",
        "title": "Typo",
        "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integr"}}, "required": "a"},
    },
    {
        "name": "fine",
        "title": "Fine",
        "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
]

for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "result": {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, **({"resources": {}} if opt("--resources") else {})},
                    "serverInfo": {"name": "raw", "version": "0.0.1"},
                },
            }
        )
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        if opt("--cursor-loop"):
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [], "nextCursor": "again"}})
        elif opt("--duplicates"):
            tools = [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}]
            result = {"tools": tools if cursor else tools[:1], **({} if cursor else {"nextCursor": "page2"})}
            send({"jsonrpc": "2.0", "id": id_, "result": result})
        elif opt("--malformed-tools"):
            tools = [
                {"title": "nameless", "inputSchema": {"type": "object"}},
                {"name": "ok", "inputSchema": {"type": "object"}},
                {"name": "stringly", "inputSchema": "object"},
            ]
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": tools}})
        else:
            tools = BAD_TOOLS if opt("--bad-catalog") else [{"name": "ok", "inputSchema": {"type": "object"}}]
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": tools}})
    elif method == "tools/call":
        if opt("--crash-on-call"):
            if opt("--holder"):
                subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)  # inherits our stdout
            sys.stderr.write("fatal: out of cheese\n")
            sys.stderr.flush()
            os._exit(3)
        content = [{"type": "text", "text": "ok"}]
        if opt("--resources"):  # a link to a resource it does not list (the spec allows it)
            content.append({"type": "resource_link", "uri": "mem://report", "name": "report"})
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": content}})
        if opt("--answer-then-exit"):
            os._exit(0)
    elif method == "resources/list" and opt("--resources"):
        send({"jsonrpc": "2.0", "id": id_, "result": {"resources": [{"uri": "mem://a", "name": "a"}]}})
    elif method == "resources/templates/list" and opt("--templates"):
        templates = [
            {"uriTemplate": "users://{user-id}/profile", "name": "user"},
            {"uriTemplate": "mem://{name}", "name": "m"},
        ]
        send({"jsonrpc": "2.0", "id": id_, "result": {"resourceTemplates": templates}})
    elif method == "resources/read" and opt("--resources"):
        uri = msg["params"]["uri"]
        send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "result": {"contents": [{"uri": uri, "text": "A" if uri == "mem://a" else uri}]},
            }
        )
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"Method not found: {method}"}})

if opt("--ignore-sigterm"):
    while True:  # stdin is gone, and we stay anyway
        time.sleep(1)
