"""A process started before the event loop existed (``subprocess.Popen``, :func:`._spawn.spawn`),
served by the loop's own pipe transports: the ``"loop"`` stdio mode for an adopted process.

:class:`LoopSubprocess` has the ``asyncio.SubprocessTransport`` calls the client uses (as
:class:`._threadpipes.ThreadSubprocess` has for the ``"threads"`` mode): ``protocol`` gets
``pipe_data_received(fd, data)`` for fds 1 and 2, ``pipe_connection_lost(fd, exc)`` once per
pipe, ``pause_writing``/``resume_writing`` for stdin, and ``process_exited()`` once the process
has exited (a thread waits for it: the loop cannot watch a child it did not start). No data
after ``close``.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
from typing import Any


class _Pipe(asyncio.Protocol):
    """One pipe's protocol: its events go to the subprocess protocol, tagged with the fd."""

    def __init__(self, owner: LoopSubprocess, fd: int) -> None:
        self.owner = owner
        self.fd = fd

    def data_received(self, data: bytes) -> None:
        if not self.owner._closed:
            self.owner._protocol.pipe_data_received(self.fd, data)

    def eof_received(self) -> bool:
        return False  # the transport closes: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._lost(self.fd, exc)

    def pause_writing(self) -> None:
        self.owner._protocol.pause_writing()

    def resume_writing(self) -> None:
        self.owner._protocol.resume_writing()


class LoopSubprocess:
    """``proc``'s pipes as the loop's pipe transports (made by :meth:`adopt`)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, proc: subprocess.Popen[bytes]
    ) -> None:
        self._loop = loop
        self._protocol = protocol
        self._proc = proc
        self._pipes: dict[int, Any] = {}
        self._lost_fds: set[int] = set()
        self._exited = False
        self._closed = False

    @classmethod
    async def adopt(
        cls, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, proc: subprocess.Popen[bytes]
    ) -> LoopSubprocess:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self = cls(loop, protocol, proc)
        try:
            self._pipes[0] = (await loop.connect_write_pipe(lambda: _Pipe(self, 0), proc.stdin))[0]
            self._pipes[1] = (await loop.connect_read_pipe(lambda: _Pipe(self, 1), proc.stdout))[0]
            self._pipes[2] = (await loop.connect_read_pipe(lambda: _Pipe(self, 2), proc.stderr))[0]
        except BaseException:
            self.close()
            raise
        threading.Thread(target=self._wait, name="mcpio-server-wait", daemon=True).start()
        return self

    def _wait(self) -> None:
        self._proc.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._process_exited)

    def _process_exited(self) -> None:
        if not self._exited:
            self._exited = True
            self._protocol.process_exited()

    def _lost(self, fd: int, exc: Exception | None) -> None:
        if fd not in self._lost_fds and not self._closed:
            self._lost_fds.add(fd)
            self._protocol.pipe_connection_lost(fd, exc)

    def get_pid(self) -> int:
        return self._proc.pid

    def get_returncode(self) -> int | None:
        return self._proc.returncode if self._exited else None

    def get_pipe_transport(self, fd: int) -> Any:
        return self._pipes.get(fd)

    def close(self) -> None:
        """Close the pipes (stdin after what is queued) and kill the process if it still runs."""
        for fd, pipe in self._pipes.items():
            pipe.close()
            if fd != 0:
                self._lost(fd, None)  # now, as ThreadSubprocess: nothing is read from it any more
        self._closed = True
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
