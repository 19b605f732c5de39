"""One proxy hop on the wire, with real processes: ``mcpio run "python upstream.py"`` over stdio
(frames of any size, cut anywhere by the pipes, cross it whole and in order of their ids) and over
Streamable HTTP (calls from several connections reach the upstream together, not one by one)."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

from mcpio import Client
from tests.client.support import arun, within
from tests.gateway.test_cli_bridges import mcpio_run

HERE = Path(__file__).parent
COMMAND = shlex.join([sys.executable, str(HERE / "upstream.py")])
PROXY = [sys.executable, "-m", "mcpio", "run", COMMAND]


def test_frames_of_every_size_cross_a_stdio_proxy_whole():
    # Texts near the servers' 1 MiB result cap (many reads of the pipes each way), and 40 calls at
    # once of sizes around the pipes' read size, so answers share reads and are cut at every place.
    big = "añ€𝄞" * 100_000  # 1 MB of UTF-8, characters of 1 to 4 bytes

    async def go():
        async with Client(PROXY, timeout=60) as c:
            assert (await c.call_tool("echo", {"text": big})).text == big
            assert (await c.call_tool("echo", {"text": "x" * 1_000_000})).text == "x" * 1_000_000
            texts = [str(i) * (60_000 + 997 * i) for i in range(40)]
            got = await asyncio.gather(*(c.call_tool("echo", {"text": t}) for t in texts))
            assert [r.text for r in got] == texts

    arun(go(), timeout=120)


def test_calls_through_the_http_bridge_reach_the_upstream_together(tmp_path):
    # `block` answers only once `unblock` has run upstream: through a bridge that forwarded one
    # call at a time, the second call would wait behind the first for ever.
    with mcpio_run(COMMAND, log=tmp_path / "stderr.txt") as url:

        async def go():
            async with Client(url, timeout=60) as first, Client(url, timeout=60) as second:
                progressed = asyncio.Event()
                blocked = asyncio.ensure_future(first.call_tool("block", {}, on_progress=lambda *_: progressed.set()))
                await within(progressed.wait(), 30)  # the upstream is running it
                assert (await within(second.call_tool("unblock", {}), 30)).text == "ok"
                assert (await within(blocked, 30)).text == "released"

        arun(go(), timeout=90)
