"""Streamable HTTP on the session engine: response streams and the transports sessions run on.

How HTTP maps onto :class:`~mcpio._session.Session` (one engine for every transport):

* **Legacy era** (≤ 2025-11-25): one Session per ``Mcp-Session-Id``, on a
  :class:`LegacyTransport`. ``receive()`` yields the messages POSTed under that id, in order;
  ``send()`` routes each outgoing message to one :class:`Stream`: a response to the stream of
  the POST that carried its request (found by id); anything else — progress, logs, requests
  to the client — to the stream of the request whose handler sent it (``_base.serving``, set by
  the engine in each request's task), or else to the standalone GET stream. Each message goes
  on exactly one stream (spec: no broadcast).
* **Modern era** (2026-07-28): one short-lived Session per POST, on a
  :class:`~._http_request.RequestTransport` whose only stream is that POST's response. The era is stateless,
  so nothing may carry over between requests, and this makes it so by construction: no
  routing, no shared state, and closing the response ends the session, which cancels the
  request (spec 2026-07-28: closing the stream is cancellation). A per-request Session costs
  a few small objects and one task. ``subscriptions/listen`` is such a session that stays
  open; the server's list_changed fan-out finds it like any other session.

A :class:`Stream` decides lazily how to answer (``pump``): when the first thing to send is the
final response, a plain JSON body (with the era's status for errors); when a notification or a
request comes first, or after ``sse_after`` seconds of silence, an SSE stream (priming event,
``retry``, keep-alive comments, ``X-Accel-Buffering: no``). Legacy SSE events get ids and go
through the :class:`~._http_events.EventStore` as they are written, so a client can resume
with ``GET`` + ``Last-Event-ID`` after losing the connection or being told to poll
(:meth:`LegacyTransport.close_stream`, SEP-1699); a disconnect is not a cancellation there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec

from .. import _jsonrpc as rpc
from .._errors import EndOfStream
from .._protocol import _http as h
from .._protocol._framing import Decoded
from .._state._base import StateUnavailable
from . import _http_deadlines as deadlines
from ._base import serving
from ._http_events import EventStore, MemoryEventStore
from ._http_unmade import UnmadeStream

log = logging.getLogger("mcpio.http")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
_EOF = None  # the end marker on the frame queues (frames are bytes, never None)


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
        self.on_done: Callable[[Stream], None] | None = None
        self._released: asyncio.Event | None = None  # made when first waited on (``released``)
        # (receive, on_gone): what watch_disconnect() needs; the stream starts watching once a
        # hang-up matters (see pump), so a POST answered as plain JSON spawns no watcher task.
        self.hangup: tuple[Receive, Callable[[], None]] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._timed_out = False
        self.wait_token = 0  # changes as each timed wait starts and ends (_http_deadlines)

    @property
    def wake(self) -> asyncio.Event:
        """Set when there is news for the response's writer; made on first use, so a POST
        answered before its response starts costs no Event (issue 17). Setting it before a wait
        is never needed: :meth:`_wait` clears it and looks at the stream first."""
        event = self._wake
        if event is None:
            event = self._wake = asyncio.Event()
        return event

    @property
    def released(self) -> asyncio.Event:
        """Set while no HTTP response is attached (graceful shutdown waits on it); made on first
        use, so a stream nobody waits on costs no Event (issue 17)."""
        event = self._released
        if event is None:
            event = self._released = asyncio.Event()
            if not self.attached:
                event.set()
        return event

    async def put(self, frame: bytes, final: bool) -> None:
        if final:
            self.finished = True
        if self.attached and not self.gone:
            self.items.append(frame)
            if self._wake is not None:  # else nobody waits yet (``wake``)
                self._wake.set()
        elif self.store is not None and self.started:
            await self._store(frame)  # kept for Last-Event-ID (not if the store is unreachable)
        else:
            log.debug("dropping a message for closed stream %s", self.id)
        if final and not self.attached and self.on_done is not None:
            self.on_done(self)

    def disconnected(self) -> None:
        self.gone = True
        self.wake.set()

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
        # (issue 17; _http_deadlines). Changing the token ends this wait's deadline.
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
        *,
        sse_after: float,
        keepalive: float,
        retry_ms: int,
        replay: list[tuple[str, bytes]] | None = None,
    ) -> None:
        """Answer one HTTP request from this stream until it ends (see the module docstring);
        ``replay``: stored events to send first (a resumption).

        With :attr:`hangup` set, the client's hang-up is watched (``watch_disconnect``) from the
        moment it matters: as the response turns into an event stream, or before an unbounded
        wait (a client that accepts only JSON). Until then it goes unnoticed, and costs nothing:
        the JSON answer of a request that ends within ``sse_after`` needs no watcher task (issue
        17); a client that left meanwhile is noticed when its stream would start (``sse_after``)."""
        try:
            if self.json_ok:
                if not self.sse_ok:
                    self._watching()  # nothing bounds the wait below
                while not (self.items or self.gone or self.detach_retry is not None):
                    if not await self._wait(sse_after if self.sse_ok else None):
                        break  # silence: start streaming (keep-alives, priming)
                if self.gone:
                    return
                only_answer = self.finished and len(self.items) == 1
                if not self.sse_ok or (only_answer and self.detach_retry is None):
                    while not self.finished and not self.gone:
                        self.items.clear()  # a JSON-only client cannot receive these here
                        await self._wait(None)
                    if self.gone or not self.items:
                        return
                    frame = self.items.pop()
                    self.items.clear()
                    await send_json(send, frame, headers, self.era)
                    return
            self._watching()
            await send({"type": "http.response.start", "status": 200, "headers": headers + SSE_HEADERS})
            self.started = True
            retry_sent = False
            if self.priming and self.store is not None:
                eid = await self._store(b"")
                await _body(send, h.sse_event(b"", id=eid, retry=retry_ms))
                retry_sent = True
            elif not self.items and not replay:
                await _body(send, h.sse_comment("stream open"))  # flushes the headers through proxies
            for eid, frame in replay or ():
                await _body(send, h.sse_event(frame, id=eid))
            while True:
                while self.items and not self.gone:
                    frame = self.items.popleft()
                    eid = await self._store(frame) if self.store is not None else None
                    await _body(send, h.sse_event(frame, id=eid))
                if self.gone or (self.finished and not self.items):
                    break
                if self.detach_retry is not None:
                    if not retry_sent:
                        await _body(send, b"retry: %d\n\n" % self.detach_retry)
                    break
                if not await self._wait(keepalive):
                    await _body(send, h.sse_comment())
            if not self.gone:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                if self.finished and self.store is not None:
                    # Delivered whole and closed cleanly: resumption cannot need it any more.
                    discard = getattr(self.store, "discard_stream", None)  # optional for older stores
                    if discard is not None:
                        with contextlib.suppress(StateUnavailable):  # its keys expire on their own
                            await discard(self.session_id, self.id)
        finally:
            self.hangup = None  # it was this response's (a resumed stream is another's)
            if self._watcher is not None:
                self._watcher.cancel()
                self._watcher = None
            self._release()

    def _watching(self) -> None:
        """Start watching for the client's hang-up (once; see :meth:`pump`)."""
        hangup = self.hangup
        if hangup is not None and self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(watch_disconnect(*hangup))

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

    def reattach(self) -> None:
        self.attached = True
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


