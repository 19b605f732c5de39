"""The transport of one legacy HTTP session (``Mcp-Session-Id``, ≤ 2025-11-25): the Session
engine's ``receive()``/``send()`` on one side, the session's POST and GET streams on the other
(the mapping is described in :mod:`._http_server_streams`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from .._errors import EndOfStream
from .._protocol import _http as h
from .._protocol._framing import Decoded
from ._base import Abilities, everywhere, serving
from ._http_events import EventStore, MemoryEventStore
from ._http_server_streams import Stream, peek
from ._http_unmade import UnmadeStream
from ._memory import end_queue

log = logging.getLogger("mcpio.http")

_EOF = None  # the end marker on the inbox (frames are bytes or Decoded, never None)
_NO_ID = object()  # no request is being fed without a route (equal to no request id)
RETRY_AFTER = 5  # seconds, in the 503 of the session cap
HELD_FOR_GET = 32  # messages sent outside any request kept for the client's first GET stream


def at_capacity(max_sessions: int, session_timeout: float, rid: Any) -> h.Refusal:
    """503 for an initialize past ``max_sessions``: the server is full, the request is fine."""
    expiry = f"idle ones expire after {session_timeout:g} s" if session_timeout > 0 else "none expire"
    return h.refuse(
        503,
        f"Service Unavailable: this server already holds its maximum of {max_sessions} "
        f"sessions (max_sessions), so it cannot open another; the request itself is fine. Retry "
        f"after {RETRY_AFTER} s; clients free their sessions with DELETE, and {expiry}",
        id=rid,
        data={"maxSessions": max_sessions, "retryAfter": RETRY_AFTER},
        headers=(("retry-after", str(RETRY_AFTER)),),
    )


class Caller(Protocol):
    """Who sends the request being served, as the HTTP auth guard verified it (its
    ``mcpio._auth._info.Slot``, from ``_info.slot()``): a legacy session is bound to a principal."""

    @property
    def principal(self) -> str: ...

    def follow(self, other: Any) -> None: ...


def current(caller: Callable[[], Caller | None] | None) -> Caller | None:
    """The Caller of the request being served (None: no auth): a session it opens holds it, and
    is owned by its principal (:func:`admits`)."""
    return caller() if caller is not None else None


def admits(caller: Callable[[], Caller | None] | None, transport: Any) -> bool:
    """Whether the request being served may use legacy session ``transport``: without auth
    (``caller`` None) yes; with auth only if its principal opened the session (``transport.owner``,
    the shared record's on a state backend); refused, the app answers the 404 of an unknown
    session. Once admitted, the session's slot follows this request's token, so its handlers see
    the current caller (spec basic/security_best_practices, "Session Hijacking")."""
    if caller is None:
        return True
    now = caller()
    if now is None or transport.owner is None or transport.owner != now.principal:
        return False
    held = transport.caller
    if held is not None and held is not now:
        held.follow(now)
    return True


class Engine(Protocol):
    """The session engine serving a legacy session (``Session``), as the transport uses it (typed
    here so the transport needs nothing above it); as its :attr:`~LegacyTransport.feeder` it may
    serve a POSTed request on the POST's own task (``reading``/``feed``)."""

    answers_only: bool  # a fed request sends nothing on the feeder's stack but its answer

    def reading(self) -> bool: ...

    def feed(self, message: dict[str, Any]) -> Awaitable[None] | None: ...

    def answer_admitted(self, message: dict[str, Any]) -> bytes | None: ...

    def abort(self, grace: float = 0.0) -> None: ...

    def in_flight(self) -> int: ...


class LegacyTransport:
    """The transport of one legacy HTTP session (see the module docstring)."""

    def __init__(
        self, sid: str, *, store: EventStore | None, owner: str | None = None, caller: Any = None, retry_ms: int = 1000
    ) -> None:
        self.id = sid
        self.abilities = Abilities(
            answer_nowait=self.answer_nowait,
            unanswered=self.unanswered,
            attach=self.attach,
            session_id=sid,
            http_scope=self.http_scope,
            close_stream=self.close_stream,
        )
        self.session_header = [(b"mcp-session-id", sid.encode())]  # on the response opening it (read only)
        self.store = store
        # send() waits on nothing bound to the current task (a Redis event store may), so a
        # request may be started on the POST's stack (Session.feed).
        self.eager_safe = store is None or type(store) is MemoryEventStore
        self._inbox: asyncio.Queue[bytes | Decoded | None] = asyncio.Queue(256)
        self._queued = 0  # frames delivered (or waiting for room) that the engine has not received
        self._by_request: dict[Any, Stream | UnmadeStream] = {}
        self._scopes: dict[Any, Any] = {}  # request id -> the ASGI scope of its POST, while served (http_scope)
        # answering(request_id): that request is still served (a duplicate must not replace its stream)
        self.answering: Callable[[Any], bool] = self._by_request.__contains__
        self._batches: deque[Stream] = deque()  # streams of POSTed batches, oldest first (_refused_batch)
        self.streams: dict[str, Stream] = {}  # live streams, for Last-Event-ID resumption
        self.get_stream: Stream | None = None
        # What is sent outside any request before the client first opened the GET stream, for it:
        # the last HELD_FOR_GET messages, each with the id of the change it tells every copy of a
        # shared session ("": none; :data:`everywhere`); None once a GET stream was opened (:meth:`outside`).
        self.before_get: deque[tuple[bytes, str]] | None = deque(maxlen=HELD_FOR_GET)
        self._seq = 0
        self.closed = False
        self.last_active = time.monotonic()
        self.owner = owner  # the principal that opened it (with auth; admits)
        self.caller = caller  # the Caller its task holds (with auth; admits)
        self.retry_ms = retry_ms  # the SSE retry of a stream closed without one (close_stream)

    # ---- the Transport interface, for the Session engine
    async def receive(self) -> bytes | Decoded:
        item = await self._inbox.get()
        if item is _EOF:
            self._inbox.put_nowait(_EOF)
            raise EndOfStream()
        self._queued -= 1
        return item

    def send(self, frame: bytes) -> Coroutine[Any, Any, None]:
        return self.route(frame, peek(frame))

    async def route(self, frame: bytes, envelopes: list[Any]) -> None:
        """:meth:`send` of ``frame``, whose messages' ids and methods are ``envelopes``
        (``peek(frame)``: a subclass that read them already passes them on)."""
        self.last_active = time.monotonic()
        if envelopes and envelopes[0].method is None:  # a response (or a batch of them)
            stream = None
            scopes = self._scopes
            for e in envelopes:
                s = self._by_request.pop(e.id, None) if isinstance(e.id, (int, str)) else None
                if scopes and s is not None:
                    scopes.pop(e.id, None)
                if s is not None:
                    s.request_ids.discard(e.id)
                    stream = s
            if stream is None and len(envelopes) == 1 and envelopes[0].id is None:
                stream = self._refused_batch()
            if stream is None:
                log.debug("dropping a response to an unknown request in session %s", self.id)
                return
            await stream.put(frame, final=not stream.request_ids)
            return
        stream = None
        related = serving.get()
        if related is not None and related[0] is self:  # its routing key, whatever wraps it (_base)
            s = self._by_request.get(related[1])
            if s is not None and s.sse_ok and not s.finished:
                stream = s
        if stream is None:
            stream = self.get_stream
        if stream is None:
            await self.outside(frame, envelopes[0].method)
            return
        await stream.put(frame, final=False)

    async def outside(self, frame: bytes, method: str | None) -> None:
        """``frame`` (``method``), sent outside any request while no GET stream is open here: held
        for the client's first GET (beyond HELD_FOR_GET, the oldest goes), since a server's first
        words after notifications/initialized race the GET that follows it; dropped once a GET
        stream was opened and has gone."""
        if self.before_get is None:
            log.debug("session %s: no stream for %s (no GET stream is open); dropped", self.id, method)
        else:
            self.before_get.append((frame, everywhere.get()))

    def answer_nowait(self, request_id: Any, frame: bytes) -> bool:
        """:meth:`send` of ``frame``, the one message answering ``request_id`` (not decoded again),
        when that needs no waiting: kept as a fed POST's whole JSON response (the request fed
        without a route, or ``UnmadeStream.take``), or put on an attached stream. False: send it."""
        if request_id == self._fed_id:  # (never equal to an id in _by_request: post checked it)
            self._fed_answer = frame
            return True
        s = self._by_request.get(request_id)
        if s is None:
            return False
        if type(s) is UnmadeStream:  # it has one request
            if not s.take(frame):
                return False
        elif not s.put_nowait(frame, final=s.request_ids <= {request_id}):  # type: ignore[union-attr]
            return False
        else:
            s.request_ids.discard(request_id)
        del self._by_request[request_id]
        if self._scopes:
            self._scopes.pop(request_id, None)
        self.last_active = time.monotonic()
        return True

    def unanswered(self, request_id: Any) -> None:
        """Request ``request_id`` will never be answered (cancelled; spec basic/utilities/cancellation):
        its POST's response ends once it waits for no other answer: an SSE stream closes, a JSON
        response not yet started is 204 (:meth:`Stream.pump`)."""
        s = self._by_request.pop(request_id, None) if isinstance(request_id, (int, str)) else None
        if s is None:
            return
        if self._scopes:
            self._scopes.pop(request_id, None)
        s.request_ids.discard(request_id)
        if not s.request_ids:
            stream = s.made() if isinstance(s, UnmadeStream) else s
            stream.end()

    async def aclose(self) -> None:
        self.terminate()

    def http_scope(self, request_id: Any) -> Any:
        """The ASGI scope of the POST that carried request ``request_id``, while it is served
        (``ctx.http``: this POST's, whichever process opened the session), else None."""
        if request_id == self._fed_id:
            return self._fed_scope
        return self._scopes.get(request_id) if isinstance(request_id, (int, str)) else None

    # ---- the HTTP side
    def new_stream(self, ids: set[Any], *, json_ok: bool, sse_ok: bool, priming: bool, store: Any = None) -> Stream:
        """A stream for a POST carrying requests ``ids`` (a set the stream keeps: it is
        emptied as they are answered); ``store``: its event store, if not the session's."""
        self._seq += 1
        s = Stream(
            self.stream_prefix + str(self._seq),
            era=h.LEGACY,
            json_ok=json_ok,
            sse_ok=sse_ok,
            store=self.store if store is None else store,
            session_id=self.id,
            priming=priming,
            request_ids=ids,
            on_done=self._stream_done,
        )
        for rid in ids:
            self._by_request[rid] = s
        self.streams[s.id] = s
        return s

    def deliver_post(
        self,
        frame: bytes,
        messages: list[Any],
        request_ids: set[Any] | None,
        json_ok: bool,
        sse_ok: bool,
        priming: bool,
        scope: Any = None,
        batch: bool = False,
    ) -> Stream | bytes | Coroutine[Any, Any, Stream | bytes]:
        """Deliver a POST carrying requests ``request_ids`` (None: one request, ``messages[0]``) and
        give its response (the answer as bytes, or the stream to pump) when nothing had to be
        awaited for it; else the coroutine that finishes the delivery and gives it.

        A POST of one request (not a batch), with nothing queued ahead of it and the reader
        waiting (:attr:`feeder`), is served on the caller's task; answered there, to a client
        that accepts JSON, before anything else was sent for it, its answer is returned and no
        stream is made. With ``answers_only`` it has no route while it is fed (:meth:`answer_nowait`
        keeps its answer); not answered there, it gets one before anything else can run.
        Anything else is queued for the session (:meth:`deliver`), its stream made first.
        ``scope``: the POST's ASGI scope (:meth:`http_scope`); ``batch``: the body is a JSON array."""
        feeder = self.feeder
        if len(messages) == 1 and feeder is not None and not self._queued and not batch and feeder.reading():
            self.last_active = time.monotonic()
            message = messages[0]
            unrouted = json_ok and feeder.answers_only  # fed first, routed only if not answered
            if unrouted:
                answered = feeder.answer_admitted(message)  # needs no awaiting: nothing to record
                if answered is not None:
                    return answered
                self._fed_id, self._fed_scope = message["id"], scope
                try:
                    pending = feeder.feed(message)
                finally:
                    self._fed_id, self._fed_scope = _NO_ID, None
                answered = self._fed_answer
                if answered is not None:
                    self._fed_answer = None
                    return answered
            if request_ids is None:
                request_ids = {message["id"]}
            if scope is not None:
                self._scopes[message["id"]] = scope
            if unrouted and pending is None:  # started as a Task (not yet run): its stream, as made below
                return self.new_stream(request_ids, json_ok=json_ok, sse_ok=sse_ok, priming=priming)
            route = UnmadeStream(self, request_ids, json_ok, sse_ok, priming)
            self._by_request[message["id"]] = route  # (unrouted: the refusal still to send goes to it)
            if not unrouted:
                pending = feeder.feed(message)
            if pending is not None:
                return self._fed(route, pending)
            return route.answered if route.answered is not None else route.made()
        if request_ids is None:
            request_ids = {messages[0]["id"]}
        if scope is not None:
            for rid in request_ids:
                self._scopes[rid] = scope
        stream = self.new_stream(request_ids, json_ok=json_ok, sse_ok=sse_ok, priming=priming)
        if batch:
            batches = self._batches
            while batches and not batches[0].request_ids:  # answered: no refusal can come for it
                batches.popleft()
            batches.append(stream)
        return self._delivered(frame, messages, stream, batch)

    async def _fed(self, route: UnmadeStream, pending: Awaitable[None]) -> Stream | bytes:
        await pending
        return route.answered if route.answered is not None else route.made()

    async def _delivered(self, frame: bytes, messages: list[Any], stream: Stream, batch: bool) -> Stream:
        await self.deliver(frame, messages, batch)
        return stream

    def _refused_batch(self) -> Stream | None:
        """The stream a response with a null id answers (the protocol layer's refusal of a whole
        batch, made in delivery order), its requests forgotten: the oldest POSTed batch none of
        whose requests is answered."""
        batches = self._batches
        while batches:
            s = batches.popleft()
            if s.request_ids and not s.finished:
                for rid in s.request_ids:
                    self._by_request.pop(rid, None)
                s.request_ids.clear()
                return s
        return None

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
            if self.before_get:
                s.items.extend(frame for frame, _ in self.before_get)  # what was sent for it before it opened, first
            self.before_get = None
        else:
            s.reattach(priming)
        return s

    def _stream_done(self, stream: Stream) -> None:
        if stream is not self.get_stream and not stream.request_ids:
            self.streams.pop(stream.id, None)

    async def deliver(self, frame: bytes, messages: list[Any] | None = None, batch: bool = False) -> None:
        """Queue a POSTed ``frame`` for the session; ``messages``: decoded already (``Post``);
        ``batch``: it is a JSON array, which stays a batch."""
        self.last_active = time.monotonic()
        if messages is None:
            item: bytes | Decoded = frame
        elif batch:
            item = Decoded(frame, messages)  # a batch, even of one
        else:
            item = Decoded(frame, messages[0])
        self._queued += 1  # counted while it waits for room too: ahead of any later POST (deliver_post)
        try:
            await self._inbox.put(item)
        except BaseException:  # not put (cancelled while the inbox was full)
            self._queued -= 1
            raise

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

    def attach(self, engine: Engine, *, feed: bool, mirror: Callable[[Any], Any]) -> None:
        """The session engine serving this transport, given once before it reads: DELETE cancels
        its requests (:meth:`abort`), graceful shutdown waits for them (``_http_drain``), and with
        ``feed`` (and ``eager_safe``) a POST's request may be served on its own task (:attr:`feeder`).
        ``mirror(engine)``: a shared session copy's record keeper (``_http_sessions``); unused here."""
        self.on_abort = lambda: engine.abort(0.0)
        self.in_flight = engine.in_flight
        if feed and self.eager_safe:
            self.feeder = engine

    owns_events = True  # the session's end here forgets its events in the store
    feeder: Engine | None = None  # serves a POST's request on the POST's task (:meth:`attach`)
    _fed_id: Any = _NO_ID  # the request deliver_post feeds without a route, while it is fed
    _fed_answer: bytes | None = None  # its answer, handed over by answer_nowait
    _fed_scope: Any = None  # its POST's ASGI scope (http_scope)
    stream_prefix = ""  # before each POST stream's number: unique per process when sessions are shared
    on_abort: Callable[[], None] | None = None  # cancel what is in flight (DELETE; :meth:`attach`)
    in_flight: Callable[[], int] | None = None  # requests running (graceful shutdown; :meth:`attach`)

    def running(self) -> int:
        """Its requests still running (graceful shutdown): the engine's count, else those holding a stream."""
        return self.in_flight() if self.in_flight is not None else len(self._by_request)

    def abort(self) -> None:
        """End the session and cancel its requests in flight now (DELETE): nobody can receive
        their answers."""
        self.terminate()
        if self.on_abort is not None:
            self.on_abort()

    def terminate(self) -> None:
        """End the session: the engine sees end of stream; every HTTP response ends."""
        if self.closed:
            return
        self.closed = True
        if end_queue(self._inbox):  # the engine is behind: what it has not read is dropped
            self._queued = 0

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
