"""A legacy session's POST whose request the client cancels (``notifications/cancelled`` on
another POST) ends at once, without an answer (spec basic/utilities/cancellation: no response
to a cancelled request): an SSE response closes with no JSON-RPC message, a JSON-only client
gets 204 No Content (a response it cannot take as an answer). Before, the POST stayed open
until the client gave up. Also when the cancellation comes in the request's own 2025-03-26
batch, and when the handler's messages cross the cancellation in one loop turn (the response
then holds messages that are no answer before it started). Against a real uvicorn on
127.0.0.1, driven with httpx."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

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


@pytest.mark.parametrize("accept", ["both", "json"])
def test_a_batch_carrying_a_request_and_its_cancellation_is_answered_with_nothing_and_never_runs_it(
    blocking: tuple[Blocking, ServerThread], accept: str
) -> None:
    """2025-03-26 takes batches: a request and its cancellation in one POST. The session reads
    both in one turn, so the request ends before its handler's first step (it never runs) and the
    POST's response before it started: an SSE stream with no message, or 204 for a JSON-only client."""
    b, srv = blocking
    version = "2025-03-26"
    with httpx.Client(timeout=10) as http:
        sid = initialize(http, srv.url, version)
        batch = [
            rpc(7, "tools/call", {"name": "block", "arguments": {"note": True}}),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
        ]
        response = http.post(srv.url, json=batch, headers={**session_headers(sid, version), "accept": ACCEPT[accept]})
        if accept == "json":
            assert response.status_code == 204 and response.content == b""
        else:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert messages(SSEParser().feed(response.content)) == []
        assert not b.started.is_set()  # its first step would have come before the response was written
        r = http.post(srv.url, json=rpc(7, "ping"), headers=session_headers(sid, version))
        assert r.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


class Crossing:
    """A server whose tool ``hold`` waits, silent, until the client's ``notifications/cancelled``
    reaches the app, then sends ``notes`` log messages on its request's stream in the loop turn
    in which the session engine takes that cancellation (before the POST's response has looked
    at its stream again): its messages and the end of its request cross.

    The crossing is made, not hoped for: a plain ASGI wrapper around the app wakes the tool as the
    app reads the cancellation's body, and the app queues that body for the session with no wait
    in between; the tool's wake-up comes first in the next turn (it logs), the session's read of
    the cancellation second (the stream ends), the response's writer third."""

    def __init__(self, notes: int) -> None:
        self.started = threading.Event()
        self.gate: asyncio.Event | None = None  # made on the server's loop, by the tool
        self.server = Server("crossing")
        self.app = self.server.http_app("/mcp", sse_after=60)  # never on a timer: only news starts SSE

        @self.server.tool
        async def hold(ctx: Context) -> str:
            """Wait for the cancellation, then log ``notes`` messages and wait to be cancelled."""
            self.gate = asyncio.Event()
            self.started.set()
            await self.gate.wait()
            for i in range(notes):
                await ctx.info(f"note {i}")
            await asyncio.Event().wait()
            return "never"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def reading() -> Any:
            message = await receive()
            if b"notifications/cancelled" in message.get("body", b"") and self.gate is not None:
                self.gate.set()  # the tool runs next turn, ahead of the session's read of this body
            return message

        await self.app(scope, reading if scope["type"] == "http" else receive, send)


@pytest.mark.parametrize("notes", [1, 2])
@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
def test_messages_crossing_the_cancellation_go_out_on_an_sse_stream_with_no_priming_event(
    version: str, notes: int
) -> None:
    """Both turns at once: the response has not started when the request ends, holding messages
    that are no answer. It is an SSE stream carrying them — never a message taken for the answer
    (a single one as the whole JSON body) nor a 204 that loses them — and, in 2025-11-25, with no
    priming event: a stream closed after one tells the client to resume it for the answer (SEP-1699),
    and none will come."""
    crossing = Crossing(notes)
    with ServerThread(crossing) as srv:
        with httpx.Client(timeout=10) as http:
            sid = initialize(http, srv.url, version)
        headers = session_headers(sid, version)

        async def go() -> None:
            async with httpx.AsyncClient(timeout=60) as client:
                call = asyncio.create_task(
                    client.post(srv.url, json=rpc(7, "tools/call", {"name": "hold", "arguments": {}}), headers=headers)
                )
                assert await asyncio.to_thread(crossing.started.wait, 10)
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                r = await client.post(srv.url, json=cancel, headers=headers)
                assert r.status_code == 202
                async with asyncio.timeout(10):
                    response = await call
                assert response.status_code == 200, response.status_code
                assert response.headers["content-type"].startswith("text/event-stream")
                events = SSEParser().feed(response.content)
                assert all(e.data for e in events), [e.data for e in events]  # no priming event
                sent = messages(events)
                assert [m["params"]["data"] for m in sent] == [f"note {i}" for i in range(notes)]

        asyncio.run(go())
