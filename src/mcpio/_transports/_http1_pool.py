"""The lean HTTP/1.1 client's connections (``_http1_client``): a pool of kept-alive TCP
connections, each an :class:`asyncio.BufferedProtocol` holding the bytes received.

A server that closes an idle connection (its keep-alive timeout) is seen at once
(``eof_received`` / ``connection_lost``), or, before the loop saw it, from its socket being
readable when it is taken from the pool: such a connection is never handed to a request. A
connection goes back to the pool only once its response was read to the end, with no stray
bytes after it. ``timeout`` bounds connecting, writing and waiting for a free connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import time
from collections import deque
from collections.abc import Callable

import httpx

SCRATCH = 1 << 16  # bytes read from a socket at once
HIGH_WATER = 1 << 20  # bytes buffered from a connection before its reading is paused


class Conn(asyncio.BufferedProtocol):
    """One TCP connection: the bytes received, and whether the server closed it. The socket is
    read into its pool's ``scratch`` (copied out at once, in the same callback): a plain
    Protocol would have asyncio allocate a fresh 256 KiB ``bytes`` per read (mmap, mremap and
    munmap, three system calls per response)."""

    def __init__(self, key: tuple[str, int], scratch: memoryview) -> None:
        self.key = key
        self._scratch = scratch
        self._loop = asyncio.get_running_loop()
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
        self.on_lost: Callable[[Conn], None] | None = None  # the pool's, while this sits idle
        # an exchange reading its response without a task (``_http1_client.send_nowait``):
        # called after each read and at the end
        self.reader: Callable[[], None] | None = None

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        self.fd = sock.fileno() if sock is not None else -1

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._scratch

    def buffer_updated(self, nbytes: int) -> None:
        self.buf += self._scratch[:nbytes]
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
        if self.reader is not None:
            self.reader()

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
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def write_nowait(self, data: bytes) -> None:
        """Write ``data`` (asyncio buffers what the socket does not take at once)."""
        assert self.transport is not None
        self.transport.write(data)

    async def write(self, data: bytes, timeout: float | None) -> None:
        self.write_nowait(data)
        if self._writing_paused:
            self._drained = self._loop.create_future()
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
        self._idle: dict[tuple[str, int], list[Conn]] = {}
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._scratch = memoryview(bytearray(SCRATCH))  # what each connection's socket is read into

    def has_idle(self, key: tuple[str, int]) -> bool:
        """Whether a kept-alive connection to ``key`` sits idle (maybe closed by now: ``take_idle``)."""
        return bool(self._idle.get(key))

    def take_idle(self, key: tuple[str, int]) -> Conn | None:
        """A kept-alive connection to ``key`` that is still good, or None."""
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            conn.on_lost = None
            if now - conn.idle_since < self.expiry and not conn.dropped():
                return conn
            self._closed(conn)
        return None

    async def acquire(self, key: tuple[str, int]) -> Conn:
        loop = asyncio.get_running_loop()
        while True:
            conn = self.take_idle(key)
            if conn is not None:
                return conn
            if self.open < self.limit:
                self.open += 1
                try:
                    return await self._connect(key)
                except BaseException:
                    self.open -= 1
                    self._wake()
                    raise
            if not self._evict_one():
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

    def _evict_one(self) -> bool:
        """Close an idle connection of another origin to make room; False if none."""
        for conns in self._idle.values():
            if conns:
                self._closed(conns.pop(0))
                return True
        return False

    async def _connect(self, key: tuple[str, int]) -> Conn:
        host, port = key
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                _, conn = await loop.create_connection(lambda: Conn(key, self._scratch), host, port)
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting") from None
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc)) from exc
        except OSError as exc:
            raise httpx.ConnectError("All connection attempts failed") from exc
        return conn

    def release(self, conn: Conn, reusable: bool) -> None:
        if reusable and not conn.eof and not conn.buf:
            conn.idle_since = time.monotonic()
            conn.on_lost = self._lost
            self._idle.setdefault(conn.key, []).append(conn)
            self._wake()
        else:
            self._closed(conn)

    def _lost(self, conn: Conn) -> None:
        """An idle connection the server closed: out of the pool at once."""
        idle = self._idle.get(conn.key)
        if idle and conn in idle:
            idle.remove(conn)
            self._closed(conn)

    def _closed(self, conn: Conn) -> None:
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
