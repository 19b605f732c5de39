"""Cancelling the task that runs ``Server.serve_http`` (how an application embedding mcpio stops
it) stops the server cleanly on a real uvicorn on 127.0.0.1: a request in flight is cancelled,
the lifespan (the user's and the app's own) is exited before the cancellation completes, no task
of the server is left behind, and uvicorn logs no "Exception in 'lifespan' protocol"."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx

from mcpio import Server
from tests.support.http import free_port

from .test_http_cost import MODERN_META, add_wait_forever


def test_cancelling_serve_http_stops_the_server_and_exits_the_lifespan(caplog: Any) -> None:
    events: list[str] = []
    started, cancelled = asyncio.Event(), asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        events.append("lifespan start")
        try:
            yield {}
        finally:
            events.append("lifespan exit")

    server = Server("cancel", lifespan=lifespan)
    add_wait_forever(server, started, cancelled)

    async def go() -> None:
        port = free_port()
        serving = asyncio.create_task(server.serve_http("127.0.0.1", port))
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "wait_forever", "arguments": {}, "_meta": MODERN_META},
        }
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "wait_forever",
        }
        async with httpx.AsyncClient(timeout=30) as client:
            async with asyncio.timeout(20):
                while True:  # until uvicorn listens (a refused connection means not yet)
                    try:
                        r = await client.get(f"http://127.0.0.1:{port}/healthz")
                        break
                    except httpx.ConnectError:
                        await asyncio.sleep(0.02)
            assert r.status_code == 200
            call = asyncio.create_task(client.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers))
            await asyncio.wait_for(started.wait(), 10)
            serving.cancel()
            async with asyncio.timeout(10):  # a bound against hanging, not a timing check
                try:
                    await serving
                except asyncio.CancelledError:
                    events.append("serve_http cancelled")
            assert cancelled.is_set()  # the request in flight was cancelled
            with contextlib.suppress(httpx.HTTPError):
                await asyncio.wait_for(call, 10)
        left = [t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert left == [], left

    with caplog.at_level(logging.ERROR):
        asyncio.run(go())
    assert events == ["lifespan start", "lifespan exit", "serve_http cancelled"], events
    assert not [r for r in caplog.records if "lifespan" in r.getMessage()], caplog.text
