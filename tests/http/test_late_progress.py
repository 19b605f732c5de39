"""Progress of a request that is over is never sent (spec basic/utilities/progress: progress
notifications reference only operations in progress and stop after completion). A legacy
session's handler that runs on after its request was cancelled — or after it was answered —
(here a shielded continuation) reports progress and logs a message: the progress is dropped,
the log message goes to the session's standalone GET stream (logging belongs to the session in
the legacy era, and carries no request id). Before, the late progress went to the GET stream
too, naming a token the client had forgotten. Against a real uvicorn on 127.0.0.1, driven with
httpx."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpio import Context, Server
from mcpio._protocol._http import SSEParser
from tests.http.conftest import initialize, rpc, session_headers
from tests.support.http import ServerThread


class Lingering:
    """A server whose tool ``linger`` reports progress 1, then leaves the rest of its work (which
    waits for ``release``, then reports progress 2 and logs "late") running on its own: shielded
    from a cancellation (``answer`` False), or after answering at once (``answer`` True)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()
        self.server = Server("late-progress")
        self._kept: set[asyncio.Future[Any]] = set()

        @self.server.tool
        async def linger(answer: bool, ctx: Context) -> str:
            """Report progress, then finish in a continuation that outlives the request."""
            await ctx.report_progress(1, 2, "started")

            async def rest() -> str:
                await asyncio.to_thread(self.release.wait, 30)
                await ctx.report_progress(2, 2, "late")
                await ctx.info("late")
                self.finished.set()
                return "done"

            work = asyncio.ensure_future(rest())
            self._kept.add(work)
            if answer:
                return "answered before the work ended"
            return await asyncio.shield(work)


@pytest.fixture
def lingering() -> Iterator[tuple[Lingering, ServerThread]]:
    s = Lingering()
    with ServerThread(s.server.http_app("/mcp")) as srv:
        yield s, srv
    s.release.set()


async def _next_message(lines: Any, parser: SSEParser) -> dict[str, Any]:
    """The next JSON-RPC message on an SSE response (priming events and comments skipped)."""
    while True:
        chunk = await anext(lines)
        for event in parser.feed(chunk):
            if event.data:
                return json.loads(event.data)  # type: ignore[no-any-return]


@pytest.mark.parametrize("ending", ["cancelled", "answered"])
def test_progress_after_the_request_is_over_is_dropped_and_the_log_goes_to_the_get_stream(
    lingering: tuple[Lingering, ServerThread], ending: str
) -> None:
    s, srv = lingering
    with httpx.Client(timeout=10) as http:
        sid = initialize(http, srv.url)
    headers = session_headers(sid)
    call = rpc(
        7,
        "tools/call",
        {"name": "linger", "arguments": {"answer": ending == "answered"}, "_meta": {"progressToken": "t"}},
    )

    async def go() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            get_headers = {**headers, "accept": "text/event-stream"}
            async with client.stream("GET", srv.url, headers=get_headers) as get:  # the GET stream is open
                assert get.status_code == 200
                async with client.stream("POST", srv.url, json=call, headers=headers) as post:
                    assert post.headers["content-type"].startswith("text/event-stream")
                    lines, parser = post.aiter_raw(), SSEParser()
                    first = await _next_message(lines, parser)
                    assert first["method"] == "notifications/progress"
                    assert first["params"]["progress"] == 1
                    if ending == "cancelled":
                        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                        r = await client.post(srv.url, json=cancel, headers=headers)
                        assert r.status_code == 202
                    else:
                        answer = await _next_message(lines, parser)
                        assert answer["id"] == 7 and "result" in answer
                    rest = b"".join([chunk async for chunk in lines])  # the POST's stream ends
                    assert [e for e in parser.feed(rest) if e.data] == []  # and no answer after a cancel
                s.release.set()  # the work goes on now that its request is over
                assert await asyncio.to_thread(s.finished.wait, 10)
                # What it sent after: the log message, on the GET stream; no progress before it.
                async with asyncio.timeout(10):
                    late = await _next_message(get.aiter_raw(), SSEParser())
                assert late["method"] == "notifications/message", late
                assert late["params"]["data"] == "late"

    asyncio.run(go())
