"""Pipes served by blocking threads: the ``"threads"`` stdio mode (the Windows default, where
the Proactor loop's pipe transports need overlapped handles nothing guarantees; selectable on
every OS with ``MCPIO_STDIO_MODE=threads``, so the same code runs in the Linux test suite).

They mimic the event loop's pipe transports, so the stdio transports use either unchanged:

* :class:`ThreadReader` — a daemon thread reads chunks with blocking ``read`` and hands them
  to the loop one at a time (``on_data``); ``pause_reading`` stops it before the next read
  (backpressure); end of file or a read error is ``on_eof`` (once).
* :class:`ThreadWriter` — ``write`` queues (never blocks); a daemon thread writes the queue in
  order with blocking ``write``. Above the high-water mark ``on_pause`` is called, at or below
  the low-water mark ``on_resume``; a write error is ``on_lost(exc)``, and ``close`` writes
  what is queued, then closes (``abort`` drops it).
* :class:`ThreadSubprocess` — a ``subprocess.Popen`` with those on its three pipes and a thread
  waiting for its exit, behind the ``asyncio.SubprocessTransport`` calls the client uses.

The threads are daemons that never hold a lock an exiting interpreter needs; a thread blocked
in ``read`` when its reader is closed closes the file when the read returns. Callbacks run in
the loop's thread; none runs after ``close``/``abort``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import subprocess
import threading
from collections.abc import Callable
from typing import IO, Any

from .._platform import wait_ready

#: The most one read of a pipe asks for, in both modes. Under glibc's mmap threshold (128 KiB),
#: so the buffer each read allocates comes from the heap: asyncio's own 256 KiB made every read an
#: mmap, an mremap to the bytes read and an munmap (with page faults), three syscalls per read of
#: one small frame (benchmarks/PROFILE.md, the proxy hop).
READ_CHUNK = 64 * 1024


def read_in_chunks(pipe: asyncio.ReadTransport) -> None:
    """Make an event-loop read pipe transport read at most :data:`READ_CHUNK` at a time: its
    ``max_size``, a class attribute of asyncio's Unix pipe transports, set on this one instance.
    Other loops' transports (the Proactor's, uvloop's) have none and read into buffers of their
    own: left as they are."""
    if hasattr(type(pipe), "max_size"):
        pipe.max_size = READ_CHUNK  # type: ignore[attr-defined]


def _post(loop: asyncio.AbstractEventLoop, callback: Callable[..., Any], *args: Any) -> bool:
    """Schedule ``callback`` in the loop's thread; False once the loop is closed."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:
        return False
    return True


