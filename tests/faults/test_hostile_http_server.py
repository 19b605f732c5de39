"""Issue 12, break 5: the mcpio client against a hostile HTTP server process on 127.0.0.1.

An SSE event or a JSON body over the client's ``max_message_size`` fails the call with a
clear error after reading at most about that much (tracemalloc peak bounded); a server that
trickles bytes after 16 MiB without a newline cannot defeat ``timeout``; the SSE parser looks
at each byte once however the stream is chunked (a count, not seconds).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator

import pytest

from mcpio import Client
from mcpio._errors import MCPError, RequestTimeout
from mcpio._protocol._http import SSEParser, SSETooLarge
from mcpio._transports._http_client import HTTPClientTransport
from tests.client.support import arun
from tests.faults.support import ROOT, MiB
from tests.support.http import free_port, wait_port

HOSTILE = ROOT / "tests" / "faults" / "hostile_http_server.py"


@contextlib.contextmanager
def hostile(mode: str, mib: int = 64) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HOSTILE), "--port", str(port), "--mode", mode, "--mib", str(mib)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(ROOT),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def call_with_cap(url: str, cap: int, timeout: float = 60) -> tuple[BaseException, int]:
    """Call a tool through a client capped at ``cap`` bytes; (the error, tracemalloc peak)."""

    async def go() -> BaseException:
        transport = HTTPClientTransport(url, max_message_size=cap)
        async with Client(transport=transport, era="legacy", protocol_version="2025-11-25", timeout=timeout) as c:
            with pytest.raises(MCPError) as failed:
                await c.call_tool("anything", {})
            return failed.value

    tracemalloc.start()
    try:
        err = arun(go(), timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return err, peak


@pytest.mark.parametrize("mode", ["sse-flood", "json-flood", "json-declared"])
def test_an_oversized_answer_fails_the_call_with_bounded_memory(mode):
    with hostile(mode) as url:
        err, peak = call_with_cap(url, 1 * MiB)
    assert "max_message_size" in str(err) and "1048576" in str(err), err
    assert not isinstance(err, RequestTimeout)
    assert peak < 8 * MiB, f"{mode}: tracemalloc peak {peak} bytes for a 64 MiB answer and a 1 MiB cap"


def test_a_trickling_server_cannot_defeat_the_timeout():
    # 16 MiB without a newline (under the default 256 MiB cap), then one byte every 50 ms.
    async def go() -> None:
        async with Client(url, era="legacy", protocol_version="2025-11-25", timeout=2) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("anything", {})

    with hostile("trickle", mib=16) as url:
        arun(go(), timeout=60)


def test_the_sse_parser_scans_each_byte_once_however_it_is_chunked():
    total = 0
    for size in (1, 7, 4096):
        p = SSEParser(max_event_size=1 << 30)
        stream = b"data: " + b"x" * (1 << 20) + b"\n\n" + b": c\n" * 1000 + b"data: y\r\n\r\n"
        events = []
        for i in range(0, len(stream), size):
            events += p.feed(stream[i : i + size])
        assert [len(e.data) for e in events] == [1 << 20, 1]
        assert p.scanned <= len(stream)  # quadratic rescans would look at ~n²/2size bytes
        total += p.scanned
    assert total <= 3 * len(stream)
    p = SSEParser(max_event_size=1000)
    with pytest.raises(SSETooLarge):
        for _ in range(100):
            p.feed(b"y" * 100)  # one line, never ended
    p = SSEParser(max_event_size=1000)
    with pytest.raises(SSETooLarge):
        p.feed(b"data: " + b"z" * 600 + b"\ndata: " + b"z" * 600 + b"\n")  # one event of many lines
