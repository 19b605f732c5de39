"""A burst of requests through the stdio bridge ``mcpio run URL``: a host pipelining hundreds of
calls at once, the bridge in front of a real mcpio HTTP server in its own process
(tests/servers/burst_server.py, whose tool returns only once 90 calls of it run at once).

Handed the whole burst at once, httpx's pool kept the bridge's event loop busy for seconds
between opening connections and writing requests on them (every step of the pool costs time in
proportion to the requests queued in it; the full benchmark's 2,000 calls went past the server's
10 s header timeout, and the server closed those connections: the POSTs failed with
``ReadError``), and it closed each connection as it went idle while more than 20 were open. Now
at most 90 requests are POSTed at once, on at most 100 kept-alive connections; the rest of a
burst waits in the bridge."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.client.support import SERVERS
from tests.support.http import script_http
from tests.support.pipes import LineReader, init_lines

BURST = 1000
POOL = 100  # the bridge's connections at most (_http_client.MAX_CONNECTIONS)


def call(id_: object, name: str, **arguments: int) -> bytes:
    msg = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.dumps(msg).encode() + b"\n"


def test_a_burst_through_the_bridge_reuses_its_connections() -> None:
    with script_http(SERVERS / "burst_server.py") as (url, _):  # its add notes each connection's client port
        bridge = subprocess.Popen(
            [sys.executable, "-m", "mcpio", "run", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert bridge.stdin is not None and bridge.stdout is not None
        try:
            out = LineReader(bridge.stdout.fileno())
            bridge.stdin.write(init_lines())
            bridge.stdin.flush()
            assert "result" in out.message(60)
            bridge.stdin.write(b"".join(call(i, "add", a=i, b=2) for i in range(BURST)))
            bridge.stdin.flush()
            answers = [out.message(60) for _ in range(BURST)]
            bridge.stdin.write(call("connections", "connections"))
            bridge.stdin.flush()
            connections = out.message(60)["result"]["structuredContent"]["result"]
        finally:
            bridge.stdin.close()
            bridge.wait(20)
            bridge.stdout.close()
    failed = [a for a in answers if "error" in a]
    assert not failed, f"{len(failed)} of {BURST} calls failed, the first: {failed[0]}"
    assert sorted(a["id"] for a in answers) == list(range(BURST))
    assert all(a["result"]["structuredContent"]["result"] == a["id"] + 2 for a in answers)
    # kept alive and reused: a new connection for nearly every request was the bug
    assert connections <= POOL, connections
