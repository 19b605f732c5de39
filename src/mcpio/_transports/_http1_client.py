"""A lean HTTP/1.1 client over asyncio for plain ``http://`` (the Streamable HTTP client's
backend where httpx is not needed: ``_http_backend`` chooses).

The rules — request head, response framing, decoding, redirects, cookies — are sans-IO in
``_protocol/_http1``; this module holds the connections and moves the bytes. It puts on the
wire what httpx would for the same call (the same headers in the same order, ``User-Agent``
included) and raises httpx's exception types with httpx's texts, so that the transport above
it reads both backends alike.

* **Connections** (``_http1_pool``): a pool of at most ``max_connections`` (across origins),
  kept alive for ``keepalive_expiry`` seconds once idle; one the server closed is never handed
  to a request, and one goes back to the pool only once its response was read to the end.
* **Without a task** (:meth:`LeanClient.send_nowait`, what a proxy forwarding calls uses): a
  request that can go at once on a kept-alive connection is written on the caller's stack,
  and its response handed over by callback on the stack that read it, its body with it when
  it came whole (two passes of the event loop a call, not four). While no cookie adds to a
  POST's head and no auth flow must run first (a ready auth's headers are part of it), the head
  is encoded once for its URL and fields, its Content-Length added per request (``_plain_post``).
* **Timeouts**: ``timeout`` bounds connecting, writing a request and waiting for a free
  connection (httpx's connect, write and pool timeouts); reading is unbounded (the transport
  and the Session bound their own waits).
* **Redirects** are followed (at most 20, as httpx); one leading off plain ``http://`` goes to
  ``fallback`` (an httpx backend made on first use), which serves it from there.
* **Authorization**: an ``httpx.Auth`` runs its flow as under httpx: it is handed an
  ``httpx.Request`` of the request about to go out (built only when ``auth`` is set), adds its
  headers, sees each response's status and headers, and may send the request again. One that
  offers ``ready_headers()`` (mcpio's ``OAuth``) is asked first: while it has nothing to do but
  add those headers, the request goes without the flow, which runs only on a 401/403 answer
  (resumed from it: the request is not sent twice) or when it says it must.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import httpx

from .._protocol import _http1 as p
from ._http1_pool import HIGH_WATER, Conn, Pool
from ._http_backend import ReadyAuth

MAX_REDIRECTS = 20
USER_AGENT = f"python-httpx/{httpx.__version__}"  # the wire stays what httpx sends (one rule for both)
DEFAULT_HEADERS = (
    ("Accept", "*/*"),
    ("Accept-Encoding", p.ACCEPT_ENCODING),
    ("Connection", "keep-alive"),
    ("User-Agent", USER_AGENT),
)


class Response:
    """A response being read: the shape the transport reads (as of an ``httpx.Response``)."""

    http_version = "HTTP/1.1"

    def __init__(self, pool: Pool, conn: Conn, method: str, head: p.Head, url: str, kind: str, length: int) -> None:
        self._pool = pool
        self._conn: Conn | None = conn
        self.status_code = head.status
        self.reason_phrase = head.reason
        self.headers = head.headers
        self.http_version = head.version
        self.url = url
        self._kind = kind
        self._length = length
        self._keep = p.keep_alive(head) and kind != "close"
        self._decoder = p.Decoder(head.headers.get("content-encoding"))
        self._buffered: bytes | None = None
        if kind == "none" or (kind == "length" and length == 0):
            self._buffered = b""
            self._finish(True)

    @property
    def body(self) -> bytes | None:
        """The whole body, once read (:meth:`read_whole`, :meth:`aread`); else None."""
        return self._buffered

    def read_whole(self) -> None:
        """Read the body at once if all of it is in already (and not content-encoded)."""
        conn = self._conn
        if conn is not None and self._kind == "length" and not self._decoder and len(conn.buf) >= self._length:
            self._buffered = bytes(conn.buf[: self._length])
            del conn.buf[: self._length]
            self._finish(True)

    def _finish(self, complete: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.release(conn, complete and self._keep)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded, piece by piece."""
        if self._buffered is not None:
            if self._buffered:
                yield self._buffered
            return
        decoder = self._decoder
        async for raw in self._raw():
            if decoder:
                try:
                    pieces = decoder.decode(raw)
                except p.BadContent as exc:
                    await self.aclose()
                    raise httpx.DecodingError(str(exc)) from None
                for piece in pieces:
                    if piece:
                        yield piece
            elif raw:
                yield raw

    async def aread(self) -> bytes:
        if self._buffered is None:
            self._buffered = b"".join([piece async for piece in self.aiter_bytes()])
        return self._buffered

    async def _raw(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        buf = conn.buf
        try:
            if self._kind == "length":
                left = self._length
                while left:
                    if buf:
                        piece = bytes(buf[:left])
                        del buf[: len(piece)]
                        left -= len(piece)
                        yield piece
                    elif conn.eof:
                        raise httpx.RemoteProtocolError(
                            "peer closed connection without sending complete message body "
                            f"(received {self._length - left} bytes, expected {self._length})"
                        )
                    else:
                        await conn.more()
            elif self._kind == "chunked":
                chunks = p.Chunked()
                while True:
                    try:
                        pieces = chunks.feed(buf)
                    except p.ProtocolViolation as exc:
                        raise httpx.RemoteProtocolError(str(exc)) from None
                    for piece in pieces:
                        yield piece
                    if chunks.done:
                        break
                    if conn.eof:
                        raise httpx.RemoteProtocolError(
                            "peer closed connection without sending complete message body (incomplete chunked read)"
                        )
                    await conn.more()
            else:  # read to the close
                while True:
                    if buf:
                        piece = bytes(buf)
                        buf.clear()
                        yield piece
                    elif conn.eof:
                        break
                    else:
                        await conn.more()
        except BaseException:
            self._finish(False)
            raise
        self._finish(True)

    async def aclose(self) -> None:
        """Done with this response: an unread rest costs its connection (closed, not reused)."""
        self._finish(False)


class _Streamed:
    """The context manager of :meth:`LeanClient.stream` (a class: no generator per request)."""

    __slots__ = ("_resp", "_sending")

    def __init__(self, sending: Coroutine[Any, Any, Any]) -> None:
        self._sending = sending
        self._resp: Any = None

    async def __aenter__(self) -> Any:
        self._resp = await self._sending
        return self._resp

    async def __aexit__(self, *exc: object) -> None:
        await self._resp.aclose()


class LeanClient:
    """The lean backend: :meth:`stream` as ``httpx.AsyncClient.stream`` for the calls the
    transport makes (``content`` bytes, ``headers``)."""

    def __init__(
        self,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        auth: httpx.Auth | None = None,
        max_connections: int = 100,
        keepalive_expiry: float = 2.0,
        fallback: Callable[[], Any] | None = None,
        on_response: Callable[[Any], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.auth = auth
        self.headers = p.merge_headers(DEFAULT_HEADERS, (headers or {}).items())
        self._pool = Pool(max_connections, keepalive_expiry, timeout)
        self._cookies = p.CookieJar()
        self._origins: dict[str, p.Origin] = {}
        self._heads: dict[
            tuple[Any, ...], tuple[bytes, bytes]
        ] = {}  # _plain_post's heads, around the Content-Length (at most 256)
        self._fallback = fallback
        self._fallback_made: Any = None
        self._on_response = on_response
        self._ready_auth = auth if isinstance(auth, ReadyAuth) else None

    def _origin(self, url: str) -> p.Origin:
        origin = self._origins.get(url)
        if origin is None:
            try:
                origin = p.split_url(url)
            except ValueError as exc:
                raise httpx.UnsupportedProtocol(str(exc)) from None
            if len(self._origins) < 64:
                self._origins[url] = origin
        return origin

    def stream(
        self, method: str, url: str, *, content: bytes | None = None, headers: dict[str, str] | None = None
    ) -> _Streamed:
        """``async with client.stream(...) as resp``: the response, closed on leaving."""
        return _Streamed(self.send(method, url, content, headers))

    def _opening(
        self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None
    ) -> tuple[p.Origin, list[tuple[str, str]], tuple[dict[str, str], str | None] | None]:
        """Request ``url``'s origin, its head fields, and a ready auth's headers and token (None:
        no auth, or its flow runs first)."""
        origin = self._origin(url)
        merged = p.merge_headers(self.headers, (headers or {}).items())
        full = p.request_head(method, origin.target, origin.netloc, merged, None, content)
        if self.auth is None:
            return origin, full, None
        cookie = self._cookies.header(origin, time.time()) if self._cookies else None
        ready_auth = self._ready_auth
        return origin, _with_cookie(full, cookie), ready_auth.ready_headers() if ready_auth is not None else None

    async def send(self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None) -> Any:
        origin, full, ready = self._opening(method, url, content, headers)
        return await self._sent(method, url, origin, full, content, ready, None)

    async def _sent(
        self,
        method: str,
        url: str,
        origin: p.Origin,
        full: list[tuple[str, str]],
        content: bytes | None,
        ready: tuple[dict[str, str], str | None] | None,
        first: Response | None,
    ) -> Any:
        """:meth:`send` from its :meth:`_opening`; ``first``: the response to the request
        already sent with ``ready``'s headers (:meth:`send_nowait`)."""
        auth = self.auth
        if auth is None:
            return await self._follow(method, url, origin, full, content, first)
        # the auth flow, as httpx runs it: each request it yields goes out (redirects followed)
        ready_auth = self._ready_auth
        resp: Any = None
        if ready_auth is not None and ready is not None:  # the flow would add these headers, nothing else
            resp = await self._follow(method, url, origin, _set_headers(full, ready[0]), content, first)
            if resp.status_code not in (401, 403):
                return resp
            request = httpx.Request(method, url, headers=full, content=content)
            flow = ready_auth.async_auth_flow(request, sent=(ready[1], await self._seen(resp, request)))
        else:
            request = httpx.Request(method, url, headers=full, content=content)
            flow = auth.async_auth_flow(request)
        step = flow.__anext__()
        try:
            while True:
                try:
                    outgoing = await step
                except StopAsyncIteration:
                    return resp
                if resp is not None:  # read to the end first, so its connection is reused (as httpx)
                    try:
                        await resp.aread()
                    finally:
                        await resp.aclose()
                fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in outgoing.headers.raw]
                resp = await self._follow(outgoing.method, str(outgoing.url), origin, fields, content)
                step = flow.asend(await self._seen(resp, outgoing))
        except BaseException:
            if resp is not None:  # the flow failed on this answer: its connection goes, not kept
                await resp.aclose()
            raise
        finally:
            await flow.aclose()

    async def _seen(self, resp: Any, request: httpx.Request) -> httpx.Response:
        """``resp`` as the auth flow sees it (an ``httpx.Response``; its body if it asks)."""
        seen = httpx.Response(resp.status_code, headers=getattr(resp.headers, "raw", []), request=request)
        if self.auth is not None and self.auth.requires_response_body:
            seen._content = await resp.aread()
        return seen

    async def _follow(
        self,
        method: str,
        url: str,
        origin: p.Origin,
        headers: list[tuple[str, str]],
        body: bytes | None,
        first: Response | None = None,
    ) -> Any:
        """Send the request (``first``: its response, when it went already); follow redirects
        (the module docstring)."""
        for _ in range(MAX_REDIRECTS + 1):
            if first is not None:
                resp, first = first, None
            elif origin.scheme != "http":
                return await self._elsewhere(method, url, headers, body)
            else:
                resp = await self._send_one(method, origin, headers, body)
            location = resp.headers.get("location")
            if resp.status_code not in p.REDIRECTS or location is None:
                return resp
            try:
                await resp.aread()  # read to the end, so its connection is reused (httpx reads it too)
            finally:
                await resp.aclose()
            new_method = p.redirect_method(method, resp.status_code)
            url = p.redirect_url(url, location)
            try:
                new_origin = p.split_url(url)
            except ValueError as exc:
                raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol: {exc}") from None
            to_get = new_method != method and new_method == "GET"
            headers = p.redirect_headers(headers, origin, new_origin, to_get=to_get)
            if to_get:
                body = None
            method, origin = new_method, new_origin
        raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.")

    async def _elsewhere(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes | None) -> Any:
        """A redirect that left plain http: the fallback backend serves it."""
        if self._fallback is None:
            raise httpx.UnsupportedProtocol(f"redirected to {url}, which this client does not serve")
        if self._fallback_made is None:
            self._fallback_made = self._fallback()
        drop = {"host", "content-length", "cookie"}
        fields = {k: v for k, v in headers if k.lower() not in drop}
        return await self._fallback_made.send(method, url, body, fields)

    def _plain_post(
        self, method: str, url: str, origin: p.Origin, body: bytes | None, headers: dict[str, str] | None
    ) -> tuple[bytes, tuple[dict[str, str], str | None] | None] | None:
        """The bytes of a POST of ``body`` with ``headers``, and the ready auth's headers and token
        they carry (None: no auth), when no cookie adds to its head and no auth flow must run
        first; else None (:meth:`_opening` makes it). Its head depends then on the method, the
        URL, ``headers`` and the ready auth's headers alone (``self.headers`` is not changed after
        ``__init__``), so each such head is encoded once: the same bytes as :func:`p.encode_head`
        of :meth:`_opening`'s fields, its ``Content-Length: 0`` made the body's here."""
        if method != "POST" or body is None or self._cookies:
            return None
        ready = None
        if self.auth is not None:
            ready = self._ready_auth.ready_headers() if self._ready_auth is not None else None
            if ready is None:
                return None  # the flow runs first
        key = (url, *(headers or {}).items(), *(ready[0] if ready else {}).items())
        parts = self._heads.get(key)
        if parts is None:
            if headers and any(name.lower() == "content-length" for name in headers):
                return None  # given by the caller: not a plain POST
            merged = p.merge_headers(self.headers, (headers or {}).items())
            fields = p.request_head(method, origin.target, origin.netloc, merged, None, None)
            whole = p.encode_head(method, origin.target, fields if ready is None else _set_headers(fields, ready[0]))
            at = whole.index(b"\r\nContent-Length: 0\r\n") + 2  # the one request_head adds; a ready header after it
            parts = whole[:at], whole[at + len(b"Content-Length: 0\r\n") :]
            if len(self._heads) >= 256:  # e.g. Mcp-Param-* values, a refreshed token: keep the newest
                self._heads.clear()
            self._heads[key] = parts
        return b"%sContent-Length: %d\r\n%s%s" % (parts[0], len(body), parts[1], body), ready

    def _request_bytes(
        self, method: str, origin: p.Origin, headers: list[tuple[str, str]], body: bytes | None, now: float
    ) -> bytes:
        cookie = self._cookies.header(origin, now) if self._cookies else None
        if cookie and not any(k.lower() == "cookie" for k, _ in headers):
            headers = _with_cookie(headers, cookie)
        data = p.encode_head(method, origin.target, headers)
        return data + body if body else data

    def _opened(
        self, conn: Conn, method: str, origin: p.Origin, found: tuple[p.Head, str, int], now: float
    ) -> Response:
        """The response whose head ``found`` was read from ``conn``."""
        head, kind, length = found
        url = f"{origin.scheme}://{origin.netloc}{origin.target}"
        resp = Response(self._pool, conn, method, head, url, kind, length)
        if head.headers.set_cookie:
            self._cookies.store(origin, head.headers.set_cookie, now)
        if self._on_response is not None:
            self._on_response(resp)
        return resp

    async def _send_one(self, method: str, origin: p.Origin, headers: list[tuple[str, str]], body: bytes | None) -> Any:
        now = time.time()
        data = self._request_bytes(method, origin, headers, body, now)
        conn = await self._pool.acquire((origin.host, origin.port))
        try:
            await conn.write(data, self.timeout)
            while (found := _head_in(conn, method)) is None:
                await conn.more()
        except BaseException:
            self._pool.release(conn, False)
            raise
        return self._opened(conn, method, origin, found, now)

    def send_nowait(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: dict[str, str] | None,
        on_answer: Callable[[Any, BaseException | None], None],
    ) -> Callable[[], None] | None:
        """:meth:`send` without a task, when the request can go at once: a plain ``http://``
        URL, no auth flow to run first, a kept-alive connection idle in the pool. The request is
        written now; its response goes to ``on_answer(resp, None)`` — or ``(None, exc)``, what
        ``send`` raises — on the stack that read it, its body read already when it came whole
        with its head (``Response.body``); a redirect or an auth challenge is followed in a
        task first, as ``send`` follows it. Returns what cancels it (its connection closed, if
        it is still being read, or that task), or None: nothing was sent, call ``send``. (``url`` is plain
        ``http://``, as every URL this client is made for.)"""
        origin = self._origin(url)
        if not self._pool.has_idle((origin.host, origin.port)):
            return None  # (asked first: a burst's requests wait for connections, made once, in send)
        plain = self._plain_post(method, url, origin, content, headers)
        data, ready = plain if plain is not None else (None, None)
        full: list[tuple[str, str]] | None = None  # the head's fields, made when data was not
        if data is None:
            _, full, ready = self._opening(method, url, content, headers)
            if self.auth is not None and ready is None:
                return None
        conn = self._pool.take_idle((origin.host, origin.port))
        if conn is None:
            return None
        now = time.time()
        if data is None:
            assert full is not None
            data = self._request_bytes(
                method, origin, full if ready is None else _set_headers(full, ready[0]), content, now
            )
        conn.write_nowait(data)
        found: tuple[p.Head, str, int] | None = None
        rest: asyncio.Task[Any] | None = None  # a redirect or an auth challenge followed

        def read() -> None:  # conn.reader: after each read, and at its end
            nonlocal found, rest
            try:
                if found is None and (found := _head_in(conn, method)) is None:
                    return
            except httpx.HTTPError as exc:
                conn.reader = None
                self._pool.release(conn, False)
                _call(on_answer, None, exc)
                return
            _, kind, length = found
            if kind == "length" and len(conn.buf) < length <= HIGH_WATER and not conn.eof:
                return  # the rest of a small body is on its way
            conn.reader = None
            resp = self._opened(conn, method, origin, found, now)
            resp.read_whole()
            if resp.status_code in p.REDIRECTS or (self.auth is not None and resp.status_code in (401, 403)):
                # not the answer yet: the rest of send() follows it, in a task
                fields = full if full is not None else self._opening(method, url, content, headers)[1]
                rest = asyncio.get_running_loop().create_task(
                    self._sent(method, url, origin, fields, content, ready, resp)
                )
                rest.add_done_callback(lambda t: None if t.cancelled() else _call(on_answer, *_outcome(t)))
                return
            _call(on_answer, resp, None)

        def cancel() -> None:
            if conn.reader is read:
                conn.reader = None
                self._pool.release(conn, False)
            elif rest is not None:
                rest.cancel()

        conn.reader = read
        return cancel

    async def aclose(self) -> None:
        self._pool.close()
        if self._fallback_made is not None:
            await self._fallback_made.aclose()


def _head_in(conn: Conn, method: str) -> tuple[p.Head, str, int] | None:
    """The head of the response on ``conn`` and its framing, once it is in (consumed from the
    buffer; interim 1xx heads skipped); None: more bytes are needed. Raises httpx's error for a
    head that breaks the rules or a connection that ended before it."""
    buf = conn.buf
    while buf or conn.eof:
        try:
            found = p.parse_head(buf)
        except p.ProtocolViolation as exc:
            raise httpx.RemoteProtocolError(str(exc)) from None
        if found is None:
            if conn.eof:
                if isinstance(conn.error, OSError):
                    raise httpx.ReadError(str(conn.error) or type(conn.error).__name__)
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response."
                    if not buf
                    else "Server disconnected in the middle of the response head."
                )
            return None
        head, size = found
        del buf[:size]
        if 100 <= head.status < 200:  # interim (100 Continue, 103 Early Hints): the answer follows
            continue
        try:
            kind, length = p.framing(method, head.status, head.headers)
        except p.ProtocolViolation as exc:
            raise httpx.RemoteProtocolError(str(exc)) from None
        return head, kind, length
    return None


def _call(on_answer: Callable[[Any, BaseException | None], None], resp: Any, exc: BaseException | None) -> None:
    """``on_answer(resp, exc)`` from a protocol callback: what it raises goes to the loop's
    exception handler (asyncio would close the connection it came from for it)."""
    try:
        on_answer(resp, exc)
    except Exception as failure:
        asyncio.get_running_loop().call_exception_handler(
            {"message": "an HTTP response's callback failed", "exception": failure}
        )


def _outcome(task: asyncio.Task[Any]) -> tuple[Any, BaseException | None]:
    exc = task.exception()
    return (None, exc) if exc is not None else (task.result(), None)


def _set_headers(headers: list[tuple[str, str]], extra: dict[str, str]) -> list[tuple[str, str]]:
    """``headers`` with each of ``extra`` set as ``httpx.Headers.__setitem__`` sets it: in the
    place of the first of that name (the others dropped), else at the end."""
    if not extra:
        return headers
    out = list(headers)
    for name, value in extra.items():
        low = name.lower()
        at = [i for i, (k, _) in enumerate(out) if k.lower() == low]
        if at:
            out[at[0]] = (name, value)
            out = [kv for i, kv in enumerate(out) if i not in at[1:]]
        else:
            out.append((name, value))
    return out


def _with_cookie(headers: list[tuple[str, str]], cookie: str | None) -> list[tuple[str, str]]:
    """``headers`` with ``Cookie`` where httpx puts it: before a final ``Content-Length``."""
    if not cookie:
        return headers
    if headers and headers[-1][0].lower() == "content-length":
        return [*headers[:-1], ("Cookie", cookie), headers[-1]]
    return [*headers, ("Cookie", cookie)]
