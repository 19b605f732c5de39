"""The Streamable HTTP server: a plain ASGI app, a thin shell over ``_protocol/_http`` rules.

``Server.http_app(path="/mcp")`` builds a :class:`StreamableHTTPApp`; mount it in Starlette or
FastAPI, or run it with any ASGI server (``Server.run(transport="http")`` uses uvicorn). One
endpoint serves both eras (spec-notes §9, §13):

* **POST** — Host/Origin checks (403), ``Content-Type``/``Accept`` (415/406), body size cap
  (413), JSON and JSON-RPC shape (400), then the era: ``_http_checks`` checks the headers and
  reads the body once (a :class:`~mcpio._protocol._http_checks.Post`):

  - *modern* (2026-07-28): one message per POST; ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*``
    checked against the body (400 + -32020), then a short-lived session serves it (see
    ``_http_server_streams``); its errors set the status (-32601 → 404, client errors → 400);
    ``Mcp-Session-Id`` is ignored and never minted; notifications get 202.
  - *legacy*: ``initialize`` without a session id creates a session (``Mcp-Session-Id`` on that
    answer only, later responses do not repeat it; past ``max_sessions``, 503 with
    ``Retry-After``); anything else needs a known id (400 missing, 404 unknown or ended) and a
    legacy ``MCP-Protocol-Version`` (400); notifications and responses get 202.

  A refusal's JSON-RPC error carries the request's id once the body has been read and holds
  one request; ``null`` before that (403, 406, 413, 415) and when no one request's id applies
  (bad JSON, a batch refused as a whole).
* **GET** (legacy) — the standalone SSE stream for server-initiated messages (409 if one is
  open), or, with ``Last-Event-ID``, the replay of that stream and its continuation.
* **DELETE** (legacy) — ends the session; later requests with its id get 404.

Sessions idle for ``session_timeout`` seconds (nothing in flight, no stream open) expire.
``legacy_sse=True`` also serves the deprecated HTTP+SSE transport of 2024-11-05 (``_http_server_sse``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from typing import Any, TypeVar, cast

from .._protocol import _http as h
from .._protocol._http_checks import Post, RequestChecks, Verdict, read_post
from .._state._base import StateBackend, StateUnavailable
from . import _http_server_streams as streams
from ._http_drain import closing, health, lifespan_protocol
from ._http_events import EventStore, MemoryEventStore
from ._http_legacy import Caller, LegacyTransport, admits, at_capacity, current
from ._http_request import RequestTransport, end_request, serve_post
from ._http_server_sse import LegacySSE, SSETransport
from ._http_server_streams import Disconnected, Receive, Send, Stream, TooLarge, plain, refuse
from ._http_sessions import SharedSessions

log = logging.getLogger("mcpio.http")
GONE = "Not Found: session unknown or ended; initialize a new one"  # 404: the client starts over

Scope = dict[str, Any]
# serve(transport, stateless): run one server session on ``transport`` until it ends
Serve = Callable[[Any, bool], Awaitable[None]]
_Legacy = TypeVar("_Legacy", bound=LegacyTransport)

DEFAULT_MAX_BODY = 16 * 1024 * 1024
HEALTH_PATHS = ("/healthz", "/readyz")
_UNSET: Any = object()
NO_HEADERS: list[tuple[bytes, bytes]] = []  # no headers of ours on a response (read only)


class StreamableHTTPApp:
    """An ASGI application serving one MCP server over Streamable HTTP (both eras)."""

    def __init__(
        self,
        serve: Serve,
        *,
        path: str = "/mcp",
        allowed_hosts: Collection[str] | None = None,
        allowed_origins: Collection[str] | None = None,
        max_body_size: int = DEFAULT_MAX_BODY,
        session_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        event_store: EventStore | None = _UNSET,
        state: StateBackend | None = None,
        retry_ms: int = 1000,
        keepalive: float = 15.0,
        sse_after: float = 1.0,
        param_headers: Callable[[str], Mapping[str, tuple[str, ...]] | None] | None = None,
        lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]] | None = None,
        legacy_sse: bool = False,
        sse_path: str = "/sse",
        message_path: str = "/messages",
        auth: Callable[[Scope, Receive, Send], Awaitable[tuple[Receive, Send] | None]] | None = None,
        caller: Callable[[], Caller | None] | None = None,
        answer: Callable[[dict[str, Any]], bytes | None] | None = None,
    ) -> None:
        self.serve = serve
        # answer(message): the encoded answer to a modern request that needs neither a session nor
        # awaiting, or None: serve(transport, True) serves it (the Server's _http.HttpBinding.answer_post).
        self.answer = answer
        self.auth = auth  # the authorization guard (_auth._resource.Guard): answers, or lets through
        self.caller = caller  # the verified caller now (_auth._info.slot; None: no auth): admits
        self.path = "/" + path.strip("/") if path.strip("/") else "/"
        self.checks = RequestChecks(allowed_hosts, allowed_origins)  # Host/Origin/Content-Type/Accept
        self.max_body_size = max_body_size
        self.session_timeout = session_timeout
        self.max_sessions = max_sessions
        # The state seam: every piece of cross-request state comes from one backend (mcpio._state);
        # ``event_store=`` (older API) overrides its store, None turns resumability off.
        self.state: StateBackend | None = state
        if event_store is _UNSET:
            event_store = state.events if state is not None else MemoryEventStore()
        self.event_store = event_store
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self.sse_after = sse_after
        # The Mcp-Param-* headers tool ``name`` declares ({suffix: argument path}; None or empty:
        # none), as _protocol._http.param_headers reads its input schema (spec 2026-07-28).
        self.param_headers = param_headers
        self._lifespan = lifespan
        self.sessions: dict[str, LegacyTransport] = {}
        # Modern requests in flight (listen streams too) and the tasks serving them (end_request).
        self._requests: dict[RequestTransport, asyncio.Task[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._started: asyncio.Future[None] | None = None
        self._running = False  # the lifespan is entered: requests need not wait for it
        self._stop: asyncio.Event | None = None
        self._reaper: asyncio.Task[None] | None = None
        directory = getattr(state, "sessions", None)  # legacy sessions shared by all processes of state
        self.shared = SharedSessions(self, state, directory) if directory is not None else None
        self.sse: LegacySSE | None = None
        self.draining = False  # shutting down (``_http_drain``): /readyz answers 503
        if legacy_sse:
            self.sse = LegacySSE(self, sse_path, message_path)

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        """The Host allow-list (read only: the checks are made from it once)."""
        return self.checks.hosts

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        """The Origin allow-list (read only: the checks are made from it once)."""
        return self.checks.origins

    # ================================================================ ASGI entry
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await lifespan_protocol(self, receive, send)
            return
        if kind != "http":
            return
        if not self._running:  # once started, no await here
            await self.ensure_started()
        if self.draining:  # a kept-alive connection carries one last request, then closes (_http_drain)
            send = closing(send)
        route = h.route_path(scope) if scope.get("root_path") else scope.get("path", "/")  # mounted: below it
        if route in HEALTH_PATHS and route != self.path and scope.get("method") in ("GET", "HEAD"):
            await health(self, send, route)  # before Host checks: probes come by address
            return
        if self.auth is not None:
            admitted = await self.auth(scope, receive, send)
            if admitted is None:
                return
            receive, send = admitted
        headers = h.header_map(scope.get("headers") or (), self.checks.texts)
        sse = self.sse if self.sse is not None and route in (self.sse.sse_path, self.sse.message_path) else None
        if sse is None and route != self.path and route.rstrip("/") != self.path.rstrip("/"):
            await plain(send, 404, b"Not Found")
            return
        method = scope.get("method", "GET")
        try:
            if method == "POST" and sse is None:  # its checks are the POST's (RequestChecks.post)
                await self._post(receive, send, headers, scope)
                return
            refusal = self.checks.request(headers)
            if refusal is not None:
                await refuse(send, refusal)
            elif sse is not None:  # the HTTP+SSE transport's two endpoints
                await sse.handle(scope, receive, send, headers, route)
            elif method == "GET":
                await self._get(receive, send, headers)
            elif method == "DELETE":
                await self._delete(send, headers)
            else:
                await refuse(
                    send,
                    h.refuse(
                        405,
                        f"Method Not Allowed: {method}; this endpoint serves POST, GET and DELETE",
                        headers=(("allow", "GET, POST, DELETE"),),
                    ),
                )
        except Disconnected:
            return
        except StateUnavailable as exc:  # the backend (Redis) is down: the request was fine, retry it
            log.warning("state backend unavailable: %s", exc)
            refusal = h.refuse(
                503,
                f"Service Unavailable: the server's state store is unavailable ({exc}); "
                f"the request itself is fine: retry after {exc.retry_after} s",
                headers=(("retry-after", str(exc.retry_after)),),
            )
            with contextlib.suppress(Exception):  # the response may have started already
                await refuse(send, refusal)

    # ================================================================ POST
    async def _post(self, receive: Receive, send: Send, headers: dict[str, str], scope: Scope | None = None) -> None:
        verdict = self.checks.post(headers)
        if type(verdict) is not Verdict:  # the refusal
            # Read (and drop) the body first, as every other answer does: refusing mid-request
            # races the server's HTTP parser on a malformed body (h11: a response in MUST_CLOSE).
            with contextlib.suppress(TooLarge):
                await streams.read_body(receive, headers, self.max_body_size)
            await refuse(send, cast("h.Refusal", verdict))
            return
        try:
            first = await receive()  # the whole body, as servers deliver a small one: no coroutine
            body = streams.body_part(first, headers, self.max_body_size)
            if first.get("more_body", False):
                body = await streams.read_body(receive, headers, self.max_body_size, first)
        except TooLarge:
            await refuse(
                send,
                h.refuse(413, f"Payload Too Large: the body exceeds this server's limit of {self.max_body_size} bytes"),
            )
            return
        try:
            post = read_post(body, headers, verdict)
        except h.BadBody as exc:
            await refuse(send, exc.refusal)
            return
        if post.era is not h.MODERN:  # select_era returns one of the two constants
            await self._post_legacy(receive, send, headers, post, verdict, scope)
            return
        if post.batch:
            await refuse(send, h.refuse(400, "Invalid Request: JSON-RPC batches are not part of protocol 2026-07-28"))
            return
        message = post.messages[0]
        refusal = h.check_standard_headers(headers, message, self.param_headers, self.checks.decode_name)
        if refusal is not None:
            await refuse(send, refusal)
            return
        if not post.requests:
            await plain(send, 202, b"")  # core 2026-07-28 defines no client notifications on HTTP
            return
        answer = self.answer(message) if self.answer is not None else None
        if answer is not None and verdict.json_ok:  # JSON accepted: the answer is the whole response
            start, end = streams.json_response(answer, NO_HEADERS, h.MODERN)
            await send(start)
            await send(end)
            return
        transport = RequestTransport(body, message, verdict.json_ok, verdict.sse_ok, scope)
        await serve_post(self, receive, send, transport, answer)

    async def _post_legacy(
        self,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        post: Post,
        verdict: Verdict,
        scope: Scope | None = None,
    ) -> None:
        sid = headers.get(h.SESSION_ID)
        requests, rid = post.requests, post.id  # a refusal of one request carries its id (JSON-RPC)
        if sid is None:
            if not any(m.get("method") == "initialize" for m in requests):
                await refuse(
                    send,
                    h.refuse(
                        400,
                        "Bad Request: the Mcp-Session-Id header is required; send initialize first to open a session",
                        id=rid,
                    ),
                )
                return
            transport = self._new_session() if self.shared is None else await self.shared.create()
            if transport is None:
                await refuse(send, at_capacity(self.max_sessions, self.session_timeout, rid))
                return
        else:
            found = await self._find(sid)
            if found is None:
                await refuse(send, h.refuse(404, GONE, id=rid))
                return
            transport = found
            if verdict.version_refusal is not None:
                await refuse(send, dataclasses.replace(verdict.version_refusal, id=rid))
                return
        # The id goes out once, on the response that opens the session (spec 2025-03-26+ transports
        # §Session Management: "on the HTTP response containing the InitializeResult"); the client
        # sends it, so later responses do not repeat it.
        session_header = transport.session_header if sid is None else NO_HEADERS
        if not requests:  # notifications and responses: accepted, answered with nothing
            await transport.deliver(post.body, post.messages, post.batch)  # decoded once
            await plain(send, 202, b"", session_header)
            return
        if rid is not None:  # one request, as every POST but a 2025-03-26 batch: no lists
            ids, busy = None, rid if transport.answering(rid) else None  # ids None: {rid}, made if needed
        else:
            order = [m["id"] for m in requests]
            ids, busy = set(order), next((r for r in order if transport.answering(r)), None)
        if busy is not None:
            await refuse(
                send,
                h.refuse(400, f"Invalid Request: request id {busy!r} is already in flight in this session", id=busy),
            )
            return
        stream = transport.deliver_post(
            post.body, post.messages, ids, verdict.json_ok, verdict.sse_ok, post.priming, scope, post.batch
        )
        if type(stream) is bytes:  # answered on this stack: the whole response, no stream
            start, end = streams.json_response(stream, session_header, h.LEGACY)
            await send(start)
            await send(end)
            return
        if not isinstance(stream, Stream):  # not at once: a delivery to finish
            stream = await cast("Awaitable[Stream | bytes]", stream)  # (not bytes: the type() above)
            if isinstance(stream, bytes):
                await streams.send_json(send, stream, session_header, h.LEGACY)
                return
        await stream.pump(  # a hang-up (not a cancellation) is watched once it matters
            send, session_header, receive, sse_after=self.sse_after, keepalive=self.keepalive, retry_ms=self.retry_ms
        )

    # ================================================================ GET and DELETE
    async def _session_of(self, headers: Mapping[str, str]) -> tuple[LegacyTransport | None, h.Refusal | None]:
        sid = headers.get(h.SESSION_ID)
        if sid is None:
            if h.select_era(headers, []) is h.MODERN:  # a version that is no legacy one: stateless
                return None, h.refuse(
                    405,
                    f"Method Not Allowed: protocol {headers[h.PROTOCOL_VERSION].strip()} has no sessions; "
                    "send requests with POST",
                    headers=(("allow", "POST"),),
                )
            return None, h.refuse(400, "Bad Request: the Mcp-Session-Id header is required")
        found = await self._find(sid)
        return found, None if found is not None else h.refuse(404, GONE)

    async def _find(self, sid: str) -> LegacyTransport | None:
        """The live session ``sid`` (here, or on another process when shared) the caller may use."""
        found = self.sessions.get(sid)
        if self.shared is not None:
            found = await self.shared.find(sid, found)
        return found if found is not None and not found.closed and admits(self.caller, found) else None

    async def _get(self, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        transport, refusal = await self._session_of(headers)
        if transport is None:
            await refuse(send, refusal)  # type: ignore[arg-type]
            return
        version, refusal = h.check_legacy_version(headers)
        refusal = refusal or h.check_get(headers)
        if refusal is not None:
            await refuse(send, refusal)
            return
        priming = h.priming(version)
        last = headers.get(h.LAST_EVENT_ID)
        replay: list[tuple[str, bytes]] = []
        if last is not None and self.event_store is not None:
            parsed = h.parse_event_id(last)
            live = transport.streams.get(parsed[0]) if parsed is not None else None
            if live is not None and live.attached:
                await refuse(send, h.refuse(409, "Conflict: that stream is already being read"))
                return
            found = await self.event_store.replay_after(transport.id, last)
            if found is None:  # a replay with a hole would lose messages silently: refuse it
                why = "the id is unknown, or events after it were discarded (the event store keeps them"
                why += " for a limited time and size); re-send the requests whose answers you are missing"
                await refuse(send, h.refuse(404, f"Not Found: cannot resume at Last-Event-ID {last!r}: {why}"))
                return
            replay = found[1]
            stream = live if live is not None or self.shared is None else self.shared.resume(transport, last, *found)
            if live is not None:
                live.reattach()
            elif stream is None:  # that stream is complete: replay it, then end
                stream = Stream(found[0], era=h.LEGACY, json_ok=False, store=self.event_store, session_id=transport.id)
                stream.finished = True
        else:
            stream = transport.open_get_stream(priming=priming)
            if stream is None:
                await refuse(send, h.refuse(409, "Conflict: this session already has a GET stream open"))
                return
        assert stream is not None
        transport.last_active = time.monotonic()
        await stream.pump(
            send, NO_HEADERS, receive, sse_after=0.0, keepalive=self.keepalive, retry_ms=self.retry_ms, replay=replay
        )

    async def _delete(self, send: Send, headers: dict[str, str]) -> None:
        transport, refusal = await self._session_of(headers)
        if transport is None:
            await refuse(send, refusal)  # type: ignore[arg-type]
            return
        if self.shared is not None:
            await self.shared.delete(transport)  # type: ignore[arg-type]
        self.end_session(transport, abort=True)
        await plain(send, 200, b"")

    # ================================================================ sessions
    def _new_session(self) -> LegacyTransport | None:
        if len(self.sessions) >= self.max_sessions:
            return None
        return self.start_session(LegacyTransport, h.new_session_id())

    def start_session(self, make: type[_Legacy], sid: str, **kw: Any) -> _Legacy:
        """Make, register and run session ``sid`` (new, or a local copy of a shared one) with this
        app's event store, SSE retry and the Caller its task holds (admits); reap idle ones."""
        caller = current(self.caller)
        kw.setdefault("owner", caller.principal if caller is not None else None)  # a new session's
        transport = make(sid, store=self.event_store, retry_ms=self.retry_ms, caller=caller, **kw)
        self.sessions[sid] = transport
        self.run_session(transport, sid)
        if self._reaper is None and self.session_timeout > 0:
            self._reaper = self._spawn(self._reap())
        return transport

    def run_session(self, transport: LegacyTransport | SSETransport, sid: str) -> None:
        async def run() -> None:
            try:
                await self.serve(transport, False)
            except Exception:
                log.exception("HTTP session %s failed", sid)
            finally:
                transport.terminate()
                transport.end_streams()
                if self.sessions.get(sid) is transport:
                    del self.sessions[sid]
                if self.event_store is not None and transport.owns_events:
                    try:
                        await self.event_store.forget(sid)
                    except StateUnavailable:  # Redis down: its keys expire on their own (ttl)
                        log.info("session %s ended while the state store was unreachable", sid)

        self._spawn(run())

    def end_session(self, transport: LegacyTransport, *, abort: bool = False) -> None:
        """End a session now (DELETE, expiry, shutdown): its id answers 404 from here on.
        ``abort`` (DELETE): its requests in flight are cancelled too, queued ones never start."""
        if self.sessions.get(transport.id) is transport:
            del self.sessions[transport.id]
        if abort:
            transport.abort()
        else:
            transport.terminate()

    async def _reap(self) -> None:
        period = max(0.05, min(30.0, self.session_timeout / 4))
        while True:
            await asyncio.sleep(period)
            if self.shared is not None:
                await self.shared.reap()
                continue
            now = time.monotonic()
            for t in list(self.sessions.values()):
                if t.idle_for(now) > self.session_timeout:
                    log.info("HTTP session %s expired after %.0f s idle", t.id, self.session_timeout)
                    self.end_session(t)

    # ================================================================ life cycle
    def _spawn(self, coro: Any, *, eager: bool = False) -> asyncio.Task[Any]:
        """A task of the app's running ``coro``; ``eager``: started at once on this stack, up to
        its first wait, where the Python has eager tasks (3.12+; asyncio.Task(eager_start=))."""
        loop = asyncio.get_running_loop()
        if sys.version_info >= (3, 12) and eager:
            task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, eager_start=True)
        else:
            task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def requests(self) -> list[RequestTransport]:
        """The modern requests in flight now, listen streams too (a copy: ending one changes the map)."""
        return list(self._requests)

    async def ensure_started(self) -> None:
        """Enter the server's lifespan once, on the serving loop (also when no ASGI lifespan
        events arrive, e.g. when mounted in a router that does not forward them)."""
        if self._started is None:
            self._started = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._spawn(self._hold_lifespan())
        await asyncio.shield(self._started)

    async def _hold_lifespan(self) -> None:
        assert self._started is not None and self._stop is not None
        try:
            if self.state is not None:
                await self.state.start()  # StateUnavailable: the server does not start
            try:
                async with self._lifespan() if self._lifespan is not None else contextlib.nullcontext():
                    self._started.set_result(None)
                    self._running = True
                    await self._stop.wait()
                    await self._close_sessions()
            finally:
                if self.state is not None:
                    await self.state.aclose()
        except BaseException as exc:
            if not self._started.done():
                self._started.set_exception(exc)
            raise

    async def _close_sessions(self) -> None:
        for t in list(self.sessions.values()):
            self.end_session(t)
        for r in self.requests():
            end_request(self, r)
        if self.sse is not None:
            self.sse.close_all()
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        if self.shared is not None:
            self.shared.close()
        pending = [t for t in self._tasks if t is not asyncio.current_task()]
        if pending:
            await asyncio.wait(pending, timeout=5)

    async def aclose(self) -> None:
        """End every session and leave the server's lifespan."""
        if self._stop is not None:
            self._stop.set()
            waiting = [t for t in self._tasks if t is not asyncio.current_task()]
            if waiting:
                await asyncio.wait(waiting, timeout=10)
        self._started = None
        self._running = False

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """For frameworks that take a lifespan (``Starlette(lifespan=mcp_app.lifespan)``)."""
        await self.ensure_started()
        try:
            yield
        finally:
            await self.aclose()
