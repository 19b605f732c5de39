"""Streamable HTTP on the session engine: response streams, the mapping onto sessions, ASGI helpers.

* **Legacy era** (≤ 2025-11-25): one Session per ``Mcp-Session-Id``, on a
  :class:`~._http_legacy.LegacyTransport`: ``receive()`` yields the messages POSTed under that
  id, in order; ``send()`` puts each outgoing message on exactly one :class:`Stream` (spec: no
  broadcast): a response on its request's POST stream; progress, logs and requests to the client
  on the stream of the request whose handler sent it (``_base.serving``), else on the GET stream.
* **Modern era** (2026-07-28): one short-lived Session per POST, on a
  :class:`~._http_request.RequestTransport` whose only stream is that POST's response: stateless
  by construction (no routing, no shared state); closing the response ends the session, which
  cancels the request (spec 2026-07-28). ``subscriptions/listen`` is such a session kept open.

A :class:`Stream` decides lazily how to answer (``pump``): a plain JSON body when the first
thing to send is the final response; an SSE stream (priming event, ``retry``, keep-alive
comments, ``X-Accel-Buffering: no``) when a notification or request comes first or after
``sse_after`` seconds of silence. Legacy SSE events get ids and go through the
:class:`~._http_events.EventStore` as written, so a client resumes with ``GET`` +
``Last-Event-ID`` (:meth:`~._http_legacy.LegacyTransport.close_stream`, SEP-1699); a disconnect
is not a cancellation there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec

from .. import _jsonrpc as rpc
from .._protocol import _http as h
from .._state._base import StateUnavailable
from . import _http_deadlines as deadlines
from ._http_events import EventStore

log = logging.getLogger("mcpio.http")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class _Envelope(msgspec.Struct):
    id: Any = None
    method: str | None = None


class TooLarge(Exception):
    """A request body over the size limit (413)."""


class Disconnected(Exception):
    """The client went away while its request was read."""


_peek_one = msgspec.json.Decoder(_Envelope).decode
_peek_many = msgspec.json.Decoder(list[_Envelope]).decode


def peek(frame: bytes) -> list[_Envelope]:
    """The id and method of each message in a frame, without decoding the rest."""
    return _peek_many(frame) if frame[:1] == b"[" else [_peek_one(frame)]


class Stream:
    """One server→client stream: a POST's response (request-scoped) or the standalone GET
    stream. Messages wait in ``items`` while a writer is attached; a detached resumable stream
    keeps them in the event store only."""

    def __init__(
        self,
        stream_id: str,
        *,
        era: str,
        json_ok: bool = True,
        sse_ok: bool = True,
        store: EventStore | None = None,
        session_id: str = "",
        priming: bool = False,
        request_ids: set[Any] | None = None,
        on_done: Callable[[Stream], None] | None = None,
    ) -> None:
        self.id = stream_id
        self.era = era
        self.json_ok = json_ok
        self.sse_ok = sse_ok
        self.store = store  # None: not resumable
        self.session_id = session_id
        self.priming = priming
        self.request_ids = request_ids or set()
        self.items: deque[bytes] = deque()
        self._wake: asyncio.Event | None = None  # made when first waited on (``wake``)
        self.attached = True
        self.started = False  # the client has seen an event id of this stream
        self.finished = False  # the final response is queued or stored
        self.gone = False  # the client closed the connection
        self.detach_retry: int | None = None  # close_stream() asked to end the connection
        self.on_done = on_done  # called when done: finished with no response attached (its owner forgets it)
        self._released: asyncio.Event | None = None  # made when first waited on (``released``)
        self._watcher: asyncio.Task[None] | None = None
        self._timed_out = False
        self.wait_token = 0  # changes as each timed wait starts and ends (_http_deadlines)

    @property
    def wake(self) -> asyncio.Event:
        """Set when there is news for the response's writer; made on first use, so a POST
        answered before its response starts costs no Event. Setting it before a wait
        is never needed: :meth:`_wait` clears it and looks at the stream first."""
        event = self._wake
        if event is None:
            event = self._wake = asyncio.Event()
        return event

    @property
    def released(self) -> asyncio.Event:
        """Set while no HTTP response is attached (graceful shutdown waits on it); made on first
        use, so a stream nobody waits on costs no Event."""
        event = self._released
        if event is None:
            event = self._released = asyncio.Event()
            if not self.attached:
                event.set()
        return event

    def put_nowait(self, frame: bytes, final: bool) -> bool:
        """:meth:`put` when it needs no waiting — the stream is attached and its client is
        there: True; else False, nothing done (``put`` it)."""
        if not self.attached or self.gone:
            return False
        if final:
            self.finished = True
        self.items.append(frame)
        if self._wake is not None:  # else nobody waits yet (``wake``)
            self._wake.set()
        return True

    async def put(self, frame: bytes, final: bool) -> None:
        if self.put_nowait(frame, final):
            return
        if final:
            self.finished = True
        if self.store is not None and self.started:
            await self._store(frame)  # kept for Last-Event-ID (not if the store is unreachable)
        else:
            log.debug("dropping a message for closed stream %s", self.id)
        if final and not self.attached and self.on_done is not None:
            self.on_done(self)

    def disconnected(self) -> None:
        self.gone = True
        self.wake.set()

    answerless = False  # ended by end(): what it holds, if anything, is no answer

    def end(self) -> None:
        """Nothing more will come: the requests it answers get no answer (cancelled), so the
        response ends after what is queued, without one (:meth:`pump`)."""
        self.finished = self.answerless = True
        self.wake.set()
        if not self.attached and self.on_done is not None:
            self.on_done(self)

    def detach(self, retry_ms: int) -> None:
        """End the connection now (server-initiated polling); the stream itself goes on."""
        if self.store is not None and self.sse_ok:
            self.detach_retry = retry_ms
            self.wake.set()

    async def _wait(self, timeout: float | None) -> bool:
        """Wait for news; False on timeout."""
        self.wake.clear()
        if self.items or self.gone or self.detach_retry is not None:
            return True
        if timeout is None:
            await self.wake.wait()
            return True
        # A deadline that sets ``wake``: cheaper than asyncio.timeout() (no Timeout object, no
        # cancellation of the task) or a timer handle per wait, on a path every POST takes
        # (_http_deadlines). Changing the token ends this wait's deadline.
        self._timed_out = False
        self.wait_token += 1
        deadlines.start(self, timeout)
        try:
            await self.wake.wait()
        finally:
            self.wait_token += 1
        return not self._timed_out

    def _time_up(self) -> None:
        self._timed_out = True
        self.wake.set()

    async def pump(
        self,
        send: Send,
        headers: list[tuple[bytes, bytes]],
        receive: Receive | None,
        *,
        sse_after: float,
        keepalive: float,
        retry_ms: int,
        replay: list[tuple[str, bytes]] | None = None,
        on_gone: Callable[[], None] | None = None,
    ) -> None:
        """Answer one HTTP request from this stream until it ends (see the module docstring);
        ``replay``: stored events to send first (a resumption).

        With ``receive``, the client's hang-up is watched (``watch_disconnect``: ``on_gone``, else
        :meth:`disconnected`) from the moment it matters: as the response turns into an event
        stream, or before an unbounded wait (a client that accepts only JSON). Until then it goes
        unnoticed, and costs nothing: the JSON answer of a request that ends within ``sse_after``
        needs no watcher task (one task less per request); a client that left meanwhile is
        noticed when its stream would start (``sse_after``)."""
        try:
            if self.json_ok:
                if not self.sse_ok:
                    self._watching(receive, on_gone)  # nothing bounds the wait below
                while not (self.items or self.finished or self.gone or self.detach_retry is not None):
                    if not await self._wait(sse_after if self.sse_ok else None):
                        break  # silence: start streaming (keep-alives, priming)
                if self.gone:
                    return
                only_answer = self.finished and len(self.items) == 1 and not self.answerless
                if not self.sse_ok or (only_answer and self.detach_retry is None):
                    while not self.finished and not self.gone:
                        self.items.clear()  # a JSON-only client cannot receive these here
                        await self._wait(None)
                    if self.gone:
                        return
                    if self.answerless:  # no answer will come (cancelled): nothing to say
                        await plain(send, 204, b"", headers)
                        return
                    if not self.items:
                        return
                    frame = self.items.pop()
                    self.items.clear()
                    await send_json(send, frame, headers, self.era)
                    return
            self._watching(receive, on_gone)
            await send({"type": "http.response.start", "status": 200, "headers": headers + SSE_HEADERS})
            self.started = True
            retry_sent = False
            if self.priming and self.store is not None and not self.answerless:
                # (not on a stream ended without an answer: no event id to resume it from)
                eid = await self._store(b"")
                await send_part(send, h.sse_event(b"", id=eid, retry=retry_ms))
                retry_sent = True
            elif not self.items and not replay:
                await send_part(send, h.sse_comment("stream open"))  # flushes the headers through proxies
            for eid, frame in replay or ():
                await send_part(send, h.sse_event(frame, id=eid))
            while True:
                while self.items and not self.gone:
                    frame = self.items.popleft()
                    eid = await self._store(frame) if self.store is not None else None
                    await send_part(send, h.sse_event(frame, id=eid))
                if self.gone or (self.finished and not self.items):
                    break
                if self.detach_retry is not None:
                    if not retry_sent:
                        await send_part(send, b"retry: %d\n\n" % self.detach_retry)
                    break
                if not await self._wait(keepalive):
                    await send_part(send, h.sse_comment())
            if not self.gone:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                if self.finished and self.store is not None:
                    # Delivered whole and closed cleanly: resumption cannot need it any more.
                    discard = getattr(self.store, "discard_stream", None)  # optional for older stores
                    if discard is not None:
                        with contextlib.suppress(StateUnavailable):  # its keys expire on their own
                            await discard(self.session_id, self.id)
        finally:
            if self._watcher is not None:
                self._watcher.cancel()
                self._watcher = None
            self._release()

    def _watching(self, receive: Receive | None, on_gone: Callable[[], None] | None) -> None:
        """Start watching for the client's hang-up (once; see :meth:`pump`)."""
        if receive is not None and self._watcher is None:
            watch = watch_disconnect(receive, on_gone or self.disconnected)
            self._watcher = asyncio.get_running_loop().create_task(watch)

    async def _store(self, frame: bytes) -> str | None:
        """Record a frame for resumption and return its event id; with the store unreachable
        (Redis down) the frame goes out without an id: delivered now, not resumable."""
        assert self.store is not None
        try:
            return await self.store.store(self.session_id, self.id, frame)
        except StateUnavailable as exc:
            log.warning("SSE event not stored, the stream cannot resume past it: %s", exc)
            return None

    def _release(self) -> None:
        """The HTTP response ended: what is still queued goes to the store (or is dropped)."""
        self.attached = False
        if self._released is not None:
            self._released.set()
        self.detach_retry = None
        if self.items:
            left = list(self.items)
            self.items.clear()
            if self.store is not None and self.started:
                store = self.store
                task = asyncio.get_running_loop().create_task(_store_all(store, self.session_id, self.id, left))
                _STORING.add(task)
                task.add_done_callback(_STORING.discard)
        if self.on_done is not None and (self.finished or (self.gone and not self.started)):
            self.on_done(self)

    def reattach(self, priming: bool = False) -> None:
        """A GET takes the stream over (SSE only; ``priming``: an event id first)."""
        self.attached, self.json_ok, self.priming = True, False, priming
        if self._released is not None:
            self._released.clear()
        self.gone = False
        self.items.clear()
        self.wake.clear()


SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


_STORING: set[asyncio.Task[None]] = set()


async def _store_all(store: EventStore, session_id: str, stream_id: str, frames: list[bytes]) -> None:
    try:
        for f in frames:
            await store.store(session_id, stream_id, f)
    except StateUnavailable as exc:
        log.warning("SSE events of stream %s lost for resumption: %s", stream_id, exc)


async def send_part(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


_JSON_TYPE = (b"content-type", b"application/json")


def json_response(frame: bytes, headers: list[tuple[bytes, bytes]], era: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ASGI messages of ``frame`` (one JSON-RPC message) as the whole JSON response:
    200, or the status the era gives its error code (a refused request's 4xx), with ``headers``
    added. A plain call: the app sends them itself."""
    status = 200
    if era in h.ERROR_STATUS_ERAS and b'"error"' in frame and frame[:1] == b"{":  # else 200 whatever it carries
        with contextlib.suppress(Exception):
            err = rpc.decode(frame).get("error")
            status = h.status_for_error(err.get("code") if isinstance(err, dict) else None, era)
    size = len(frame)
    length = _LENGTHS.get(size)
    if length is None:
        length = b"%d" % size
        if size < _MAX_LENGTH_KEPT:
            _LENGTHS[size] = length
    return (
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, _JSON_TYPE, (b"content-length", length)],
        },
        {"type": "http.response.body", "body": frame, "more_body": False},
    )


# Content-Length values as bytes, by length, made once each; bounded: only lengths below
# _MAX_LENGTH_KEPT are kept (at most that many).
_LENGTHS: dict[int, bytes] = {}
_MAX_LENGTH_KEPT = 4096


async def send_json(send: Send, frame: bytes, headers: list[tuple[bytes, bytes]], era: str) -> None:
    start, body = json_response(frame, headers, era)
    await send(start)
    await send(body)


# ---------------------------------------------------------------------------- ASGI helpers
def body_part(message: dict[str, Any], headers: Mapping[str, str], limit: int) -> bytes:
    """The body bytes ``message`` (an ASGI ``receive()`` of the request) carries: TooLarge when
    the bytes pass ``limit``, or when more follow (``more_body``) and ``Content-Length`` passes
    it (refused before they are read; a body that came whole is judged by its bytes);
    Disconnected when the client went first. A plain call: a small body comes whole in the first
    message, with no coroutine to read it; :func:`read_body` reads the rest."""
    if message["type"] == "http.disconnect":
        raise Disconnected()
    chunk: bytes = message.get("body", b"")
    if len(chunk) > limit:
        raise TooLarge()
    if message.get("more_body", False):
        declared = headers.get("content-length", "")
        # isascii: "²" (latin-1 0xB2) passes isdigit() but not int()
        if declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise TooLarge()
    return chunk


async def read_body(
    receive: Receive, headers: Mapping[str, str], limit: int, first: dict[str, Any] | None = None
) -> bytes:
    """The request's body (:func:`body_part`'s rules); ``first``: its first ``receive()``, when
    the caller has read it already."""
    message = await receive() if first is None else first
    chunks = [body_part(message, headers, limit)]
    size = len(chunks[0])
    while message.get("more_body", False):
        message = await receive()
        chunks.append(body_part(message, _NO_HEADERS, limit - size))  # the rest must fit in what is left
        size += len(chunks[-1])
    return b"".join(chunks)


_NO_HEADERS: dict[str, str] = {}


async def watch_disconnect(receive: Receive, on_gone: Callable[[], None]) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            on_gone()
            return


async def refuse(send: Send, refusal: h.Refusal) -> None:
    body = refusal.body()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in refusal.headers]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def plain(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    out = list(headers or [])
    out.append((b"content-length", str(len(body)).encode()))
    if body:
        out.append((b"content-type", b"text/plain; charset=utf-8"))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body, "more_body": False})
