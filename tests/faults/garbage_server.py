"""A hand-written stdio server (no mcpio) that corrupts its own stdout on purpose.

    python tests/faults/garbage_server.py [--junk] [--split] [--crlf] [--banner]

``--banner``  prints start-up chatter (and invalid UTF-8) before reading anything
``--junk``    writes junk lines before every answer: text, invalid UTF-8, half a JSON object,
              JSON that is not a message, responses to ids never sent, unknown notifications,
              blank lines, a 1 MiB line, and a response-shaped object without result or error
              that carries the id of the request being answered
``--split``   writes every answer in three pieces with pauses (partial lines on the pipe)
``--crlf``    ends lines with CRLF
A ``tools/call`` of ``die`` writes half an answer, then exits with status 5; any other call
answers with its ``text`` argument.
"""

from __future__ import annotations

import json
import os
import sys
import time

args = set(sys.argv[1:])
EOL = b"\r\n" if "--crlf" in args else b"\n"


def write(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


first_id: list[object] = []


def junk(id_: object) -> None:
    if not first_id:
        first_id.append(id_)
    lines = [
        b"Server listening on stdio (this line is not JSON)",
        b"\xff\xfe\xfd invalid UTF-8 \xc3\x28",
        b'{"jsonrpc": "2.0", "id": ',
        b"42",
        b"[]",
        b"null",
        b'"a string"',
        b'{"hello": "world"}',
        b'{"jsonrpc":"2.0","id":987654321,"result":{}}',
        b'{"jsonrpc":"2.0","id":"never-sent","error":{"code":-1,"message":"x"}}',
        b'{"jsonrpc":"2.0","method":"notifications/who_knows","params":{"x":1}}',
        b"",
        b"   ",
        b"\r",
        b"[" * 5000,
        b"J" * (1024 * 1024 if id_ == first_id[0] else 1000),  # one 1 MiB line is enough
        json.dumps({"jsonrpc": "2.0", "id": id_}).encode(),  # neither result nor error
    ]
    for line in lines:
        write(line + EOL)


def send(msg: dict, id_: object) -> None:
    if "--junk" in args:
        junk(id_)
    data = json.dumps(msg).encode() + EOL
    if "--split" in args:
        third = max(1, len(data) // 3)
        for piece in (data[:third], data[third : 2 * third], data[2 * third :]):
            write(piece)
            time.sleep(0.002)
    else:
        write(data)


if "--banner" in args:
    write(b"garbage server 0.1 starting..." + EOL + b"\xff\xfe" + EOL + b"loaded 3 plugins" + EOL)

for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
        continue
    method, id_, params = msg["method"], msg["id"], msg.get("params") or {}
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "result": {
                    "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "garbage", "version": "0.1"},
                },
            },
            id_,
        )
    elif method == "tools/list":
        send(
            {
                "jsonrpc": "2.0",
                "id": id_,
                "result": {
                    "tools": [
                        {"name": "say", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
                    ]
                },
            },
            id_,
        )
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        if text == "die":
            write(b'{"jsonrpc":"2.0","id":' + json.dumps(id_).encode() + b',"result":{"content":[{"ty')
            sys.stderr.write("garbage server: giving up mid-answer\n")
            sys.stderr.flush()
            os._exit(5)
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}}, id_)
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id_, "result": {}}, id_)
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"no {method}"}}, id_)
