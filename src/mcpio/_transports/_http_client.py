"""Streamable HTTP, client side: one transport for both protocol eras (httpx, an optional extra).

:class:`HTTPClientTransport` keeps the transport seam (``send``/``receive``/``aclose``): the
Session writes JSON-RPC frames and reads frames, as over stdio; HTTP is this module's business.
Each message is inspected once, and the HTTP rules come from ``_protocol/_http_client_rules``:

* **A request** is POSTed in a task of its own (so a slow answer never holds up the next
  request); the answer — a JSON body, or an SSE stream whose events (progress, logs, requests
  from the server in the legacy era) all go to ``receive`` — ends the task. When a kept-alive
  connection is idle, the task is spared: the POST goes on the caller's stack and a whole
  JSON answer is delivered from the callback that read it (the backend's ``send_nowait``);
  any other answer (a stream, a failure, a legacy 404) goes on in a task from there. A request from the
  server on that stream goes as a ``Related`` frame naming the request it came with (the
  ``relates`` ability), so the Session serves it in the context of the call it belongs to. An
  HTTP failure without a JSON-RPC error body becomes a JSON-RPC error for that request id (code
  -32000, with ``data.status``), so the caller gets an exception and era detection reads "not
  modern".
  If nothing ever reached the server (connection refused …), the transport ends instead, and
  the connection fails with that reason.
* **A burst of requests** (a host pipelining thousands of calls through ``mcpio run URL``):
  at most ``MAX_REQUESTS_IN_FLIGHT`` are POSTed at once, on at most ``MAX_CONNECTIONS`` kept-alive
  connections; the rest wait their turn in this transport, in order, not in the HTTP pool
  (httpx's costs time in proportion to what is queued in it, and can stall past a server's
  header timeout); the slot an answer frees POSTs the next at once, on the connection it freed.
* **Frames read** go to the engine's ``take`` through ``hand_over`` (``push``), else wait for ``receive``.
* **Notifications and responses** are POSTed before ``send`` returns (202 expected), which
  keeps ``notifications/initialized`` ahead of the requests that follow it.
* **Legacy era** (a message without 2026-07-28 ``_meta``): the ``Mcp-Session-Id`` of the
  initialize answer and the negotiated ``MCP-Protocol-Version`` go on every later request;
  after ``notifications/initialized`` a GET opens the standalone SSE stream (405: the server
  has none); a response stream that ends before its answer is resumed with GET +
  ``Last-Event-ID`` after the server's ``retry`` (SEP-1699), as is the GET stream; a 404 on a
  request with a session id means the session ended: initialize once more (the same
  initialize request, answered here) and retry the request once (these three:
  ``_http_client_legacy``); ``aclose`` sends DELETE.
  ``notifications/cancelled`` is POSTed (a disconnect is no cancellation in this era).
* **Modern era** (2026-07-28 ``_meta``): POST only, with ``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` (the ``x-mcp-header`` arguments of the tools
  that :meth:`accept_tools` saw in ``tools/list``, which also drops the tools whose annotations
  are invalid); an answer comes as JSON or a request-scoped SSE stream; closing that stream is
  the cancellation, so ``notifications/cancelled`` is not POSTed: the request's task is
  cancelled, which closes its stream.
* **HTTP+SSE** (2024-11-05, deprecated): when the POSTed ``initialize`` gets 400/404/405
  without a recognised modern error, a GET to the URL expecting an ``endpoint`` event is tried
  (``_http_client_sse``); from then on every message goes that way.

**HTTP/2**: with the ``h2`` package (the ``http2`` extra) the client offers h2 in TLS's ALPN and
uses it when the server accepts (one connection for every request and stream); otherwise, and
over ``http://``, HTTP/1.1. ``verify`` is httpx's: True (the system's CAs), False, an
``ssl.SSLContext``, or a PEM file of CAs to trust; a certificate that fails verification ends
the connection with one line saying so. ``key`` (``"http:" + url``) names the server for the era
cache; ``close_reason`` says why the transport ended.

A hostile server cannot exhaust the client: SSE is parsed incrementally in linear time, an SSE
event or a JSON body over ``max_message_size`` bytes (256 MiB, as the stdio client's line cap)
fails the request with a clear error instead of being buffered, and every read yields to the
event loop, so the Session's ``timeout`` holds however the server trickles or floods bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import ssl
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from .._errors import EndOfStream, TransportError
from .._jsonrpc import DEFAULT_MAX_LINE_SIZE, decode_json
from .._protocol import _http as h
from .._protocol import _http_client_rules as rules
from .._protocol._framing import Decoded, Related
from .._shown import shown
from ._base import Abilities, hand_over
from ._http_backend import Answer, Backend, HttpxBackend, make_backend
from ._http_body import DRAIN_SECONDS, BodyTooLarge, content_type, read_capped, verify_message
from ._http_client_legacy import LegacyStreams
from ._http_client_sse import HTTPSSEConnection

log = logging.getLogger("mcpio.client")

MAX_CONNECTIONS = 100  # per transport (one origin)
# Requests POSTed at once (the rest wait here: the module docstring); the other connections stay
# free for notifications, responses to the server's requests and GET streams.
MAX_REQUESTS_IN_FLIGHT = 90
# Answered SSE streams read to their end at once (DRAIN_SECONDS each); another is closed at once:
# streams a server never closes must not hold the connections new requests need
MAX_DRAINS = MAX_CONNECTIONS - MAX_REQUESTS_IN_FLIGHT


class HTTPClientTransport:
    """Client side of Streamable HTTP, both eras (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        http_sse: bool = True,
        client: httpx.AsyncClient | None = None,
        max_message_size: int = DEFAULT_MAX_LINE_SIZE,
        auth: httpx.Auth | None = None,
        verify: bool | str | os.PathLike[str] | ssl.SSLContext = True,
    ) -> None:
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be positive, not {max_message_size!r}")
        self.url, self.shown_url = url, shown(url)  # used; named in errors and logs (._shown)
        self.max_message_size = max_message_size  # one SSE event or JSON body, in bytes
        self.auth = auth  # authorization (mcpio._auth.OAuth): adds the token, answers 401/403
        self.verify = verify
        self.http_version: str | None = None  # of the last response: "HTTP/2" or "HTTP/1.1"
        self.abilities = Abilities(
            close_reason=self.close_reason,
            relates=True,
            key="http:" + url,
            open=self.open,
            accept_tools=self.accept_tools,
            push=self.push,
            send_nowait=self.send_nowait,
        )
        self._take: Any = None  # the engine's (Abilities.push)
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.http_sse = http_sse
        self._http: Backend | None = None if client is None else HttpxBackend(client, own=False)
        self._frames: deque[bytes | Decoded | Related] = deque()  # for receive(), in order; then _eof
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None  # receive() waiting for a frame or the end
        self._tasks: set[asyncio.Task[Any]] = set()
        self._drains = 0  # answered streams being read to their end (MAX_DRAINS)
        self._free = MAX_REQUESTS_IN_FLIGHT  # more requests that may be POSTed now (the module docstring)
        # requests waiting their turn: (message, frame, modern, their entry in _requests meanwhile)
        self._turns: deque[tuple[dict[str, Any], bytes, bool, Any]] = deque()
        self.held = False  # the turns wait (the standalone GET goes out first: LegacyStreams.initialized)
        # id -> (what cancels it, method, modern)
        self._requests: dict[Any, tuple[Callable[[], Any], str, bool]] = {}
        # id -> set when its answer arrives, by any stream; made only when awaited (a legacy resume)
        self._answered: dict[Any, asyncio.Event | None] = {}
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # legacy: the negotiated version
        self._legacy = LegacyStreams(self)  # the legacy era's GET streams and new sessions
        self._tools: dict[str, dict[str, tuple[str, ...]]] = {}
        self.modern = False  # the era of the last request sent
        self._sse: HTTPSSEConnection | None = None
        self._reached = False  # some HTTP exchange completed: failures are per request from now on
        self._failure: str | None = None
        self._closed = False

    # ------------------------------------------------------------------ the transport seam
    async def open(self) -> None:
        if self._http is None:
            # Idle connections are dropped after 2 s, before common servers drop them (uvicorn:
            # 5 s): reusing one the server is closing loses the request with a ReadError.
            self._http = make_backend(
                self.url,
                headers=self.headers,
                timeout=self.timeout,
                auth=self.auth,
                verify=self.verify,
                on_response=self._saw,
                max_connections=MAX_CONNECTIONS,
                keepalive_expiry=2.0,
            )

    def _saw(self, resp: Answer) -> None:
        self.http_version = resp.http_version

    async def receive(self) -> bytes | Decoded | Related:
        while not self._frames:
            if self._eof:
                raise EndOfStream()
            self._waiter = asyncio.get_running_loop().create_future()  # done once woken or cancelled
            await self._waiter
        return self._frames.popleft()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def send(self, frame: bytes) -> None:
        if self._closed or self._failure is not None:
            raise TransportError(self._failure or f"the HTTP connection to {self.shown_url} is closed")
        msg = decode_json(frame)
        if not isinstance(msg, dict):
            raise TransportError("this client does not send JSON-RPC batches over HTTP")
        if self._sse is not None:
            await self._sse.send(msg, frame)
            return
        method = msg.get("method")
        if method is not None and "id" in msg:
            self._post(msg, method, frame)
            return
        if method == "notifications/cancelled":
            rid = (msg.get("params") or {}).get("requestId")
            entry = self._requests.get(rid)
            if entry is not None and entry[2]:  # modern: closing the response stream cancels
                entry[0]()
                return
            await self._post_quietly(msg, frame)
            if entry is not None:  # legacy: no answer will come; stop reading for one
                entry[0]()
            return
        await self._post_quietly(msg, frame)
        if method == "notifications/initialized":
            self._legacy.initialized()

    def send_nowait(self, frame: bytes, now: bool = False) -> bool:
        """:meth:`send` of a request (POSTed now, or when its turn comes: no waiting): True. Else False."""
        msg = None if self._closed or self._failure is not None or self._sse is not None else decode_json(frame)
        if type(msg) is not dict or "id" not in msg or msg.get("method") is None:
            return False
        self._post(msg, msg["method"], frame)
        return True

    def _post(self, msg: dict[str, Any], method: str, frame: bytes) -> None:
        refused = rules.unsendable(msg)
        if refused is not None:  # answered now: no POST could carry it
            self._fail(msg["id"], refused)
            return
        modern = h.modern_meta(msg) is not None
        self.modern = modern
        id_ = msg["id"]
        if method == "initialize" and not modern:
            self._legacy.initialize = msg
        self._answered[id_] = None
        waiting = functools.partial(self._settled, id_, False)  # what cancels it until its turn
        self._requests[id_] = (waiting, method, modern)
        self._turns.append((msg, frame, modern, waiting))
        self._next()

    def _next(self) -> None:
        """POST the requests waiting their turn, in order, while fewer than the most are in
        flight: on a kept-alive connection at once, the answer by callback (no task; not an
        ``initialize``, whose answer may switch transports); else in a task."""
        turns = self._turns
        while turns and self._free > 0 and not self.held:
            msg, frame, modern, waiting = turns.popleft()
            id_, method = msg["id"], msg["method"]
            if self._requests.get(id_, (None,))[0] is not waiting:  # cancelled while it waited
                continue
            assert self._http is not None, "open() first"
            self._free -= 1
            done = functools.partial(self._answered_now, msg, frame, modern)
            cancel = (
                self._http.send_nowait("POST", self.url, frame, self._post_headers(msg), done)
                if method != "initialize"
                else None
            )
            if cancel is not None:
                self._requests[id_] = (functools.partial(self._abandon, id_, cancel), method, modern)
            else:
                self._requests[id_] = (self._spawn(self._request(msg, frame)).cancel, method, modern)

    def _answered_now(self, msg: dict[str, Any], frame: bytes, modern: bool, resp: Any, exc: Any) -> None:
        """The answer to ``msg`` POSTed without a task: a whole JSON body is delivered now;
        anything else (a stream, a failure, a legacy 404) is read on in a task, as ever."""
        id_ = msg["id"]
        body = None if exc is not None else resp.body
        if (
            body is None
            or len(body) > self.max_message_size
            or content_type(resp) == h.SSE
            or (resp.status_code == 404 and not modern)
        ):
            going_on = self._request(msg, frame, (resp, exc))
            self._requests[id_] = (self._spawn(going_on).cancel, msg["method"], modern)
            return
        self._reached = True
        try:
            self._adopt_session(resp, legacy=not modern)
            self._answer_body(id_, resp.status_code, resp.reason_phrase, body)
        finally:
            self._settled(id_)

    def _abandon(self, id_: Any, cancel: Callable[[], None]) -> None:
        cancel()
        self._settled(id_)

    def resume_turns(self) -> None:
        self.held = False
        self._next()

    def _settled(self, id_: Any, posted: bool = True) -> None:
        """Request ``id_`` is over: answered or given up after it was POSTed without a task (its
        slot is free), or given up while it waited its turn (``posted=False``: ``_next`` skips it)."""
        self._answered.pop(id_, None)
        if self._requests.pop(id_, None) is not None and posted:
            self._free += 1
            self._next()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._turns.clear()  # (first: a request given up below frees a slot, which starts no other)
        for cancel, _, _ in list(self._requests.values()):
            cancel()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        if self._sse is not None:
            await self._sse.aclose()
        elif self.session_id is not None and self._http is not None:
            with contextlib.suppress(Exception):  # the spec's SHOULD; 405 is a fine answer
                async with asyncio.timeout(2):
                    async with self._http.stream("DELETE", self.url, headers=self._legacy_headers()):
                        pass
        if self._http is not None:
            with contextlib.suppress(Exception):
                await self._http.aclose()
        self._ended()

    async def close_reason(self) -> str:
        return self._failure or f"the HTTP connection to {self.shown_url} was closed"

    # ------------------------------------------------------------------ tools (x-mcp-header)
    def accept_tools(self, tools: list[Any]) -> list[Any]:
        """``tools/list`` items, without the tools whose ``x-mcp-header`` annotations are invalid
        (2026-07-28: a client MUST drop them); remembers each tool's ``Mcp-Param-*`` headers."""
        if not self.modern:
            return tools
        kept, dropped = rules.accepted_tools(tools, self._tools)
        for name, problem in dropped:
            log.warning("ignoring tool %r from %s: %s", name, self.shown_url, problem)
        return kept

    # ------------------------------------------------------------------ internals
    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _legacy_headers(self, **extra: str) -> dict[str, str]:
        out = dict(extra)
        if self.session_id is not None:
            out[h.SESSION_ID] = self.session_id
        if self.protocol_version is not None:
            out[h.PROTOCOL_VERSION] = self.protocol_version
        return out

    def _post_headers(self, msg: dict[str, Any]) -> dict[str, str]:
        return rules.post_headers(
            msg, session_id=self.session_id, protocol_version=self.protocol_version, params_for=self._tools.get
        )

    def _deliver(self, data: bytes | str, waiting: Any = None, doc: Any = None) -> bool:
        """Hand one JSON-RPC message to ``receive``; True if it answers request ``waiting`` (the
        request whose response stream it came on, if any). ``doc``: ``data`` parsed already."""
        raw = data.encode() if isinstance(data, str) else data
        if doc is None:
            if not raw.strip():
                return False
            doc, is_json = rules.decoded(raw)  # as the session would
            if not is_json:
                log.warning("skipping a message from %s that is not JSON: %.200r", self.shown_url, raw)
                return False
        answered = asks = False
        for msg in doc if isinstance(doc, list) else [doc]:
            if not isinstance(msg, dict):
                continue
            if "method" in msg:
                asks = asks or "id" in msg
            elif "result" in msg or "error" in msg:
                id_ = msg.get("id")
                entry = self._requests.get(id_)
                if entry is not None and entry[1] == "initialize" and isinstance(msg.get("result"), dict):
                    version = msg["result"].get("protocolVersion")
                    self.protocol_version = version if isinstance(version, str) else None
                event = self._answered.pop(id_, None)
                if event is not None:
                    event.set()
                answered = answered or (waiting is not None and id_ == waiting)
        # A request on the stream of our request ``waiting`` relates to it (abilities.relates)
        frame = Related(raw, waiting) if asks and waiting is not None else Decoded(raw, doc)
        if hand_over(self._take, [frame], self._frames):
            self._wake()
        return answered

    def push(self, take: Any) -> None:
        self._take = take

    def _fail(self, id_: Any, error: dict[str, Any]) -> None:
        """Answer our own request ``id_`` with ``error`` (an HTTP failure, as JSON-RPC)."""
        self._deliver(json.dumps({"jsonrpc": "2.0", "id": id_, "error": error}))

    def _unreachable(self, id_: Any, exc: Exception) -> None:
        if not self._reached and isinstance(exc, httpx.TransportError):
            # Nothing ever got through: the server is not there; end the connection with why.
            reason = f"cannot reach the MCP server at {self.shown_url}: {exc or type(exc).__name__}"
            if "CERTIFICATE_VERIFY_FAILED" in str(exc):
                reason = (
                    f"cannot reach the MCP server at {self.shown_url}: its TLS certificate is not trusted "
                    f"({verify_message(exc)}); if it is yours, trust the CA that signed it: "
                    "Client(..., verify='ca.pem'), or SSL_CERT_FILE=ca.pem for mcpio commands"
                )
            self._ended(reason)
            return
        self._fail(id_, rules.http_failure(None, f"POST {self.shown_url} failed: {str(exc) or type(exc).__name__}"))

    async def _post_quietly(self, msg: dict[str, Any], frame: bytes) -> None:
        """POST a notification or a response: 202 is expected; a failure is logged."""
        assert self._http is not None, "open() first"
        try:
            async with self._http.stream("POST", self.url, content=frame, headers=self._post_headers(msg)) as resp:
                self._reached = True
                status = resp.status_code
                try:
                    body = await read_capped(resp, min(self.max_message_size, 65536))  # nothing is expected here
                except BodyTooLarge as exc:
                    body = str(exc).encode()
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.shown_url} failed: {str(exc) or type(exc).__name__}") from None
        if status >= 300:
            log.warning(
                "%s: the server answered HTTP %d to %s: %.200s",
                self.shown_url,
                status,
                msg.get("method", "a response"),
                body.decode("utf-8", "replace"),
            )

    async def _request(self, msg: dict[str, Any], frame: bytes, first: tuple[Any, Any] | None = None) -> None:
        """POST request ``msg`` in its in-flight slot (``_next``) and read its answer; ``first``:
        the response to it (or the error) that came already (``_answered_now``)."""
        id_, method = msg["id"], msg["method"]
        modern = h.modern_meta(msg) is not None
        held = True

        def release() -> None:  # the in-flight slot, once: when the answer is in, or at the end
            nonlocal held
            if held:
                held = False
                self._free += 1
                self._next()

        try:
            await self._post_request(msg, frame, id_, method, modern, release, first)
        except asyncio.CancelledError:
            raise
        except httpx.HTTPError as exc:
            self._unreachable(id_, exc)
        except (h.SSETooLarge, BodyTooLarge) as exc:
            self._fail(id_, rules.http_failure(None, f"{exc} (POST {self.shown_url})"))
        except ValueError as exc:  # a header no POST can carry (a client option's): answered, never left waiting
            self._fail(id_, rules.http_failure(None, f"POST {self.shown_url} failed: {exc}"))
        finally:
            release()
            self._requests.pop(id_, None)
            self._answered.pop(id_, None)

    async def _post_request(
        self,
        msg: dict[str, Any],
        frame: bytes,
        id_: Any,
        method: str,
        modern: bool,
        release: Callable[[], None],
        first: tuple[Any, Any] | None,
    ) -> None:
        """POST request ``id_`` and read its answer (a 404 of an ended legacy session: once more in a new one)."""
        assert self._http is not None, "open() first"
        for attempt in (0, 1):
            headers = self._post_headers(msg)
            sent = (
                self._http.stream("POST", self.url, content=frame, headers=headers) if first is None else _Sent(*first)
            )
            first = None
            async with sent as resp:
                self._reached = True
                status = resp.status_code
                if (
                    status == 404
                    and attempt == 0
                    and not modern
                    and method != "initialize"
                    and headers.get(h.SESSION_ID) is not None
                ):
                    await read_capped(resp, self.max_message_size)
                    if await self._legacy.reinitialize(headers[h.SESSION_ID]):
                        continue  # the same request, in the new session
                if method == "initialize" and not modern and status in (400, 404, 405) and self.http_sse:
                    body = await read_capped(resp, self.max_message_size)
                    if rules.use_http_sse(status, body) and await self._open_http_sse():
                        await self._sse.send(msg, frame)  # type: ignore[union-attr]
                        return
                    self._answer_body(id_, status, resp.reason_phrase, body)
                    return
                await self._read_answer(resp, id_, release, legacy=not modern)
                return

    async def _read_answer(self, resp: Answer, id_: Any, release: Callable[[], None], *, legacy: bool) -> None:
        """Read the answer to request ``id_`` from ``resp`` (JSON or SSE) into ``receive``.

        Once the answer is in, ``release`` frees the request's in-flight slot and the rest of an
        SSE stream is read (delivered as before the answer) to its end, so that its connection
        is reused, for at most ``DRAIN_SECONDS``: past that, or if reading fails, the response is
        closed with its connection; the request is answered either way."""
        status = resp.status_code
        self._adopt_session(resp, legacy)
        if status == 200 and content_type(resp) == h.SSE:
            parser = h.SSEParser(self.max_message_size)
            answered = draining = False
            try:
                async with asyncio.timeout(None) as bound:
                    async for chunk in resp.aiter_bytes():
                        for ev in parser.feed(chunk):
                            if self._deliver(ev.data, id_) and not answered:
                                answered = True
                                release()
                                draining = self._drains < MAX_DRAINS
                                self._drains += draining
                                bound.reschedule(asyncio.get_running_loop().time() + DRAIN_SECONDS * draining)
            except (TimeoutError, httpx.HTTPError, h.SSETooLarge) as exc:
                if not answered:  # (the bound is set only once answered)
                    raise
                log.debug("%s: the stream of the answered request %r was closed: %r", self.shown_url, id_, exc)
            finally:
                self._drains -= draining
            if answered:
                return
            if legacy and parser.last_event_id is not None:
                await self._legacy.resume(id_, parser.last_event_id, parser.retry)
                return
            self._fail(
                id_,
                rules.http_failure(None, "the server ended the response stream before answering; the request was lost"),
            )
            return
        self._answer_body(id_, status, resp.reason_phrase, await read_capped(resp, self.max_message_size))

    def _adopt_session(self, resp: Answer, legacy: bool) -> None:
        if legacy and resp.status_code == 200 and resp.headers.get(h.SESSION_ID) and self.session_id is None:
            self.session_id = resp.headers[h.SESSION_ID]

    def _answer_body(self, id_: Any, status: int, reason: str, body: bytes) -> None:
        """A JSON answer, or the JSON-RPC error for an HTTP failure (``body`` parsed once)."""
        doc, is_json = rules.decoded(body)
        found = rules.error_of(doc)
        if found is not None and found[0] is None:  # an error that could not name our request
            self._fail(id_, found[1])
        elif is_json and (status < 300 or found is not None) and self._deliver(body, id_, doc):
            # a refusal's own JSON (401 {"error": "invalid_token"}) is not a message: not delivered
            return
        elif status < 300:
            self._fail(id_, rules.http_failure(status, "the server sent no answer to the request"))
        else:
            self._fail(id_, rules.http_failure(status, reason, body))

    async def _open_http_sse(self) -> bool:
        """Switch to the deprecated HTTP+SSE transport if the server offers it."""
        assert self._http is not None
        conn = HTTPSSEConnection(self._http, self.url, self._deliver, self._ended, self.max_message_size)
        if not await conn.open(self.timeout):
            return False
        log.info("%s speaks the deprecated HTTP+SSE transport (2024-11-05); using it", self.shown_url)
        self._sse = conn
        return True

    def _ended(self, reason: str | None = None) -> None:
        """No frame after those queued: receive() ends once it has given them; ``reason``: why."""
        if reason is not None:
            self._failure = reason
        self._eof = True
        self._wake()


class _Sent:
    """``async with``, as ``stream()``, of a response that came already (or of its error)."""

    def __init__(self, resp: Any, exc: BaseException | None) -> None:
        self.resp, self.exc = resp, exc

    async def __aenter__(self) -> Any:
        if self.exc is not None:
            raise self.exc
        return self.resp

    async def __aexit__(self, *exc: object) -> None:
        await self.resp.aclose()
