"""A lean HTTP/1.1 client over asyncio for plain ``http://`` (the Streamable HTTP client's
backend where httpx is not needed: ``_http_backend`` chooses).

The rules — request head, response framing, decoding, redirects, cookies — are sans-IO in
``_protocol/_http1``; this module holds the connections and moves the bytes. It puts on the
wire what httpx would for the same call (the same headers in the same order, ``User-Agent``
included) and raises httpx's exception types with httpx's texts, so that the transport above
it reads both backends alike.

* **Connections**: a pool of at most ``max_connections`` (across origins), kept alive for
  ``keepalive_expiry`` seconds once idle. Each is an :class:`asyncio.Protocol`: a server that
  closes an idle connection (its keep-alive timeout) is seen at once (``eof_received`` /
  ``connection_lost``), or, before the loop saw it, from its socket being readable when it is
  taken from the pool: such a connection is never handed to a request. A connection goes
  back to the pool only once its response was read to the end, with no stray bytes after it.
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
import contextlib
import select
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import httpx

from .._protocol import _http1 as p
from ._http_backend import ReadyAuth

MAX_REDIRECTS = 20
HIGH_WATER = 1 << 20  # bytes buffered from a connection before its reading is paused
USER_AGENT = f"python-httpx/{httpx.__version__}"  # the wire stays what httpx sends (one rule for both)
DEFAULT_HEADERS = (
    ("Accept", "*/*"),
    ("Accept-Encoding", p.ACCEPT_ENCODING),
    ("Connection", "keep-alive"),
    ("User-Agent", USER_AGENT),
)


class _Conn(asyncio.Protocol):
    """One TCP connection: the bytes received, and whether the server closed it."""

    def __init__(self, key: tuple[str, int]) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.eof = False  # no more bytes will come
        self.error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False
        self._writing_paused = False
        self.idle_since = 0.0
        self.fd = -1
        self.on_lost: Callable[[_Conn], None] | None = None  # the pool's, while this sits idle

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        self.fd = sock.fileno() if sock is not None else -1

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        if self.on_lost is not None:
            self.on_lost(self)
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        if self.on_lost is not None:
            self.on_lost(self)

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    # used by the client
    def dropped(self) -> bool:
        """Closed (or written on) by the server while idle, seen by the loop or not yet (a readable socket)."""
        if self.eof or self.buf or self.fd < 0:
            return self.eof or bool(self.buf)
        try:
            return bool(select.select([self.fd], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    async def more(self) -> None:
        """Wait for more bytes (or the end)."""
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def write(self, data: bytes, timeout: float | None) -> None:
        assert self.transport is not None
        self.transport.write(data)
        if self._writing_paused:
            self._drained = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self._drained
            except TimeoutError:
                raise httpx.WriteTimeout("timed out writing the request") from None

    def close(self) -> None:
        self.on_lost = None
        self.eof = True
        if self.transport is not None:
            self.transport.close()


class Pool:
    """Kept-alive connections, at most ``limit`` open (the module docstring)."""

    def __init__(self, limit: int, expiry: float, timeout: float | None) -> None:
        self.limit = limit
        self.expiry = expiry
        self.timeout = timeout
        self.open = 0
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self, key: tuple[str, int]) -> _Conn:
        loop = asyncio.get_running_loop()
        while True:
            idle = self._idle.get(key)
            now = loop.time()
            while idle:
                conn = idle.pop()
                conn.on_lost = None
                if now - conn.idle_since < self.expiry and not conn.dropped():
                    return conn
                self._closed(conn)
            if self.open < self.limit:
                self.open += 1
                try:
                    return await self._connect(key)
                except BaseException:
                    self.open -= 1
                    self._wake()
                    raise
            if not self._evict_one(now):
                waiter = loop.create_future()
                self._waiting.append(waiter)
                try:
                    async with asyncio.timeout(self.timeout):
                        await waiter
                except TimeoutError:
                    raise httpx.PoolTimeout("timed out waiting for a connection from the pool") from None
                except BaseException:
                    if waiter.done() and not waiter.cancelled():
                        self._wake()  # woken, but leaving: the next in line gets the turn
                    raise
                finally:
                    if not waiter.done():
                        waiter.cancel()
                    with contextlib.suppress(ValueError):
                        self._waiting.remove(waiter)

    def _evict_one(self, now: float) -> bool:
        """Close an idle connection of another origin to make room; False if none."""
        for conns in self._idle.values():
            if conns:
                self._closed(conns.pop(0))
                return True
        return False

    async def _connect(self, key: tuple[str, int]) -> _Conn:
        host, port = key
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                _, conn = await loop.create_connection(lambda: _Conn(key), host, port)
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting") from None
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc)) from exc
        except OSError as exc:
            raise httpx.ConnectError("All connection attempts failed") from exc
        return conn

    def release(self, conn: _Conn, reusable: bool) -> None:
        if reusable and not conn.eof and not conn.buf:
            conn.idle_since = asyncio.get_running_loop().time()
            conn.on_lost = self._lost
            self._idle.setdefault(conn.key, []).append(conn)
            self._wake()
        else:
            self._closed(conn)

    def _lost(self, conn: _Conn) -> None:
        """An idle connection the server closed: out of the pool at once."""
        idle = self._idle.get(conn.key)
        if idle and conn in idle:
            idle.remove(conn)
            self._closed(conn)

    def _closed(self, conn: _Conn) -> None:
        conn.close()
        self.open -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def close(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()


class Response:
    """A response being read: the shape the transport reads (as of an ``httpx.Response``)."""

    http_version = "HTTP/1.1"

    def __init__(self, pool: Pool, conn: _Conn, method: str, head: p.Head, url: str, kind: str, length: int) -> None:
        self._pool = pool
        self._conn: _Conn | None = conn
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

    async def send(self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None) -> Any:
        origin = self._origin(url)
        merged = p.merge_headers(self.headers, (headers or {}).items())
        full = p.request_head(method, origin.target, origin.netloc, merged, None, content)
        auth = self.auth
        if auth is None:
            return await self._follow(method, url, origin, full, content)
        # the auth flow, as httpx runs it: each request it yields goes out (redirects followed)
        cookie = self._cookies.header(origin, time.time()) if self._cookies else None
        full = _with_cookie(full, cookie)
        ready_auth = self._ready_auth
        ready = ready_auth.ready_headers() if ready_auth is not None else None
        resp: Any = None
        if ready_auth is not None and ready is not None:  # the flow would add these headers, nothing else
            resp = await self._follow(method, url, origin, _set_headers(full, ready[0]), content)
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
        self, method: str, url: str, origin: p.Origin, headers: list[tuple[str, str]], body: bytes | None
    ) -> Any:
        """Send the request; follow redirects (the module docstring)."""
        for _ in range(MAX_REDIRECTS + 1):
            if origin.scheme != "http":
                return await self._elsewhere(method, url, headers, body)
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

    async def _send_one(self, method: str, origin: p.Origin, headers: list[tuple[str, str]], body: bytes | None) -> Any:
        now = time.time()
        cookie = self._cookies.header(origin, now) if self._cookies else None
        if cookie and not any(k.lower() == "cookie" for k, _ in headers):
            headers = _with_cookie(headers, cookie)
        data = p.encode_head(method, origin.target, headers)
        if body:
            data += body
        conn = await self._pool.acquire((origin.host, origin.port))
        try:
            await conn.write(data, self.timeout)
            head, kind, length = await self._read_head(conn, method)
        except BaseException:
            self._pool.release(conn, False)
            raise
        resp = Response(
            self._pool, conn, method, head, f"{origin.scheme}://{origin.netloc}{origin.target}", kind, length
        )
        if head.headers.set_cookie:
            self._cookies.store(origin, head.headers.set_cookie, now)
        if self._on_response is not None:
            self._on_response(resp)
        return resp

    async def _read_head(self, conn: _Conn, method: str) -> tuple[p.Head, str, int]:
        buf = conn.buf
        while True:
            if not buf and not conn.eof:  # nothing to parse yet
                await conn.more()
                continue
            try:
                found = p.parse_head(buf)
            except p.ProtocolViolation as exc:
                raise httpx.RemoteProtocolError(str(exc)) from None
            if found is not None:
                head, size = found
                del buf[:size]
                if 100 <= head.status < 200:  # interim (100 Continue, 103 Early Hints): the answer follows
                    continue
                try:
                    kind, length = p.framing(method, head.status, head.headers)
                except p.ProtocolViolation as exc:
                    raise httpx.RemoteProtocolError(str(exc)) from None
                return head, kind, length
            if conn.eof:
                if isinstance(conn.error, OSError):
                    raise httpx.ReadError(str(conn.error) or type(conn.error).__name__)
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response."
                    if not buf
                    else "Server disconnected in the middle of the response head."
                )
            await conn.more()

    async def aclose(self) -> None:
        self._pool.close()
        if self._fallback_made is not None:
            await self._fallback_made.aclose()


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
