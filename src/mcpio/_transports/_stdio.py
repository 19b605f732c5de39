"""stdio server transport (spec-notes §8): NDJSON on fd 0 / fd 1, logs on fd 2.

Contract of :class:`StdioServerTransport` (``await open()``, ``receive``/``send``, ``aclose()``):

* **fd 1 carries protocol bytes only** (a stray ``print`` corrupts the stream). ``open()``
  moves the protocol to private, non-inheritable duplicates of fd 0 and fd 1, points fd 1 at
  stderr and fd 0 at /dev/null and sets ``sys.stdout = sys.stderr``: ``print``,
  ``os.write(1, …)``, C-level ``printf`` and children that inherit fd 1 all write to stderr,
  and a child cannot read protocol bytes. This holds for the rest of the process (``aclose()``
  does not point fd 1 back; a second transport finds the wire again). Bytes written to fd 1
  before ``open()`` are beyond reach: print nothing at import time.
* **EOF is shutdown**: ``receive`` raises EndOfStream after the frames already read.
* **Parent death is EOF, even when stdin stays open** (a wrapper such as ``npx``/``uv`` or a
  grandchild holding the pipe): :func:`mcpio._platform.wait_parent_exit` (an event in loop
  mode, else polling every ``parent_poll`` seconds, default 0.5, for a *change* of parent).
  ``PR_SET_PDEATHSIG`` is not used: it fires when the parent *thread* exits, killing healthy
  servers. ``parent_poll=None`` turns the watch off.
* **terminate()** (on SIGTERM) stops at once: frames not yet taken are dropped and ``send``
  raises TransportError from then on. Output queued before it gets 0.25 s to drain at
  ``aclose()``, then is dropped. ``Server.serve_stdio`` exits with status **0** (SIGTERM is the
  spec's polite "please exit", spec-notes §8).
* **Output gone is shutdown too**: ``send`` raises TransportError, input stops as at ``terminate()``.
* **The client gone**: ``on_gone(why)`` is called once, ``"output"`` (our stdout closed) or
  ``"parent"`` (it died), so the server stops waiting for requests in flight; not at stdin EOF.
* **No fixed line limit** below ``max_line_size`` (default 256 MiB); framing is linear.
* **Backpressure both ways**: reading pauses while ``max_buffered_frames`` frames wait; ``send``
  waits while the write buffer is over 4 MiB, and writes a large frame in 1 MiB slices.
* **Two modes, one contract** (``mode=``, else ``MCPIO_STDIO_MODE``, else the platform's):
  ``"loop"`` (POSIX) uses the event loop's pipe transports (O_NONBLOCK, restored at
  ``aclose()``); ``"threads"`` (Windows: the Proactor loop needs overlapped handles) uses
  daemon threads with blocking calls (:mod:`._threadpipes`), as does a tty, /dev/null or a file.
* ``trace``: optional, called at ``open()`` (fd 1 off the wire) for a ``Trace`` (or None) that
  records "in" / "out" for every frame (``MCPIO_TRACE``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from .._errors import EndOfStream, TransportError
from .._jsonrpc import DEFAULT_MAX_LINE_SIZE
from .._platform import claim_wire, is_claimed, is_stream, restore_blocking, stdio_mode, wait_parent_exit
from .._protocol._framing import LineBuffer
from ._base import Abilities, Frame, hand_over
from ._threadpipes import ThreadReader, ThreadWriter, read_in_chunks
from ._trace import Trace, as_traced

_WRITE_HIGH_WATER = 4 * 1024 * 1024
_WRITE_SLICE = 1024 * 1024  # a frame larger than this is written slice by slice
_SMALL_FRAME = 64 * 1024  # below this, frame and newline are joined into one write
_FLUSH_TIMEOUT = 2.0  # aclose(): how long buffered output may take to reach the client
_TERMINATE_FLUSH_TIMEOUT = 0.25  # the same after terminate(): the client asked us to stop


class _Reader(asyncio.Protocol):
    """Feeds pipe chunks through the LineBuffer into the transport's frame queue."""

    def __init__(self, owner: StdioServerTransport) -> None:
        self.owner = owner

    def data_received(self, data: bytes) -> None:
        self.owner._feed(data)

    def eof_received(self) -> bool:
        self.owner._feed_eof()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.owner._feed_eof()


