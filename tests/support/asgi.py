"""Drive an ASGI app in process, the way uvicorn does, and check what it sends.

:func:`call` runs one HTTP request through ``app(scope, receive, send)``: the body arrives in
the given chunks (or the client disconnects after ``disconnect_after`` of them); once the body
is read, ``receive()`` blocks until the response is complete or the client goes away, then
says ``http.disconnect`` (uvicorn's contract). The client goes away by itself when an event
stream has delivered ``max_writes`` writes (events or comments), or when the response is not complete
``patience`` seconds after the request was sent (a client giving up, not an assertion).

Every ASGI rule a real server enforces is checked as the app sends, and a breach fails at
once: ``http.response.start`` first and exactly once, then ``http.response.body`` messages,
nothing after the last one; a status uvicorn knows; header names that are HTTP tokens and
values without CR, LF or NUL (h11 refuses anything else, and uvicorn answers 500);
``content-length`` equal to the body. An app that returns without completing its response
to a client that is still there is also a breach (uvicorn answers 500 or cuts the
connection). What the app sent comes back as a :class:`Reply`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from mcpio._protocol._http import SSEParser

_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_KNOWN_STATUS = {s.value for s in HTTPStatus}


class Breach(AssertionError):
    """The app broke the ASGI contract or HTTP framing (what a real server would turn into a
    500 or a cut connection)."""


@dataclass
class Reply:
    status: int | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    complete: bool = False  # the last body message was sent
    client_left: bool = False  # the client disconnected (by choice or mid-body)
    events: list[Any] = field(default_factory=list)  # SSE events, when the answer is a stream
    writes: int = 0  # body messages received
    elapsed: float = 0.0

    def header(self, name: bytes) -> bytes | None:
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    @property
    def is_sse(self) -> bool:
        return (self.header(b"content-type") or b"").startswith(b"text/event-stream")


def scope_of(
    method: str, path: str, headers: Sequence[tuple[bytes, bytes]], *, query: bytes = b"", root_path: str = ""
) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("utf-8", "replace"),
        "query_string": query,
        "root_path": root_path,
        "headers": list(headers),
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def call(
    app: Any,
    scope: dict[str, Any],
    chunks: Sequence[bytes] = (b"",),
    *,
    disconnect_after: int | None = None,
    max_writes: int | None = 3,
    patience: float = 2.0,
    hang: float = 10.0,
) -> Reply:
    """Run one request through ``app``; see the module docstring. ``hang``: how long the app
    may take to return once the client is gone (a safety net; exceeding it is a breach)."""
    reply = Reply()
    left = asyncio.Event()  # the client disconnected
    done = asyncio.Event()  # the response is complete
    queue = list(chunks) or [b""]
    parser = SSEParser()
    sent = 0

    def leave() -> None:
        reply.client_left = True
        left.set()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if queue and not left.is_set():
            if disconnect_after is not None and sent >= disconnect_after:
                leave()
                return {"type": "http.disconnect"}
            chunk = queue.pop(0)
            sent += 1
            return {"type": "http.request", "body": chunk, "more_body": bool(queue)}
        waits = [asyncio.ensure_future(left.wait()), asyncio.ensure_future(done.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        await asyncio.sleep(0)  # a real transport yields here too
        if left.is_set():
            return  # uvicorn drops what is sent to a client that has gone
        kind = message.get("type")
        if reply.status is None:
            if kind != "http.response.start":
                raise Breach(f"expected http.response.start first, got {message!r}")
            status = message.get("status")
            if type(status) is not int or status not in _KNOWN_STATUS:
                raise Breach(f"bad status {status!r}")
            headers = list(message.get("headers") or [])
            for k, v in headers:
                if (
                    type(k) is not bytes
                    or type(v) is not bytes
                    or not _TOKEN.fullmatch(k)
                    or re.search(rb"[\r\n\0]", v)
                ):
                    raise Breach(f"a header h11 would refuse: {k!r}: {v!r}")
            reply.status, reply.headers = status, headers
            return
        if reply.complete:
            raise Breach(f"{kind} sent after the response was complete")
        if kind != "http.response.body":
            raise Breach(f"expected http.response.body, got {message!r}")
        data = message.get("body", b"")
        if type(data) is not bytes:
            raise Breach(f"body is {type(data).__name__}, not bytes")
        reply.body += data
        reply.writes += 1
        if reply.is_sse:
            reply.events += parser.feed(data)
            if max_writes is not None and reply.writes >= max_writes and message.get("more_body", False):
                leave()  # the client has seen enough: it closes the stream
        if not message.get("more_body", False):
            reply.complete = True
            declared = reply.header(b"content-length")
            if declared is not None and int(declared) != len(reply.body):
                raise Breach(f"content-length {declared!r} but {len(reply.body)} bytes of body")
            done.set()

    start = time.monotonic()
    task = asyncio.ensure_future(app(scope, receive, send))
    try:
        await asyncio.wait_for(asyncio.shield(task), patience)
    except TimeoutError:
        leave()  # the client gives up; the app must now end promptly
        try:
            await asyncio.wait_for(task, hang)
        except TimeoutError:
            raise Breach(
                f"the app did not return within {hang} s of the client leaving ({scope['method']} {scope['path']})"
            ) from None
    reply.elapsed = time.monotonic() - start
    if not reply.client_left:
        if reply.status is None:
            raise Breach("the app returned without starting a response (uvicorn answers 500)")
        if not reply.complete:
            raise Breach("the app returned without completing its response (uvicorn cuts the connection)")
    return reply
