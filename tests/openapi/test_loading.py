"""A document read from a URL in a coroutine: ``await Server.from_openapi_async(URL)`` downloads it
with the running event loop free (a ticker task on it keeps ticking), and ``Server.from_openapi(URL)``
there refuses at once, naming the async variant, instead of stalling the loop for the download."""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mcpio import Server
from tests.openapi.test_requests import ANY
from tests.support.http import ServerThread

PIECES = 8
DOC = json.dumps(
    {
        "openapi": "3.1.0",
        "info": {"title": "Slow", "version": "1"},
        "paths": {f"/op{i}": {"get": {"operationId": f"op{i}", "responses": ANY}} for i in range(40)},
    }
).encode()


class TickGated:
    """An API whose document comes in ``PIECES`` pieces, each only once the client's event loop
    has ticked again (the ticker puts each tick in ``ticks``): it arrives only while that loop runs."""

    def __init__(self) -> None:
        self.ticks: queue.Queue[int] = queue.Queue()
        self.requests = 0
        self.app = Starlette(routes=[Route("/openapi.json", self.document)])

    async def document(self, request: Request) -> StreamingResponse:
        self.requests += 1
        size = -(-len(DOC) // PIECES)

        async def body() -> Any:
            for start in range(0, len(DOC), size):
                await asyncio.to_thread(self.ticks.get, True, 5)  # queue.Empty ends the answer: no tick came
                yield DOC[start : start + size]

        return StreamingResponse(body(), media_type="application/json")


async def ticker(api: TickGated, counted: list[int], period: float = 0.02) -> None:
    while True:
        await asyncio.sleep(period)
        counted.append(len(counted))
        api.ticks.put(len(counted))


def test_from_openapi_async_downloads_while_the_loop_keeps_running():
    """``Server.from_openapi(URL)`` in a coroutine stalled the loop for the whole download (a
    thread's ``.result()`` awaited synchronously): here the document comes only as the loop ticks,
    so a stalled loop never gets it. The async variant gets it, the ticker ticking all along; and it
    needs no worker of the loop's default executor, which the application may hold whole."""
    api = TickGated()

    async def main() -> tuple[Server, int, int]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))
        held = asyncio.Event()
        holder = loop.run_in_executor(None, lambda: asyncio.run_coroutine_threadsafe(held.wait(), loop).result())
        counted: list[int] = []
        ticking = asyncio.create_task(ticker(api, counted))
        try:
            server = await Server.from_openapi_async(f"{srv.base}/openapi.json", base_url="http://x", timeout=20)
            during = len(counted)
        finally:
            ticking.cancel()
            held.set()
            await holder
        return server, during, api.requests

    with ServerThread(api.app) as srv:
        server, ticks, requests = asyncio.run(main())
    assert requests == 1 and len(server.registry.tools) == 40 and server.name == "Slow"
    assert ticks >= PIECES


def test_from_openapi_with_a_url_in_a_coroutine_refuses_at_once_naming_the_async_variant():
    """Called in a running loop, the sync constructor would block that loop until the document
    came; it now raises before any request, and a dict in a coroutine is still read as before."""
    api = TickGated()

    async def main() -> tuple[str, int, Server]:
        counted: list[int] = []
        ticking = asyncio.create_task(ticker(api, counted))
        try:
            with pytest.raises(RuntimeError) as refused:
                Server.from_openapi(f"{srv.base}/openapi.json", base_url="http://x", timeout=2)
        finally:
            ticking.cancel()
        return str(refused.value), api.requests, Server.from_openapi(json.loads(DOC), base_url="http://x")

    with ServerThread(api.app) as srv:
        message, requests, from_dict = asyncio.run(main())
    assert message == (
        "Server.from_openapi(URL) in a coroutine would block its event loop for the whole download; "
        "use await Server.from_openapi_async(URL, ...) there"
    )
    assert requests == 0 and len(from_dict.registry.tools) == 40


def test_doctor_reads_a_document_url():
    """``mcpio doctor --openapi URL`` reads the document from within its event loop: it must do so
    off that loop, not meet the refusal meant for ``Server.from_openapi(URL)`` in a coroutine."""

    async def document(request: Request) -> Response:
        return Response(DOC, media_type="application/json")

    with ServerThread(Starlette(routes=[Route("/openapi.json", document)])) as srv:
        proc = subprocess.run(
            [sys.executable, "-m", "mcpio", "doctor", "--openapi", f"{srv.base}/openapi.json", "--base-url", "http://x",
             "--json"],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["counts"]["tools"] == 40