class _Writer(asyncio.Protocol):
    def __init__(self, owner: StdioServerTransport) -> None:
        self.owner = owner
        self.can_write = asyncio.Event()
        self.can_write.set()
        self.ready = True  # can_write.is_set(), read by every send without a call

    def pause_writing(self) -> None:
        self.ready = False
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.ready = True
        self.can_write.set()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.owner._output_lost(exc or BrokenPipeError("the client closed the server's stdout"))
        self.resume_writing()


class StdioServerTransport:
    """The server side of stdio (module docstring). ``claim_stdout=False`` leaves fds 0 and 1 as
    they are; other ``stdin_fd``/``stdout_fd`` are never redirected."""

    def __init__(
        self,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
        claim_stdout: bool = True,
        max_buffered_frames: int = 512,
        parent_poll: float | None = 0.5,
        mode: str | None = None,
        trace: Callable[[], Trace | None] | None = None,
        on_gone: Callable[[str], None] | None = None,
    ) -> None:
        self._in_fd = stdin_fd  # the protocol's fds: private duplicates once open() claims 0 and 1
        self._out_fd = stdout_fd
        self._claim = claim_stdout
        self.abilities = Abilities(send_nowait=self.send_nowait, push=self.push)
        self._take: Callable[[Any], Any] | None = None  # the engine's (push)
        self._handing = False  # _feed is handing frames to _take: their answers are written at its end
        self._lines = LineBuffer(max_line_size)
        self._frames: collections.deque[Frame] = collections.deque()
        self._max_frames = max(1, max_buffered_frames)
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False  # no more frames will be added
        self._terminated = False  # nothing more may be written
        self._lost: BaseException | None = None  # why stdout failed
        self._paused = False
        try:
            self.mode = stdio_mode(mode)  # "loop" (the event loop's pipe transports) or "threads" (blocking ones)
        except ValueError as exc:
            raise TransportError(str(exc)) from None
        self._read_transport: asyncio.ReadTransport | ThreadReader | None = None
        self._write_transport: asyncio.WriteTransport | ThreadWriter | None = None
        self._writer: _Writer | None = None
        self._send_lock = asyncio.Lock()
        self._slow_senders = 0  # sends waiting for or holding _send_lock: small frames queue behind them
        self._out: list[bytes] = []  # small frames queued in this loop iteration, written as one
        self._owned_fds: list[int] = []  # protocol duplicates we close at aclose()
        self._nonblocking_fds: list[int] = []  # fds the loop made non-blocking
        self._parent_poll = parent_poll
        self._ppid = os.getppid()
        self._watchdog: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._open_trace = trace
        self.trace: Trace | None = None  # opened at open()
        self.on_gone = on_gone  # see "The client gone" in the module docstring

    # ================================================================ setup
    async def open(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        if self._claim:
            if self._out_fd == 1:
                self._out_fd = self._private_dup(1)
            if self._in_fd == 0:
                self._in_fd = self._private_dup(0)
        self.trace = self._open_trace() if self._open_trace is not None else None  # now: /dev/stdout is no wire
        writer = self._writer = _Writer(self)
        if self.mode == "loop" and is_stream(self._out_fd):
            pipe = open(self._out_fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
            self._write_transport, _ = await loop.connect_write_pipe(lambda: writer, pipe)
            self._nonblocking_fds.append(self._out_fd)
        else:  # threads mode; or a tty, /dev/null or a regular file (blocking writes, flags untouched)
            self._write_transport = ThreadWriter(
                self._file(self._out_fd, "wb"),
                loop,
                on_pause=writer.pause_writing,
                on_resume=writer.resume_writing,
                on_lost=writer.connection_lost,
                name="mcpio-stdout",
            )
        self._write_transport.set_write_buffer_limits(high=_WRITE_HIGH_WATER)
        reader = _Reader(self)
        if self.mode == "loop" and is_stream(self._in_fd):
            pipe_in = open(self._in_fd, "rb", buffering=0, closefd=False)  # noqa: SIM115
            self._read_transport, _ = await loop.connect_read_pipe(lambda: reader, pipe_in)
            read_in_chunks(self._read_transport)
            self._nonblocking_fds.append(self._in_fd)
        else:  # threads mode; or a tty, /dev/null or a regular file (blocking reads, flags untouched)
            self._read_transport = ThreadReader(
                self._file(self._in_fd, "rb"),
                loop,
                on_data=reader.data_received,
                on_eof=self._feed_eof,
                name="mcpio-stdin",
            )
        if self._parent_poll:
            self._watchdog = loop.create_task(self._watch_parent())

    def _file(self, fd: int, how: str) -> Any:
        """A file for a thread; a protocol duplicate we own is handed over, and the thread closes
        it when it ends (never under the feet of a blocked read)."""
        owned = fd in self._owned_fds
        if owned:
            self._owned_fds.remove(fd)
        return open(fd, how, buffering=0, closefd=owned)

    def _private_dup(self, fd: int) -> int:
        name = "stdin" if fd == 0 else "stdout"
        # Python sets sys.__stdin__/__stdout__ to None when the fd was closed at startup; the
        # number may since belong to something else (the event loop's epoll fd): leave it alone.
        if not is_claimed(fd) and getattr(sys, f"__{name}__") is None:
            raise TransportError(f"{name} was closed when the process started: a stdio MCP server needs both pipes")
        try:
            proto = claim_wire(fd)  # non-inheritable: children never see the protocol fds
        except OSError as exc:
            raise TransportError(f"{name} (fd {fd}) is not open: a stdio MCP server needs both pipes ({exc})") from exc
        self._owned_fds.append(proto)
        return proto

    async def _watch_parent(self) -> None:
        ppid = self._ppid
        assert self._parent_poll
        # Loop mode: an event (pidfd, kqueue); threads mode: polling, as on systems without one.
        await wait_parent_exit(ppid, self._parent_poll, events=self.mode == "loop")
        if not self._eof:
            with contextlib.suppress(Exception):
                print(f"mcpio: the parent process ({ppid}) exited; shutting down", file=sys.stderr, flush=True)
        self._gone("parent")
        self._feed_eof()

    def prime(self, data: bytes, ppid: int) -> None:
        """Before :meth:`open`: ``data`` was read from fd 0 already (``mcpio._server._stdio``), when
        ``ppid`` was our parent; its frames come first, as if the reader had read them."""
        self._ppid = ppid
        if data:
            self._feed(data)

    # ================================================================ reading
    def push(self, take: Callable[[Any], Any]) -> None:
        self._take = take

    def _feed(self, data: bytes) -> None:
        if self._eof:
            return
        frames = self._lines.feed(data)
        if not frames:
            return
        self._handing = True
        try:  # traced: every frame through the queue (the trace's order)
            queued = hand_over(self._take if self.trace is None else None, frames, self._frames)
        finally:
            self._handing = False
        self._flush_out()  # the answers given on this stack, in one write
        if not queued:
            return
        self._wake()
        if len(self._frames) >= self._max_frames and not self._paused:
            self._set_paused(True)

    def _set_paused(self, paused: bool) -> None:
        self._paused = paused
        if self._read_transport is not None:
            with contextlib.suppress(RuntimeError):
                (self._read_transport.pause_reading if paused else self._read_transport.resume_reading)()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def _feed_eof(self) -> None:
        """End of input: the frames already read are still delivered, then EndOfStream."""
        if self._eof:
            return
        self._eof = True
        self._frames.extend(self._lines.close())
        self._wake()

    def _stop_input(self) -> None:
        """End of input, dropping what was read but not yet taken."""
        self._eof = True
        self._frames.clear()
        self._wake()
        if self._read_transport is not None:
            self._read_transport.close()

    def terminate(self) -> None:
        """Stop now (SIGTERM): take nothing more, write nothing more. Idempotent."""
        self._terminated = True
        self._stop_input()
        if self._writer is not None:
            self._writer.resume_writing()  # wake senders waiting on backpressure; they raise

    def _gone(self, why: str) -> None:
        callback, self.on_gone = self.on_gone, None  # once
        if callback is not None and not self._closed:
            callback(why)

    def _output_lost(self, exc: BaseException) -> None:
        if self._lost is None:
            self._lost = exc
            self._gone("output")
        if not self._closed:
            self._stop_input()

    async def receive(self) -> Frame:
        while True:
            if self._frames:
                frame = self._frames.popleft()
                if self._paused and len(self._frames) <= self._max_frames // 2 and not self._eof:
                    self._set_paused(False)
                if self.trace is not None:
                    self.trace("in", as_traced(frame))
                return frame
            if self._eof:
                raise EndOfStream()
            if self._out:  # answers queued while the frames read were served: out now, before
                self._flush_out()  # waiting (one loop iteration sooner than the scheduled flush)
            self._waiter = self._loop.create_future()  # type: ignore[union-attr]
            try:
                await self._waiter
            finally:
                self._waiter = None

    # ================================================================ writing
    def _check_writable(self) -> None:
        if self._terminated:
            raise TransportError("the server is shutting down; nothing more is sent")
        if self._lost is not None:
            raise TransportError(f"cannot write to stdout: {self._lost}")

    def send_nowait(self, frame: bytes, now: bool = False) -> bool:
        """Queue ``frame`` when that needs no waiting (a small frame, room in the pipe, no sender
        ahead of it): True. False: nothing was done, :meth:`send` it. Written with the frames
        queued with it: at once with ``now`` (nothing else is due), at the end of :meth:`_feed`
        when given on its stack, else at the end of this loop iteration."""
        if self._terminated or self._lost is not None or self._write_transport is None:
            return False
        if len(frame) < _SMALL_FRAME and self._writer.ready and not self._slow_senders:  # type: ignore[union-attr]
            if self.trace is not None:
                self.trace("out", frame)
            out = self._out
            out.append(frame)
            if self._handing:
                return True
            if now:
                self._flush_out()
            elif len(out) == 1:
                self._loop.call_soon(self._flush_out)  # type: ignore[union-attr]
            return True
        return False

    async def send(self, frame: bytes) -> None:
        if self.send_nowait(frame):
            return
        self._check_writable()
        wt = self._write_transport
        if wt is None:
            raise TransportError("the stdio transport is not open")
        self._slow_senders += 1
        try:
            async with self._send_lock:  # FIFO; a large frame is never interleaved with another
                self._flush_out()
                await self._send_waiting(wt, frame)
        finally:
            self._slow_senders -= 1

    def _flush_out(self) -> None:
        out = self._out
        if not out:
            return
        self._out = []
        wt = self._write_transport
        if wt is None or wt.is_closing() or self._lost is not None:
            return
        out.append(b"")
        wt.write(b"\n".join(out))

    async def _room(self) -> None:
        can_write = self._writer.can_write  # type: ignore[union-attr]
        while not can_write.is_set():  # re-check: another sender may have filled it again
            await can_write.wait()
        self._check_writable()

    async def _send_waiting(self, wt: asyncio.WriteTransport | ThreadWriter, frame: bytes) -> None:
        await self._room()
        if self.trace is not None:
            self.trace("out", frame)
        n = len(frame)
        if n < _SMALL_FRAME:
            wt.write(frame + b"\n")
            return
        # Slice by slice, waiting for room, so the write buffer holds no second copy of it.
        view = memoryview(frame)
        start = 0
        try:
            while start < n:
                if start:
                    await self._room()
                wt.write(view[start : start + _WRITE_SLICE])
                start += _WRITE_SLICE
        except asyncio.CancelledError:
            # Never leave half a line on the wire: queue the rest at once, then give up.
            if not self._terminated and self._lost is None and not wt.is_closing():
                wt.write(view[start:])
                wt.write(b"\n")
            raise
        wt.write(b"\n")

    # ================================================================ closing
    async def aclose(self) -> None:
        """Flush what is buffered (within 2 s; 0.25 s after terminate()), close, release the fds."""
        if self._closed:
            return
        self._closed = True
        self._eof = True
        self._wake()
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(BaseException):
                await self._watchdog
        if self._read_transport is not None:
            self._read_transport.close()
        self._flush_out()
        wt = self._write_transport
        if wt is not None and not wt.is_closing():
            if self._lost is None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_TERMINATE_FLUSH_TIMEOUT if self._terminated else _FLUSH_TIMEOUT):
                        await self._flush()
            if wt.get_write_buffer_size():
                if not self._terminated and self._lost is None:
                    with contextlib.suppress(Exception):
                        print("mcpio: the client did not read the last output in time; dropping it", file=sys.stderr)
                wt.abort()
            else:
                wt.close()
        await asyncio.sleep(0)  # let the transports finish closing before the fds go
        for fd in self._nonblocking_fds:
            restore_blocking(fd)
        for fd in self._owned_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._owned_fds.clear()

    async def _flush(self) -> None:
        wt = self._write_transport
        w = self._writer
        assert wt is not None and w is not None
        # With a high-water mark of 0 the transport reports "resume" exactly when it is empty.
        wt.set_write_buffer_limits(high=0)
        while wt.get_write_buffer_size() and self._lost is None:
            if w.ready:
                w.pause_writing()
            await w.can_write.wait()
