"""A gateway's start (``mcpio run mcp.json``): it answers ``initialize`` while its upstreams are
still starting, and holds every other request until each upstream's first start has ended, so
the first ``tools/list`` lists every upstream's tools (a host that ignores ``list_changed`` misses
none); the mirror that lands after ``initialize`` is announced with ``list_changed`` too. A
server a gateway is mounted in does the same."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

from mcpio import Client, Server
from tests.client.support import arun, within

HERE = Path(__file__).parent


def _slow_and_fast(tmp_path: Path) -> tuple[Path, Path]:
    """A FIFO that holds the start of upstream "slow" until a line is written to it, and an
    ``mcpServers`` file of "slow" and "fast"."""
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
    return gate, config


def _release(gate: Path) -> None:
    """Let the slow upstream start (blocks until it has opened its end)."""
    with open(gate, "w", encoding="utf-8") as w:
        w.write("go\n")


def test_a_gateway_answers_initialize_before_a_slow_upstream_and_then_lists_its_tools(tmp_path):
    gate, config = _slow_and_fast(tmp_path)
    changed = asyncio.Event()

    def on_notification(method: str, params: object) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    async def go() -> None:
        argv = [sys.executable, "-m", "mcpio", "run", str(config)]
        async with Client(argv, era="legacy", timeout=60, on_notification=on_notification) as c:
            # Answered while the slow upstream cannot have started (it waits for the line below):
            # every kind an upstream may bring is announced.
            assert c.server_capabilities.get("tools") == {"listChanged": True}
            listing = asyncio.ensure_future(c.list_tools())  # held until every upstream has started
            await asyncio.to_thread(_release, gate)
            names = {t.name for t in await within(listing, 60)}
            assert {"slow__hello", "fast__pid"} <= names
            assert (await c.call_tool("slow__hello", {})).text == "hello from the slow upstream"
            await within(changed.wait(), 30)  # the mirror landed after initialize: announced (legacy: pushed)

    try:
        arun(go(), timeout=120)
    finally:
        with contextlib.suppress(OSError):  # a gateway that never answered: free the upstream's open()
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))


def test_a_gateway_announces_mcp_apps_before_its_upstreams_have_started(tmp_path):
    """A 2026-07-28 host connecting to ``mcpio run mcp.json`` while its upstream (an MCP App,
    ``examples/apps_calculator.py``) is still starting: ``server/discover``, answered at once,
    announces the MCP Apps extension, as it announces every list kind an upstream may bring; the
    app's tools are listed once the upstream has started."""
    from mcpio._client._apps import APPS_HOST

    gate = tmp_path / "gate"
    os.mkfifo(gate)
    app = HERE.parents[1] / "examples" / "apps_calculator.py"
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {"command": sys.executable, "args": [str(HERE / "slow_upstream.py"), str(gate), str(app)]}
                }
            }
        )
    )

    async def go() -> None:
        argv = [sys.executable, "-m", "mcpio", "run", str(config)]
        async with Client(argv, era="modern", timeout=60, extensions=APPS_HOST) as host:
            # Answered while the upstream cannot have started (it waits for _release):
            assert "io.modelcontextprotocol/ui" in (host.server_capabilities.extensions or {})
            listing = asyncio.ensure_future(host.list_tools())
            await asyncio.to_thread(_release, gate)
            assert {"calc__add", "calc__double"} <= {t.name for t in await within(listing, 60)}

    try:
        arun(go(), timeout=120)
    finally:
        with contextlib.suppress(OSError):  # a gateway that never answered: free the upstream's open()
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))


def test_a_server_a_gateway_is_mounted_in_answers_at_once_and_holds_the_rest_as_the_gateway_does(tmp_path):
    """``outer.mount(Server.from_config(path))``: the outer server answers ``initialize`` and
    ``ping`` while an upstream is still starting, and its first ``tools/list`` waits for every
    upstream's first start, as the gateway served on its own does. Its lifespan waited for the
    upstreams' start (``GatewayServer.running``), so ``initialize`` waited for the slowest."""
    gate, config = _slow_and_fast(tmp_path)
    outer = Server("outer")
    outer.mount(Server.from_config(str(config)), namespace="gw")

    async def go() -> None:
        client = Client(outer, timeout=60)
        # Answered while the slow upstream cannot have started (it waits for _release):
        await within(client.__aenter__(), 30)
        try:
            assert client.server_capabilities.get("tools") == {"listChanged": True}
            await within(client.ping(), 30)
            listing = asyncio.ensure_future(client.list_tools())  # held until every upstream has started
            await asyncio.to_thread(_release, gate)
            assert {"gw__slow__hello", "gw__fast__pid"} <= {t.name for t in await within(listing, 60)}
        finally:
            await client.aclose()

    try:
        arun(go(), timeout=120)
    finally:
        with contextlib.suppress(OSError):  # a server that never answered: free the upstream's open()
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
