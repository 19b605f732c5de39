"""A legacy session's POST whose request the client cancels (``notifications/cancelled`` on
another POST) ends at once, without an answer (spec basic/utilities/cancellation: no response
to a cancelled request): an SSE response closes with no JSON-RPC message, a JSON-only client
gets 204 No Content (a response it cannot take as an answer). Before, the POST stayed open
until the client gave up. Against a real uvicorn on 127.0.0.1, driven with httpx."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from mcpio import Context, Server
from mcpio._protocol._http import SSEParser
from tests.http.conftest import ACCEPT_BOTH, initialize, messages, rpc, session_headers
from tests.support.http import ServerThread

ACCEPT = {"both": ACCEPT_BOTH, "json": "application/json", "sse": "text/event-stream"}


class Blocking:
    """A server whose tool ``block`` waits until it is cancelled (threading events: the server
    runs on a loop of its own)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.server = Server("cancelled-post")

        @self.server.tool
        async def block(note: bool, ctx: Context) -> str:
            """Wait until cancelled (``note``: after sending a log message on the request's stream)."""
            if note:
                await ctx.info("waiting")
            self.started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            return "never"


@pytest.fixture
def blocking() -> Iterator[tuple[Blocking, ServerThread]]:
    b = Blocking()
    with ServerThread(b.server.http_app("/mcp")) as srv:
        yield b, srv


@pytest.mark.parametrize("note", [False, True], ids=["silent", "after-a-log-message"])
@pytest.mark.parametrize("accept", ["both", "json", "sse"])
def test_a_cancelled_requests_post_ends_at_once_without_an_answer(
    blocking: tuple[Blocking, ServerThread], accept: str, note: bool
) -> None:
    b, srv = blocking
    with httpx.Client(timeout=10) as http:
        sid = initialize(http, srv.url)
    headers = {**session_headers(sid), "accept": ACCEPT[accept]}

    async def go() -> None:
        async with httpx.AsyncClient(timeout=60) as client:  # the client would wait this long
            call = asyncio.create_task(
                client.post(
                    srv.url, json=rpc(7, "tools/call", {"name": "block", "arguments": {"note": note}}), headers=headers
                )
            )
            assert await asyncio.to_thread(b.started.wait, 10)  # the call runs on the server
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            r = await client.post(srv.url, json=cancel, headers=session_headers(sid))
            assert r.status_code == 202
            async with asyncio.timeout(5):  # promptly: not at the client's timeout
                response = await call
            if accept == "json":  # a JSON-only client: nothing to answer with (the log is not one)
                assert response.status_code == 204 and response.content == b""
            else:  # the stream closes with what was sent on it, and no answer
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                sent = messages(SSEParser().feed(response.content))
                assert [m.get("method") for m in sent] == (["notifications/message"] if note else [])
            assert await asyncio.to_thread(b.cancelled.wait, 10)  # and the tool was cancelled
            # The session goes on: the same id may be used again, and is answered.
            r = await client.post(srv.url, json=rpc(7, "ping"), headers=session_headers(sid))
            assert r.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}

    asyncio.run(go())
