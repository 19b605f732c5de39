"""stdio server transport (spec-notes §8): NDJSON on fd 0 / fd 1, logs on fd 2.

Guarantees:

* **fd 1 carries protocol bytes only.** :meth:`StdioServerTransport.open` duplicates fd 1 for
  the protocol and points fd 1 (and ``sys.stdout``) at stderr, so ``print``, logging handlers
  and child processes that inherit fd 1 all write to stderr (pain point #5).
* **EOF is shutdown.** stdin EOF (or POLLHUP) ends ``receive`` with EndOfStream after the
  frames already read; so does the death of the parent process, noticed within
  ``parent_poll`` seconds even when a wrapper keeps the pipe open (pain point #1).
* **No fixed line limit** below ``max_line_size`` (default 256 MiB), linear framing.
* **Backpressure both ways**: reading pauses while ``max_buffered_frames`` frames wait to be
  taken; ``send`` waits while the OS pipe is full and the write buffer is over its high mark.

Pipes, sockets and character devices use the event loop's non-blocking pipe transports;
anything else (a regular file redirected to stdin) is read by a daemon thread.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import stat
import sys
import threading
from typing import Any

from .._errors import EndOfStream, TransportError
from .._protocol._framing import DEFAULT_MAX_LINE_SIZE, LineBuffer
from ._base import Frame

_WRITE_HIGH_WATER = 4 * 1024 * 1024


def _is_pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _Reader(asyncio.Protocol):
    """Feeds pipe chunks through the LineBuffer into a deque of frames."""

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
    def __init__(self) -> None:
        self.can_write = asyncio.Event()
        self.can_write.set()
        self.lost: BaseException | None = None

    def pause_writing(self) -> None:
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.can_write.set()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.lost = exc or BrokenPipeError("stdout was closed by the client")
        self.can_write.set()


class StdioServerTransport:
    """The server side of stdio. Use ``await open()``, then send/receive, then ``aclose()``."""

    def __init__(
        self,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
        claim_stdout: bool = True,
        max_buffered_frames: int = 512,
        parent_poll: float | None = 0.5,
    ) -> None:
        self._stdin_fd = stdin_fd
        self._stdout_fd = stdout_fd
        self._claim = claim_stdout
        self._lines = LineBuffer(max_line_size)
        self._frames: collections.deque[Frame] = collections.deque()
        self._max_frames = max_buffered_frames
        self._waiter: asyncio.Future | None = None
        self._eof = False
        self._paused = False
        self._read_transport: asyncio.ReadTransport | None = None
        self._write_transport: asyncio.WriteTransport | None = None
        self._writer: _Writer | None = None
        self._proto_fd: int | None = None
        self._saved_stdout: Any = None
        self._parent_poll = parent_poll
        self._watchdog: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self.trace = None  # optional callable(direction: str, frame: bytes)

    # -------------------------------------------------------------- setup
    async def open(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        out_fd = self._stdout_fd
        if self._claim and out_fd == 1:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            self._proto_fd = os.dup(1)  # non-inheritable: children never see the protocol fd
            os.dup2(2, 1)
            self._saved_stdout = sys.stdout
            sys.stdout = sys.stderr
            out_fd = self._proto_fd
        if _is_pipe_like(out_fd):
            self._writer = _Writer()
            pipe = open(out_fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
            self._write_transport, _ = await loop.connect_write_pipe(lambda: self._writer, pipe)
            self._write_transport.set_write_buffer_limits(high=_WRITE_HIGH_WATER)
        self._out_fd = out_fd
        if _is_pipe_like(self._stdin_fd):
            pipe_in = open(self._stdin_fd, "rb", buffering=0, closefd=False)  # noqa: SIM115
            self._read_transport, _ = await loop.connect_read_pipe(lambda: _Reader(self), pipe_in)
        else:
            threading.Thread(target=self._thread_reader, name="mcpio-stdin", daemon=True).start()
        if self._parent_poll:
            self._watchdog = loop.create_task(self._watch_parent(os.getppid()))

    def _thread_reader(self) -> None:
        loop = self._loop
        assert loop is not None
        space = threading.Semaphore(1)
        while True:
            try:
                chunk = os.read(self._stdin_fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._feed_eof)
                return
            space.acquire()
            try:
                loop.call_soon_threadsafe(self._feed_threaded, chunk, space)
            except RuntimeError:
                return

    def _feed_threaded(self, chunk: bytes, space: threading.Semaphore) -> None:
        self._feed(chunk)
        space.release()

    async def _watch_parent(self, ppid: int) -> None:
        # The parent died if we were re-parented (ppid changed); PID reuse cannot fool this.
        while not self._eof:
            await asyncio.sleep(self._parent_poll)
            if os.getppid() != ppid:
                print("mcpio: parent process exited; shutting down", file=sys.stderr)
                self._feed_eof()
                return

    # -------------------------------------------------------------- reading
    def _feed(self, data: bytes) -> None:
        frames = self._lines.feed(data)
        if frames:
            self._frames.extend(frames)
            w = self._waiter
            if w is not None and not w.done():
                w.set_result(None)
            if len(self._frames) >= self._max_frames and self._read_transport and not self._paused:
                self._paused = True
                self._read_transport.pause_reading()

    def _feed_eof(self) -> None:
        if self._eof:
            return
        self._eof = True
        self._frames.extend(self._lines.close())
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def receive(self) -> Frame:
        while True:
            if self._frames:
                frame = self._frames.popleft()
                if self._paused and len(self._frames) < self._max_frames // 2:
                    self._paused = False
                    self._read_transport.resume_reading()  # type: ignore[union-attr]
                if self.trace is not None and type(frame) is bytes:
                    self.trace("in", frame)
                return frame
            if self._eof:
                raise EndOfStream()
            self._waiter = self._loop.create_future()  # type: ignore[union-attr]
            try:
                await self._waiter
            finally:
                self._waiter = None

    def pending_frames(self) -> int:
        return len(self._frames)

    # -------------------------------------------------------------- writing
    async def send(self, frame: bytes) -> None:
        if self.trace is not None:
            self.trace("out", frame)
        wt = self._write_transport
        if wt is not None:
            w = self._writer
            if w.lost is not None:  # type: ignore[union-attr]
                raise TransportError(f"cannot write to stdout: {w.lost}")  # type: ignore[union-attr]
            wt.write(frame)
            wt.write(b"\n")
            if not w.can_write.is_set():  # type: ignore[union-attr]
                await w.can_write.wait()  # type: ignore[union-attr]
                if w.lost is not None:  # type: ignore[union-attr]
                    raise TransportError(f"cannot write to stdout: {w.lost}")  # type: ignore[union-attr]
            return
        # A regular file: writes do not block for long.
        data = memoryview(bytes(frame) + b"\n")
        try:
            while data:
                n = os.write(self._out_fd, data)
                data = data[n:]
        except OSError as exc:
            raise TransportError(f"cannot write to stdout: {exc}") from exc

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._read_transport is not None:
            self._read_transport.close()
        wt = self._write_transport
        if wt is not None and not wt.is_closing():
            # Flush what is buffered (bounded), then close.
            try:
                async with asyncio.timeout(5):
                    while wt.get_write_buffer_size() and self._writer.lost is None:  # type: ignore[union-attr]
                        self._writer.can_write.clear()  # type: ignore[union-attr]
                        wt.set_write_buffer_limits(high=0)
                        await self._writer.can_write.wait()  # type: ignore[union-attr]
            except TimeoutError:
                pass
            wt.close()
        if self._proto_fd is not None:
            with contextlib.suppress(OSError):
                os.dup2(self._proto_fd, 1)
                os.close(self._proto_fd)
            sys.stdout = self._saved_stdout
            self._proto_fd = None
