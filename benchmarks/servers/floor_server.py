"""The floor: the fastest pure-Python stdio MCP loop we could write with the stdlib ``json``.

No framework, no asyncio, no threads: one blocking ``os.read`` of whatever is in the pipe, every
complete line in it answered inline, all the answers of that chunk written with one ``os.write``.
That is the least work a Python process can do per message, so every other server is measured
as a multiple of it.

It answers exactly what the benchmark sends, with the same result shapes as the real servers:

* ``initialize`` (echoes a known version, else answers 2025-11-25), ``notifications/initialized``
  (ignored), ``ping``, ``tools/list`` (one page), ``tools/call`` for ``add`` and ``echo``
  (``content`` text plus ``structuredContent: {"result": …}``, as the SDKs do for a ``-> int`` /
  ``-> str`` tool on 2025-06-18+), ``-32601`` for anything else, ``-32700`` for bad JSON;
* ``server/discover``: a DiscoverResult-shaped result (``resultType``, ``supportedVersions``,
  ``capabilities``, ``ttlMs``, ``cacheScope``, ``_meta`` serverInfo) — the shape a 2026-07-28 server
  answers with. The floor does not otherwise implement the stateless era (no ``_meta``
  validation, no -32022); it is here to show the cost of answering the probe, nothing more.

It checks nothing it does not have to (no lifecycle, no duplicate ids, arguments only as far as
needed to compute): a floor, not a server to copy. ``BENCH_EXTRA_TOOLS=N`` adds N more tools to
``tools/list`` (``tool_0`` … — calling them is not supported).
"""

import json
import os
import sys

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
INFO = {"name": "bench-floor", "version": "1.0.0"}
TOOLS = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
    },
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
    },
]
for _i in range(int(os.environ.get("BENCH_EXTRA_TOOLS") or 0)):
    TOOLS.append(
        {
            "name": f"tool_{_i}",
            "description": f"Extra tool number {_i}: look something up.\n\nReturns what was found.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "default": 10, "description": "At most this many results."},
                },
                "required": ["query"],
            },
            "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
        }
    )
CAPS = {"tools": {"listChanged": False}}


def initialize(params):
    v = params.get("protocolVersion")
    return {"protocolVersion": v if v in VERSIONS else VERSIONS[-1], "capabilities": CAPS, "serverInfo": INFO}


def discover(params):
    return {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": CAPS,
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
    }


def call(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "add":
        a, b = args.get("a"), args.get("b")
        if type(a) is not int or type(b) is not int:
            return {"content": [{"type": "text", "text": "a and b must be integers"}], "isError": True}
        r = a + b
        return {"content": [{"type": "text", "text": str(r)}], "structuredContent": {"result": r}}
    if name == "echo":
        t = args.get("text")
        if type(t) is not str:
            return {"content": [{"type": "text", "text": "text must be a string"}], "isError": True}
        return {"content": [{"type": "text", "text": t}], "structuredContent": {"result": t}}
    raise KeyError(name)


METHODS = {
    "initialize": initialize,
    "server/discover": discover,
    "ping": lambda params: {},
    "tools/list": lambda params: {"tools": TOOLS},
    "tools/call": call,
}


def answer(line, loads=json.loads, dumps=json.JSONEncoder(separators=(",", ":")).encode, methods=METHODS):
    try:
        msg = loads(line)
    except ValueError:
        return dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    if "id" not in msg:
        return None  # a notification (or a response): nothing to send
    id_ = msg["id"]
    handler = methods.get(msg.get("method"))
    if handler is None:
        err = {"code": -32601, "message": f"Method not found: {msg.get('method')!r}"}
        return dumps({"jsonrpc": "2.0", "id": id_, "error": err})
    try:
        result = handler(msg.get("params") or {})
    except KeyError as exc:
        err = {"code": -32602, "message": f"Unknown tool: {exc.args[0]!r}"}
        return dumps({"jsonrpc": "2.0", "id": id_, "error": err})
    return dumps({"jsonrpc": "2.0", "id": id_, "result": result})


def main():
    read, write = os.read, os.write
    pending = []  # the pieces of a line not complete yet (joined once: linear in its size)
    while True:
        chunk = read(0, 1 << 20)
        if chunk:
            if b"\n" not in chunk:
                pending.append(chunk)
                continue
            if pending:
                pending.append(chunk)
                chunk = b"".join(pending)
                pending = []
            lines = chunk.split(b"\n")
            tail = lines.pop()
            if tail:
                pending.append(tail)
        else:  # EOF: a last line without a newline still counts
            lines = [b"".join(pending)]
        out = []
        for line in lines:
            if line.strip():
                r = answer(line)
                if r is not None:
                    out.append(r)
        if out:
            view = memoryview(("\n".join(out) + "\n").encode())
            while view:
                view = view[write(1, view) :]
        if not chunk:
            return


if __name__ == "__main__":
    sys.exit(main())