class ThreadReader:
    def __init__(
        self,
        file: IO[bytes],
        loop: asyncio.AbstractEventLoop,
        *,
        on_data: Callable[[bytes], Any],
        on_eof: Callable[[], Any],
        closefd: bool = True,
        name: str = "mcpio-read",
    ) -> None:
        self._file = file
        self._loop = loop
        self._on_data = on_data
        self._on_eof = on_eof
        self._closefd = closefd
        self._room = threading.Event()  # set while the thread may read on
        self._room.set()
        self._taken = threading.Semaphore(1)  # one chunk at a time on its way to the loop
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                self._room.wait()
                if self._closed:
                    return
                try:
                    chunk = self._file.read(READ_CHUNK)
                except BlockingIOError:  # someone sharing the pipe made it non-blocking
                    wait_ready(self._file.fileno(), write=False)
                    continue
                except (OSError, ValueError):  # a broken pipe, or the file was closed
                    chunk = b""
                if chunk is None:  # non-blocking and nothing there
                    wait_ready(self._file.fileno(), write=False)
                    continue
                if not chunk:
                    _post(self._loop, self._eof)
                    return
                self._taken.acquire()
                if not _post(self._loop, self._deliver, chunk):
                    return
        finally:
            if self._closefd:
                with contextlib.suppress(OSError):
                    self._file.close()

    def _deliver(self, chunk: bytes) -> None:
        self._taken.release()
        if not self._closed:
            self._on_data(chunk)

    def _eof(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_eof()

    def pause_reading(self) -> None:
        self._room.clear()

    def resume_reading(self) -> None:
        self._room.set()

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop: no callback from now on; the thread ends after the read it may be blocked in."""
        self._closed = True
        self._room.set()


class ThreadWriter:
    def __init__(
        self,
        file: IO[bytes],
        loop: asyncio.AbstractEventLoop,
        *,
        on_pause: Callable[[], Any],
        on_resume: Callable[[], Any],
        on_lost: Callable[[BaseException | None], Any],
        closefd: bool = True,
        name: str = "mcpio-write",
    ) -> None:
        self._file = file
        self._loop = loop
        self._on_pause = on_pause
        self._on_resume = on_resume
        self._on_lost = on_lost
        self._closefd = closefd
        self._queue: collections.deque[bytes | memoryview] = collections.deque()
        self._cond = threading.Condition()
        self._size = 0  # bytes queued and not yet written (kept in the loop's thread)
        self._high = 64 * 1024
        self._low = 16 * 1024
        self._paused = False
        self._closing = False  # no more writes are accepted
        self._done = False  # the thread ended (callbacks are over)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- the loop's side
    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or not data:
            return
        chunk = data if isinstance(data, (bytes, memoryview)) else bytes(data)
        self._size += len(chunk)
        with self._cond:
            self._queue.append(chunk)
            self._cond.notify()
        self._maybe_pause()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._high = 64 * 1024 if high is None else high
        self._low = self._high // 4 if low is None else low
        self._maybe_pause()

    def get_write_buffer_size(self) -> int:
        return self._size

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """Write what is queued, then close the file (``on_lost(None)`` when done)."""
        if self._closing:
            return
        self._closing = True
        with self._cond:
            self._cond.notify()

    def abort(self) -> None:
        """Drop what is queued and close (``on_lost(None)``)."""
        with self._cond:
            self._queue.clear()
        self._size = 0
        self.close()
        self._maybe_resume()

    def _maybe_pause(self) -> None:
        if not self._paused and self._size > self._high:
            self._paused = True
            self._on_pause()

    def _maybe_resume(self) -> None:
        if self._paused and self._size <= self._low:
            self._paused = False
            self._on_resume()

    def _written(self, n: int) -> None:
        self._size = max(0, self._size - n)
        self._maybe_resume()

    def _failed(self, exc: BaseException | None) -> None:
        if self._done:
            return
        self._done = True
        self._closing = True
        self._size = 0
        self._maybe_resume()
        self._on_lost(exc)

    # ---------------------------------------------------------------- the thread
    def _run(self) -> None:
        error: BaseException | None = None
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        self._cond.wait()
                    if not self._queue:
                        return  # closing, and everything was written
                    chunk = self._queue.popleft()
                view = memoryview(chunk)
                while view:
                    try:
                        n = self._file.write(view)
                    except BlockingIOError:  # someone sharing the pipe made it non-blocking
                        wait_ready(self._file.fileno(), write=True)
                        continue
                    if n is None:
                        wait_ready(self._file.fileno(), write=True)
                        continue
                    view = view[n:]
                if not _post(self._loop, self._written, len(chunk)):
                    return
        except (OSError, ValueError) as exc:  # the reader is gone (EPIPE), or the file was closed
            error = exc
            with self._cond:
                self._queue.clear()
        finally:
            if self._closefd:
                with contextlib.suppress(OSError):
                    self._file.close()
            _post(self._loop, self._failed, error)


class ThreadSubprocess:
    """A child process whose pipes are served by threads (``asyncio.SubprocessTransport``-like).

    ``protocol`` gets ``pipe_data_received(fd, data)`` for fds 1 and 2,
    ``pipe_connection_lost(fd, exc)`` for each pipe, ``pause_writing``/``resume_writing`` for
    stdin and ``process_exited()`` once the process has exited.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, proc: subprocess.Popen[bytes]
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._loop = loop
        self._protocol = protocol
        self._exited = False
        self._pipes: dict[int, ThreadReader | ThreadWriter] = {
            0: ThreadWriter(
                proc.stdin,
                loop,
                on_pause=protocol.pause_writing,
                on_resume=protocol.resume_writing,
                on_lost=lambda exc: self._lost(0, exc),
                name="mcpio-server-stdin",
            ),
            1: ThreadReader(
                proc.stdout,
                loop,
                on_data=lambda d: protocol.pipe_data_received(1, d),
                on_eof=lambda: self._lost(1, None),
                name="mcpio-server-stdout",
            ),
            2: ThreadReader(
                proc.stderr,
                loop,
                on_data=lambda d: protocol.pipe_data_received(2, d),
                on_eof=lambda: self._lost(2, None),
                name="mcpio-server-stderr",
            ),
        }
        self._lost_fds: set[int] = set()
        threading.Thread(target=self._wait, name="mcpio-server-wait", daemon=True).start()

    def _wait(self) -> None:
        self._proc.wait()
        _post(self._loop, self._process_exited)

    def _process_exited(self) -> None:
        if not self._exited:
            self._exited = True
            self._protocol.process_exited()

    def _lost(self, fd: int, exc: BaseException | None) -> None:
        if fd not in self._lost_fds:
            self._lost_fds.add(fd)
            self._protocol.pipe_connection_lost(fd, exc if isinstance(exc, Exception) else None)

    def get_pid(self) -> int:
        return self._proc.pid

    def get_returncode(self) -> int | None:
        return self._proc.returncode if self._exited else None

    def get_pipe_transport(self, fd: int) -> ThreadReader | ThreadWriter | None:
        return self._pipes.get(fd)

    def close(self) -> None:
        """Close the pipes (stdin after what is queued) and kill the process if it still runs."""
        for fd, pipe in self._pipes.items():
            if isinstance(pipe, ThreadWriter):
                pipe.close()
            else:
                pipe.close()
                self._lost(fd, None)
        if self._proc.returncode is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
