"""A gateway's start (``mcpio run mcp.json``): it answers ``initialize`` while its upstreams are
still starting, and holds every other request until each upstream's first start has ended, so
the first ``tools/list`` lists every upstream's tools (a host that ignores ``list_changed`` misses
none); the mirror that lands after ``initialize`` is announced with ``list_changed`` too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

from mcpio import Client
from tests.client.support import arun, within

HERE = Path(__file__).parent


def test_a_gateway_answers_initialize_before_a_slow_upstream_and_then_lists_its_tools(tmp_path):
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "slow": {"command": sys.executable, "args": [str(HERE / "slow_upstream.py"), str(gate)]},
                    "fast": {"command": sys.executable, "args": [str(HERE / "upstream.py")]},
                }
            }
        )
    )
    changed = asyncio.Event()

    def on_notification(method: str, params: object) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    def release() -> None:  # blocks until the upstream has opened its end
        with open(gate, "w", encoding="utf-8") as w:
            w.write("go\n")

    async def go() -> None:
        argv = [sys.executable, "-m", "mcpio", "run", str(config)]
        async with Client(argv, era="legacy", timeout=60, on_notification=on_notification) as c:
            # Answered while the slow upstream cannot have started (it waits for the line below):
            # every kind an upstream may bring is announced.
            assert c.server_capabilities.get("tools") == {"listChanged": True}
            listing = asyncio.ensure_future(c.list_tools())  # held until every upstream has started
            await asyncio.to_thread(release)
            names = {t.name for t in await within(listing, 60)}
            assert {"slow__hello", "fast__pid"} <= names
            assert (await c.call_tool("slow__hello", {})).text == "hello from the slow upstream"
            await within(changed.wait(), 30)  # the mirror landed after initialize: announced (legacy: pushed)

    try:
        arun(go(), timeout=120)
    finally:
        with contextlib.suppress(OSError):  # a gateway that never answered: free the upstream's open()
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