async def _body(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


_JSON_TYPE = (b"content-type", b"application/json")


async def send_json(send: Send, frame: bytes, headers: list[tuple[bytes, bytes]], era: str) -> None:
    """Send ``frame`` (one JSON-RPC message) as the whole JSON response: 200, or the status the
    era gives its error code (a refused request's 4xx), with ``headers`` added."""
    status = 200
    if b'"error"' in frame and frame[:1] == b"{":
        with contextlib.suppress(Exception):
            err = rpc.decode(frame).get("error")
            status = h.status_for_error(err.get("code") if isinstance(err, dict) else None, era)
    out = [*headers, _JSON_TYPE, (b"content-length", b"%d" % len(frame))]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": frame, "more_body": False})


class Feeder(Protocol):
    """What may serve a POSTed request on the POST's own task (the session engine's
    ``Session.reading``/``feed``; typed here so the transport needs nothing above it)."""

    def reading(self) -> bool: ...

    async def feed(self, frame: Decoded) -> None: ...


class LegacyTransport:
    """The transport of one legacy HTTP session (see the module docstring)."""

    def __init__(self, session_id: str, *, store: EventStore | None, inbox_size: int = 256) -> None:
        self.id = session_id
        self.store = store
        # send() waits on nothing bound to the current task (no asyncio.timeout; an event store
        # in another process, Redis, may), so the session may start a request that cannot wait
        # on its reader's stack, without a Task (Session ``eager``, issue 17).
        self.eager_safe = store is None or type(store) is MemoryEventStore
        self._inbox: asyncio.Queue[bytes | Decoded | None] = asyncio.Queue(inbox_size)
        self._by_request: dict[Any, Stream | UnmadeStream] = {}
        self.streams: dict[str, Stream] = {}  # live streams, for Last-Event-ID resumption
        self.get_stream: Stream | None = None
        self._seq = 0
        self.closed = False
        self.last_active = time.monotonic()

    @property
    def routing_key(self) -> LegacyTransport:
        """What :data:`~._base.serving` records for this session, whatever wraps the transport
        (``MCPIO_TRACE``'s :class:`~._trace.Traced` included): routing never compares wrappers."""
        return self

    # ---- the Transport interface, for the Session engine
    async def receive(self) -> bytes | Decoded:
        item = await self._inbox.get()
        if item is _EOF:
            self._inbox.put_nowait(_EOF)
            raise EndOfStream()
        return item

    async def send(self, frame: bytes) -> None:
        self.last_active = time.monotonic()
        envelopes = peek(frame)
        if envelopes and envelopes[0].method is None:  # a response (or a batch of them)
            stream = None
            for e in envelopes:
                s = self._by_request.pop(e.id, None) if isinstance(e.id, (int, str)) else None
                if s is not None:
                    s.request_ids.discard(e.id)
                    stream = s
            if stream is None:
                log.debug("dropping a response to an unknown request in session %s", self.id)
                return
            await stream.put(frame, final=not stream.request_ids)
            return
        stream = None
        related = serving.get()
        if related is not None and related[0] is self.routing_key:
            s = self._by_request.get(related[1])
            if s is not None and s.sse_ok and not s.finished:
                stream = s
        if stream is None:
            stream = self.get_stream
        if stream is None:
            log.debug("session %s: no stream for %s (no GET stream is open); dropped", self.id, envelopes[0].method)
            return
        await stream.put(frame, final=False)

    async def aclose(self) -> None:
        self.terminate()

    # ---- the HTTP side
    def new_stream(self, request_ids: set[Any], *, json_ok: bool, sse_ok: bool, priming: bool) -> Stream:
        """A stream for a POST carrying requests ``request_ids`` (a set the stream keeps: it is
        emptied as they are answered)."""
        self._seq += 1
        s = Stream(
            self.stream_prefix + str(self._seq),
            era=h.LEGACY,
            json_ok=json_ok,
            sse_ok=sse_ok,
            store=self.store,
            session_id=self.id,
            priming=priming,
            request_ids=request_ids,
        )
        for rid in request_ids:
            self._by_request[rid] = s
        self.streams[s.id] = s
        s.on_done = self._stream_done
        return s

    async def post(
        self, frame: bytes, messages: list[Any], request_ids: set[Any], *, json_ok: bool, sse_ok: bool, priming: bool
    ) -> Stream | bytes:
        """Deliver a POST carrying requests ``request_ids`` and give its response: the stream to
        pump, or the answer that is the whole response.

        A POST of one request (not a batch of one: that is queued as a batch), with nothing
        queued ahead of it and the session's reader waiting (:attr:`feeder`), is served on the
        caller's task: no queue hop, no wake-up of the reader (issue 17). Answered so, before
        anything else was sent for it, to a client that accepts JSON, its answer is returned
        and no stream is made; the stream is made as soon as something else comes first.
        Anything else is queued for the session (:meth:`deliver`), its stream made first."""
        feeder = self.feeder
        if (
            len(messages) == 1
            and feeder is not None
            and self._inbox.empty()
            and frame.lstrip()[:1] != b"["
            and feeder.reading()
        ):
            self.last_active = time.monotonic()
            route = UnmadeStream(self, request_ids, json_ok, sse_ok, priming)
            self._by_request[messages[0]["id"]] = route
            await feeder.feed(Decoded(frame, messages[0]))
            return route.answered if route.answered is not None else route.made()
        stream = self.new_stream(request_ids, json_ok=json_ok, sse_ok=sse_ok, priming=priming)
        await self.deliver(frame, messages)
        return stream

    def open_get_stream(self, *, priming: bool) -> Stream | None:
        """The standalone GET stream, attached to a new connection; None if one is attached."""
        s = self.get_stream
        if s is not None and s.attached:
            return None
        if s is None:
            s = self.get_stream = Stream(
                "0", era=h.LEGACY, json_ok=False, store=self.store, session_id=self.id, priming=priming
            )
            self.streams["0"] = s
        else:
            s.reattach()
            s.priming = priming
        return s

    def _stream_done(self, stream: Stream) -> None:
        if stream is not self.get_stream and not stream.request_ids:
            self.streams.pop(stream.id, None)

    def pending(self, request_ids: list[Any]) -> list[Any]:
        """The ids among ``request_ids`` that are still being served (a duplicate is refused by
        the protocol layer; its stream must not replace the first one's)."""
        known = self._by_request
        if len(request_ids) == 1:  # one request, as every POST but a 2025-03-26 batch (issue 17)
            return request_ids if request_ids[0] in known else []
        return [r for r in request_ids if r in known]

    async def deliver(self, frame: bytes, messages: list[Any] | None = None) -> None:
        """Queue a POSTed ``frame`` for the session (requests come through :meth:`post`).
        ``messages``: its messages, decoded and checked already
        (:func:`~mcpio._protocol._http.messages_of`), so the session does not decode the frame
        a second time (issue 17); a batch stays a batch (a JSON array, whitespace allowed before)."""
        self.last_active = time.monotonic()
        if messages is None:
            await self._inbox.put(frame)
        elif frame.lstrip()[:1] == b"[":
            await self._inbox.put(Decoded(frame, messages))  # a batch, even of one
        else:
            await self._inbox.put(Decoded(frame, messages[0]))

    async def close_stream(self, request_id: Any, retry_ms: int | None = None) -> None:
        """End the HTTP connection carrying ``request_id``'s stream now; the client resumes with
        GET + Last-Event-ID after ``retry_ms`` and gets the rest there (SEP-1699 polling)."""
        s = self._by_request.get(request_id)
        if isinstance(s, UnmadeStream):  # asked before anything was sent for it
            s = s.made()
        if s is not None and s.attached:
            s.detach(retry_ms if retry_ms is not None else self.retry_ms)
            if s.detach_retry is not None:  # returns once the connection has ended (bounded)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(5):
                        await s.released.wait()

    retry_ms = 1000
    # Set by the server: the session, when one POST's request may be served on the POST's own
    # task (``Session.reading``/``feed``: no queue hop, no wake-up of the reader; issue 17).
    feeder: Feeder | None = None
    stream_prefix = ""  # before each POST stream's number: unique per process when sessions are shared
    # Set by the server: cancel what the session has in flight (DELETE: nobody can receive it).
    on_abort: Callable[[], None] | None = None
    # Set by the server: how many of the session's requests are running (graceful shutdown waits).
    in_flight: Callable[[], int] | None = None

    def abort(self) -> None:
        """End the session and cancel its requests in flight now (DELETE): their answers could
        not be delivered, and their queued sync calls must not hold workers others need."""
        self.terminate()
        if self.on_abort is not None:
            self.on_abort()

    def terminate(self) -> None:
        """End the session: the engine sees end of stream; every HTTP response ends."""
        if self.closed:
            return
        self.closed = True
        try:
            self._inbox.put_nowait(_EOF)
        except asyncio.QueueFull:  # the engine is behind: what it has not read is dropped
            while not self._inbox.empty():
                self._inbox.get_nowait()
            self._inbox.put_nowait(_EOF)

    def end_streams(self) -> None:
        for s in list(self.streams.values()):
            s.finished = True
            s.wake.set()

    def busy(self) -> bool:
        """Requests in flight or a connection open: never expired while so."""
        return (
            bool(self._by_request)
            or any(s.attached and not s.finished for s in self.streams.values())
            or (self.get_stream is not None and self.get_stream.attached)
        )

    def idle_for(self, now: float) -> float:
        return 0.0 if self.busy() else now - self.last_active


# ---------------------------------------------------------------------------- ASGI helpers
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
