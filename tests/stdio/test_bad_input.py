"""Table-driven bad input against a live stdio server: each line gets the right error (or is
ignored when it is a notification or a response), and the server keeps serving."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.stdio_peer import StdioPeer

ROOT = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(ROOT / "tests/servers/echo_server.py")]

# (label, raw line or None, expected error code or None for "no reply", expected id)
CASES = [
    ("empty line", b"\n", None, None),
    ("whitespace line", b"   \t \n", None, None),
    ("not json", b"hello there\n", -32700, None),
    ("truncated json", b'{"jsonrpc": "2.0", "id": 1\n', -32700, None),
    ("invalid utf-8", b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}\n', -32700, None),
    ("array without batching", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600, None),
    ("scalar", b"42\n", -32600, None),
    ("string scalar", b'"ping"\n', -32600, None),
    ("null", b"null\n", -32600, None),
    ("missing jsonrpc", b'{"id":11,"method":"ping"}\n', -32600, 11),
    ("wrong jsonrpc", b'{"jsonrpc":"1.0","id":12,"method":"ping"}\n', -32600, 12),
    ("null id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600, None),
    ("object id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600, None),
    ("unknown method", b'{"jsonrpc":"2.0","id":13,"method":"no/such"}\n', -32601, 13),
    ("params not an object", b'{"jsonrpc":"2.0","id":14,"method":"tools/list","params":[1]}\n', -32602, 14),
    ("scalar params", b'{"jsonrpc":"2.0","id":15,"method":"tools/list","params":3}\n', -32602, 15),
    ("unknown notification", b'{"jsonrpc":"2.0","method":"notifications/whatever"}\n', None, None),
    ("response with unknown id", b'{"jsonrpc":"2.0","id":999,"result":{}}\n', None, None),
    ("error with unknown id", b'{"jsonrpc":"2.0","id":998,"error":{"code":1,"message":"x"}}\n', None, None),
    ("unknown tool", b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"nope"}}\n', -32602, 16),
]


@pytest.fixture(scope="module")
def peer(wire_validator):
    with StdioPeer.spawn(ECHO) as p:
        p.initialize("2025-11-25")
        yield p


@pytest.mark.parametrize("label,line,code,id_", CASES, ids=[c[0] for c in CASES])
def test_bad_line(peer, label, line, code, id_):
    peer.send_raw(line)
    if code is None:
        # Nothing must come back: the next message is the answer to a ping sent after it.
        ping = peer.request_msg("ping")
        peer.send(ping)
        assert peer.recv() == {"jsonrpc": "2.0", "id": ping["id"], "result": {}}
    else:
        msg = peer.recv()
        assert msg["jsonrpc"] == "2.0"
        assert msg["id"] == id_, msg
        assert msg["error"]["code"] == code, msg
        assert isinstance(msg["error"]["message"], str) and msg["error"]["message"]
        assert "Traceback" not in msg["error"]["message"]
    # and the server still serves
    assert (
        peer.request("tools/call", {"name": "echo", "arguments": {"text": label}})["result"]["content"][0]["text"]
        == label
    )


def test_request_before_initialize_gets_a_clear_error():
    with StdioPeer.spawn(ECHO) as p:
        resp = p.request("tools/list")
        assert resp["error"]["code"] == -32600
        assert "initialize" in resp["error"]["message"]
        assert p.request("ping")["result"] == {}
        p.initialize("2025-11-25")
        assert p.request("tools/list")["result"]["tools"]


def test_duplicate_id_in_flight():
    with StdioPeer.spawn(ECHO) as p:
        p.initialize("2025-11-25")
        p.send(
            {
                "jsonrpc": "2.0",
                "id": 77,
                "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"seconds": 0.5}},
            }
        )
        p.send({"jsonrpc": "2.0", "id": 77, "method": "ping"})
        first = p.recv()
        assert first["id"] == 77 and first["error"]["code"] == -32600 and "in flight" in first["error"]["message"]
        second = p.recv()
        assert second["id"] == 77 and second["result"]["content"][0]["text"] == "slept 0.5"


def test_50_mib_line():
    with StdioPeer.spawn(ECHO) as p:
        p.initialize("2025-11-25")
        big = "x" * (50 * 1024 * 1024)
        p.send_raw(b"{" + big.encode() + b"\n")  # 50 MiB of garbage
        err = p.recv(timeout=60)
        assert err["error"]["code"] == -32700 and err["id"] is None
        resp = p.request("tools/call", {"name": "echo", "arguments": {"text": big}}, timeout=60)
        assert len(resp["result"]["content"][0]["text"]) == len(big)


def test_oversized_line_is_refused_with_the_limit_named_and_service_goes_on():
    with StdioPeer.spawn(ECHO, env={"ECHO_MAX_MESSAGE": str(1024 * 1024)}) as p:
        p.initialize("2025-11-25")
        p.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "y" * (2 * 1024 * 1024)}},
            }
        )
        err = p.recv(timeout=30)
        assert err["error"]["code"] == -32600 and "1048576" in err["error"]["message"]
        assert p.request("ping")["result"] == {}


def test_stray_stdout_goes_to_stderr():
    with StdioPeer.spawn(ECHO) as p:
        p.initialize("2025-11-25")
        resp = p.request("tools/call", {"name": "noisy", "arguments": {"text": "ok"}})
        assert resp["result"]["content"][0]["text"] == "ok"
        assert p.request("ping")["result"] == {}
        p.close()
        err = p.stderr()
        for s in ("this print must not reach", "neither must this", "nor a raw write", "child stdout"):
            assert s in err


def test_batch_with_2025_03_26_is_answered_as_a_batch():
    with StdioPeer.spawn(ECHO) as p:
        p.initialize("2025-03-26")
        p.send(
            [
                {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {
                    "jsonrpc": "2.0",
                    "id": "b",
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hi"}},
                },
                {"jsonrpc": "2.0", "method": "notifications/whatever"},
            ]
        )
        batch = p.recv()
        assert isinstance(batch, list) and {m["id"] for m in batch} == {"a", "b"}
