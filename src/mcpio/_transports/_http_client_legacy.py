"""The legacy era's streams for the Streamable HTTP client transport (``_http_client``):

* **the standalone GET stream** for what the server sends outside any request, opened after
  ``notifications/initialized`` (405: the server has none) and reconnected per the server's
  ``retry`` with ``Last-Event-ID``;
* **resuming** a response stream that ended before its answer: GET + ``Last-Event-ID`` after
  the server's ``retry`` (SEP-1699), until the answer comes by any stream;
* **a new session** when a request with a session id gets 404 (the session ended): the same
  ``initialize`` once more, answered here, then ``notifications/initialized``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

import httpx

from .._errors import TransportError
from .._protocol import _http as h
from .._protocol import _http_client_rules as rules
from ._http_backend import Answer
from ._http_body import DRAIN_SECONDS, BodyTooLarge, content_type, json_bytes, read_capped

if TYPE_CHECKING:
    from ._http_client import HTTPClientTransport

log = logging.getLogger("mcpio.client")

MAX_RESUMES = 5  # GET + Last-Event-ID attempts for one broken response stream
MAX_GET_FAILURES = 5  # consecutive failures before the standalone GET stream is given up


class LegacyStreams:
    """The legacy era's streams of transport ``t`` (the module docstring)."""

    def __init__(self, t: HTTPClientTransport) -> None:
        self.t = t
        self.initialize: dict[str, Any] | None = None  # the legacy initialize, to start over on 404
        self._lock = asyncio.Lock()
        self._count = 0  # new sessions started
        self._get: asyncio.Task[Any] | None = None

    def initialized(self) -> None:
        """``notifications/initialized`` went: open the standalone GET stream (once), its request
        sent before those that follow (``standalone_get``), as a client that opens it at once
        sends it: a server may read the first GET after a call as that call's reconnection
        (the conformance suite's sse-retry does)."""
        if self._get is None:
            self.t.held = True
            self._get = self.t._spawn(self.standalone_get())

    async def resume(self, id_: Any, last_id: str, retry: int | None) -> None:
        """GET + ``Last-Event-ID`` until the answer to ``id_`` arrives (by any stream)."""
        t = self.t
        assert t._http is not None
        if id_ not in t._answered:
            return  # answered already
        answered = t._answered[id_]
        if answered is None:
            answered = t._answered[id_] = asyncio.Event()
        for attempt in range(MAX_RESUMES):
            await asyncio.sleep(rules.retry_delay(retry, attempt))
            if answered.is_set():
                return
            headers = t._legacy_headers(accept=h.SSE, **{h.LAST_EVENT_ID: last_id})
            try:
                async with t._http.stream("GET", t.url, headers=headers) as resp:
                    if resp.status_code != 200 or content_type(resp) != h.SSE:
                        break  # the server cannot resume this stream
                    parser = h.SSEParser(t.max_message_size)
                    reader = asyncio.ensure_future(self.pump(resp, parser, id_))
                    waiter = asyncio.ensure_future(answered.wait())
                    try:
                        await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        reader.cancel()
                        waiter.cancel()
                    if answered.is_set():
                        return
                    last_id = parser.last_event_id or last_id
                    retry = parser.retry if parser.retry is not None else retry
            except httpx.HTTPError as exc:
                log.debug("resuming the stream of request %r failed: %s", id_, exc)
            except h.SSETooLarge as exc:
                t._fail(id_, rules.http_failure(None, f"{exc} (GET {t.shown_url})"))
                return
        if answered is not None and not answered.is_set():
            t._fail(
                id_,
                rules.http_failure(None, "the response stream ended and could not be resumed; the request was lost"),
            )

    async def pump(self, resp: Answer, parser: h.SSEParser, waiting: Any = None) -> None:
        t = self.t
        async for chunk in resp.aiter_bytes():
            for ev in parser.feed(chunk):
                t._deliver(ev.data, waiting)

    async def standalone_get(self) -> None:
        """The legacy GET stream for server-initiated messages, reconnected per ``retry``."""
        t = self.t
        assert t._http is not None
        if t.held:  # the turns go on once this step has sent the GET (on an idle connection) or waits
            asyncio.get_running_loop().call_soon(t.resume_turns)
        last_id: str | None = None
        retry: int | None = None
        failures = 0
        while not t._closed and t.session_id is not None:
            extra = {h.LAST_EVENT_ID: last_id} if last_id is not None else {}
            try:
                async with t._http.stream("GET", t.url, headers=t._legacy_headers(accept=h.SSE, **extra)) as resp:
                    if resp.status_code != 200 or content_type(resp) != h.SSE:
                        log.debug("%s: no standalone GET stream (HTTP %d)", t.shown_url, resp.status_code)
                        return  # 405: none offered; 404: the session ended (the next POST starts over)
                    failures = 0
                    parser = h.SSEParser(t.max_message_size)
                    await self.pump(resp, parser)
                    last_id = parser.last_event_id or last_id
                    retry = parser.retry if parser.retry is not None else retry
            except (httpx.HTTPError, h.SSETooLarge) as exc:
                failures += 1
                if isinstance(exc, h.SSETooLarge):
                    log.warning("%s: the standalone GET stream: %s", t.shown_url, exc)
                if failures > MAX_GET_FAILURES:
                    log.warning("%s: giving up the standalone GET stream: %s", t.shown_url, exc)
                    return
            await asyncio.sleep(rules.retry_delay(retry, failures))

    async def reinitialize(self, stale: str) -> bool:
        """The session ``stale`` ended (404): initialize again with the same request; True once
        a new session is open (by this call or a concurrent one)."""
        t = self.t
        async with self._lock:
            if t.session_id != stale:
                return t.session_id is not None
            init = self.initialize
            if init is None or t._http is None:
                return False
            self._count += 1
            msg = {**init, "id": f"mcpio-reinitialize-{self._count}"}
            log.info("%s: the session ended (404); initializing a new one", t.shown_url)
            t.session_id = None
            try:
                async with t._http.stream(
                    "POST", t.url, content=json_bytes(msg), headers=rules.post_headers(msg)
                ) as resp:
                    if resp.status_code != 200:
                        return False
                    t.session_id = resp.headers.get(h.SESSION_ID)
                    await self._swallow(resp, msg["id"])
                done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await t._post_quietly(done, json.dumps(done).encode())
            except (httpx.HTTPError, TransportError, h.SSETooLarge, BodyTooLarge) as exc:
                log.warning("%s: initializing a new session failed: %s", t.shown_url, exc)
                return False
            if self._get is not None and self._get.done():
                self._get = t._spawn(self.standalone_get())
            return t.session_id is not None

    async def _swallow(self, resp: Answer, id_: Any) -> None:
        """Read (and drop) the answer to our own ``id_``; anything else is delivered."""
        t = self.t
        if content_type(resp) == h.SSE:  # read to its end once answered, as _read_answer does
            parser = h.SSEParser(t.max_message_size)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None) as bound:
                    async for chunk in resp.aiter_bytes():
                        for ev in parser.feed(chunk):
                            try:
                                doc = json.loads(ev.data)
                            except ValueError:
                                continue
                            if isinstance(doc, dict) and doc.get("id") == id_ and "method" not in doc:
                                bound.reschedule(asyncio.get_running_loop().time() + DRAIN_SECONDS)
                                continue
                            t._deliver(ev.data)
        else:
            await read_capped(resp, t.max_message_size)
