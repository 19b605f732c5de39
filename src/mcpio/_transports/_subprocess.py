"""stdio client transport: spawn a server process and talk NDJSON over its pipes (spec-notes §8).

Contract of :class:`SubprocessTransport` (``await open()``, then ``send``/``receive``, then
``aclose()``):

* **Own process group.** The server starts in its own group (POSIX: a new session, so its
  process group id is its pid; Windows: a new process group inside a Job Object with
  kill-on-close), and shutdown reaches the children of wrappers such as ``npx``/``uv``/``sh -c``
  (grandchildren that hold the pipes would otherwise deadlock it). See :mod:`mcpio._platform`.
* **Two modes.** ``mode="loop"`` (the POSIX default) uses the event loop's subprocess pipes;
  ``"threads"`` (the Windows default; ``MCPIO_STDIO_MODE=threads``) serves the pipes with
  blocking threads, so it works on any event loop. Same contract either way.
* **Started, or adopted.** ``open()`` starts the server by the rules of :mod:`._spawn` (the
  executable, the environment, ``cwd``, the pipes, the group), or, given ``process=`` (a
  ``subprocess.Popen`` that :func:`._spawn.spawn` started from the same command, env and cwd
  before the event loop existed: a gateway's upstream), adopts it (its pipes served as the
  mode serves pipes: :class:`._adopted.LoopSubprocess`, or threads); a first frame written into
  it already (:func:`._spawn.send_ahead`) is not sent again: the first ``send`` must be that frame.
* **Environment modes.** ``env_mode="inherit"`` (default) passes our environment plus ``env``;
  ``"safe"`` passes only ``SAFE_ENV_KEYS`` (PATH, HOME, LANG, TMPDIR …) plus ``env``, so
  secrets in our environment do not leak to every server; ``"exact"`` passes ``env`` alone.
  PATH is always present (ours, unless ``env`` sets it): ``npx not found`` is not the
  price of passing ``env``.
* **A missing executable is an error naming it and the PATH searched** (``ServerNotFound``);
  a relative path with a slash is looked up from ``cwd``, as ``exec`` would.
* **stderr never blocks the child.** It is read continuously, split into lines (an endless line
  is cut every 64 KiB), each line handed to ``on_stderr`` (default: the ``mcpio.server.stderr``
  logger at INFO), and the last ``stderr_tail`` lines are kept for error messages.
* **Exit is keyed on the process, not on the pipes.** The child watcher tells us when the
  server process exits; if its stdout is still open then (a grandchild inherited it), the
  stream ends ``exit_linger`` seconds later anyway, so a request in flight fails promptly with
  the exit code and the tail of stderr instead of hanging.
* **Shutdown per spec** (``aclose()``, idempotent, bounded): close the server's stdin, wait
  ``grace`` seconds; SIGTERM the group (Windows: CTRL_BREAK_EVENT), wait ``grace``; SIGKILL the
  group (Windows: TerminateJobObject); then kill whatever is left of the group. If the closing
  task is cancelled, the group is killed at once. A transport never closed is killed at
  interpreter exit.
* **Backpressure.** Reading stops while 1024 frames wait to be taken; ``send`` waits while the
  pipe to the server is full (the event loop's write flow control).
* No fixed line limit below ``max_line_size`` (framing is :class:`LineBuffer`'s).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import logging
import os
import signal
import subprocess
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from .._errors import ConnectionClosed, EndOfStream, LocalProtocolError, TransportError
from .._jsonrpc import DEFAULT_MAX_LINE_SIZE
from .._platform import ProcessTree, stdio_mode
from .._protocol._framing import LineBuffer
from ._adopted import LoopSubprocess
from ._base import Abilities, Frame, hand_over
from ._spawn import adopt, build_env, not_started, spawn_args
from ._threadpipes import ThreadReader, ThreadSubprocess, ThreadWriter, read_in_chunks

log = logging.getLogger("mcpio.client")
stderr_log = logging.getLogger("mcpio.server.stderr")


_HIGH_FRAMES = 1024  # stop reading the server's stdout while this many frames wait
_LOW_FRAMES = 256
_STDERR_LINE_MAX = 64 * 1024

_live: weakref.WeakSet[SubprocessTransport] = weakref.WeakSet()


class ServerExited(ConnectionClosed):
    """The server process ended while we needed it; carries its exit code and last stderr lines."""

    def __init__(self, message: str, exit_code: int | None, stderr_tail: str) -> None:
        super().__init__(message, data={"exitCode": exit_code, "stderrTail": stderr_tail})
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, owner: SubprocessTransport) -> None:
        self.owner = owner

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.owner._on_stdout(data)
        elif fd == 2:
            self.owner._on_stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:  # the server closed its stdin (or died): a send waiting for room must not hang
            self.owner._can_write.set()
        elif fd == 1:
            self.owner._on_stdout_eof()
        elif fd == 2:
            self.owner._flush_stderr()
            self.owner._stderr_done.set()

    def process_exited(self) -> None:
        self.owner._on_exit()

    def pause_writing(self) -> None:
        self.owner._can_write.clear()

    def resume_writing(self) -> None:
        self.owner._can_write.set()


class _Stdout(asyncio.Protocol):
    """The protocol of the server's stdout pipe (loop mode): each chunk goes to the transport as
    it is read. asyncio's subprocess transport hands a chunk on through ``loop.call_soon``, one
    loop pass later (one more per answer); its end and the pipe's loss still go through it, in
    order behind the chunks (they are queued after them)."""

    def __init__(self, owner: SubprocessTransport, inner: Any) -> None:
        self.owner, self.inner = owner, inner

    def data_received(self, data: bytes) -> None:
        self.owner._on_stdout(data)

    def eof_received(self) -> bool | None:
        return cast("bool | None", self.inner.eof_received())

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)


class SubprocessTransport:
    """Client side of stdio. ``await open()`` spawns; ``aclose()`` runs the shutdown sequence."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        env_mode: str = "inherit",
        cwd: str | os.PathLike[str] | None = None,
        on_stderr: Callable[[str], Any] | None = None,
        grace: float = 2.0,
        exit_linger: float = 0.5,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
        stderr_tail: int = 40,
        mode: str | None = None,
        process: subprocess.Popen[bytes] | None = None,
    ) -> None:
        self.command = command
        self.args = [os.fspath(a) for a in args]
        self.env = build_env(env, env_mode)
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.abilities = Abilities(
            close_reason=self.close_reason,
            key=self.key,
            open=self.open,
            stderr_tail=self.stderr_tail,
            closed_error=self.closed_error,
            push=self.push,
            send_nowait=self.send_nowait,
        )
        self._take: Callable[[Any], Any] | None = None  # the engine's (Abilities.push)
        self.on_stderr = on_stderr
        self.grace = grace
        self.exit_linger = exit_linger
        self.mode = stdio_mode(mode)  # "loop" or "threads" (ValueError for anything else)
        self._lines = LineBuffer(max_line_size)
        self._frames: collections.deque[Frame] = collections.deque()
        self._eof = False
        self._spoke = False  # a line came on its stdout (then it is no script that never served)
        self._waiter: asyncio.Future[None] | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=stderr_tail)
        self._err_buf = bytearray()
        self._transport: asyncio.SubprocessTransport | ThreadSubprocess | LoopSubprocess | None = None
        self._tree: ProcessTree | None = None
        self._exited = asyncio.Event()
        self._stderr_done = asyncio.Event()  # the server's stderr reached end of file
        self._can_write = asyncio.Event()
        self._can_write.set()
        self._reading_paused = False
        self._closed = False
        self._process = process  # started already (spawn()): adopted by open() instead of starting one
        self._ahead = b""  # the adopted process's first frame, written already (send_ahead): not sent again
        self.pid: int | None = None

    @property
    def key(self) -> str:
        """Identifies the server for per-server caches (the era it speaks, for instance)."""
        return "stdio:" + "\0".join([self.command, *self.args, self.cwd or ""])

    # ------------------------------------------------------------------ start
    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        if self._process is not None:  # started already: its pipes served as the mode serves them
            proc, self._process = self._process, None
            self._tree, self._ahead = adopt(proc)
            if self.mode == "threads":
                self._transport = ThreadSubprocess(loop, _Protocol(self), proc)
            else:
                self._transport = await LoopSubprocess.adopt(loop, _Protocol(self), proc)
        else:
            argv, options = spawn_args(self.command, self.args, self.env, self.cwd)  # the one set of rules
            try:
                if self.mode == "threads":
                    self._transport = ThreadSubprocess(loop, _Protocol(self), subprocess.Popen(argv, **options))
                else:
                    self._transport, _ = await loop.subprocess_exec(lambda: _Protocol(self), *argv, **options)
                    stdout = cast("asyncio.ReadTransport", self._transport.get_pipe_transport(1))
                    stdout.set_protocol(_Stdout(self, stdout.get_protocol()))  # chunks without a loop pass
            except OSError as exc:
                raise not_started(argv[0], exc) from exc
            self._tree = ProcessTree(self._transport.get_pid())
        if self.mode != "threads":  # the event loop's pipes (the threads read READ_CHUNK already)
            for fd in (1, 2):
                read_in_chunks(cast("asyncio.ReadTransport", self._transport.get_pipe_transport(fd)))
        self.pid = self._transport.get_pid()
        _live.add(self)

    # ------------------------------------------------------------------ events from the loop
    def push(self, take: Callable[[Any], Any]) -> None:
        self._take = take

    def _on_stdout(self, data: bytes) -> None:
        if self._eof:
            return
        frames = self._lines.feed(data)
        if not frames:
            return
        self._spoke = True
        if hand_over(self._take, frames, self._frames):
            self._wake()
            if len(self._frames) >= _HIGH_FRAMES and not self._reading_paused:
                pipe = self._stdout_pipe()
                if pipe is not None:
                    pipe.pause_reading()
                    self._reading_paused = True

    def _on_stdout_eof(self) -> None:
        if not self._eof:
            self._frames.extend(self._lines.close())
            self._eof = True
            self._wake()

    def _on_stderr(self, data: bytes) -> None:
        buf = self._err_buf
        buf += data
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                if len(buf) > _STDERR_LINE_MAX:
                    self._stderr_line(bytes(buf[:_STDERR_LINE_MAX]))
                    del buf[:_STDERR_LINE_MAX]
                    continue
                return
            self._stderr_line(bytes(buf[:nl]))
            del buf[: nl + 1]

    def _flush_stderr(self) -> None:
        if self._err_buf:
            self._stderr_line(bytes(self._err_buf))
            self._err_buf.clear()

    def _stderr_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self._tail.append(text)
        if self.on_stderr is None:
            stderr_log.info("%s", text)
            return
        try:
            self.on_stderr(text)
        except Exception:
            log.exception("the stderr callback failed")

    def _on_exit(self) -> None:
        self._exited.set()
        if not self._eof:
            # A grandchild may hold stdout open forever; the server itself is gone.
            asyncio.get_running_loop().call_later(self.exit_linger, self._on_stdout_eof)

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    # ------------------------------------------------------------------ the transport seam
    async def receive(self) -> Frame:
        while True:
            if self._frames:
                frame = self._frames.popleft()
                if self._reading_paused and len(self._frames) <= _LOW_FRAMES:
                    self._reading_paused = False
                    pipe = self._stdout_pipe()
                    if pipe is not None:
                        pipe.resume_reading()
                return frame
            if self._eof:
                raise EndOfStream()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def send_nowait(self, frame: bytes, now: bool = False) -> bool:
        """Write ``frame`` when that needs no waiting (the pipe open and below its high-water mark,
        the first frame sent): True, written at once whatever ``now`` says. False: :meth:`send` it."""
        pipe = self._stdin_pipe()
        if pipe is None or pipe.is_closing() or self._closed or self._ahead or not self._can_write.is_set():
            return False
        pipe.write(frame + b"\n")  # one write, one read for the server: never a line without its end
        return True

    async def send(self, frame: bytes) -> None:
        pipe = self._stdin_pipe()
        if pipe is None or pipe.is_closing() or self._closed:
            raise TransportError(self.describe_close())
        if self._ahead:  # the first frame: written before the process was adopted (send_ahead)
            ahead, self._ahead = self._ahead, b""
            if frame == ahead:
                return
            raise LocalProtocolError(  # the server would see two first requests with one id
                f"the server {self.command!r} was sent a different first message before it was adopted: "
                "give Client(process=...) the options its first request was written with (send_first)"
            )
        pipe.write(frame + b"\n")  # one write, one read for the server: never a line without its end
        if not self._can_write.is_set():
            await self._can_write.wait()
            if pipe.is_closing():
                raise TransportError(self.describe_close())

    def _stdin_pipe(self) -> asyncio.WriteTransport | ThreadWriter | None:
        pipe = self._transport.get_pipe_transport(0) if self._transport is not None else None
        return cast("asyncio.WriteTransport | ThreadWriter | None", pipe)

    def _stdout_pipe(self) -> asyncio.ReadTransport | ThreadReader | None:
        pipe = self._transport.get_pipe_transport(1) if self._transport is not None else None
        return cast("asyncio.ReadTransport | ThreadReader | None", pipe)

    # ------------------------------------------------------------------ what happened
    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode() if self._transport is not None else None

    @property
    def ended(self) -> bool:
        """True once the server's output has ended and every frame was taken."""
        return self._eof and not self._frames

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    def describe_close(self) -> str:
        """Why the connection ended: exit code and the tail of stderr, for error messages."""
        rc = self.returncode
        if rc is None:
            what = "the server closed its stdout" if self._eof else "the connection to the server is closed"
        elif rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            what = f"the server process was killed by {name} (exit code {rc})"
        else:
            what = f"the server process exited with code {rc}"
        tail = self.stderr_tail()
        if rc == 0 and not tail and not self._spoke:  # a script that ended quietly: it never started serving
            return (
                f"{what} without serving (it wrote nothing to stderr): a server keeps running and answers on "
                "stdin; a Python script must start serving (server.run()), or give its file to mcpio run"
            )
        return what + (f"; last stderr lines:\n{tail}" if tail else " (it wrote nothing to stderr)")

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the server process to exit; its exit code or None."""
        if self._transport is None:
            return None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._exited.wait()
        return self.returncode

    async def _settle(self) -> int | None:
        """Wait briefly for the exit, then for the rest of stderr (it may arrive after the exit)."""
        rc = await self.wait_exit(1.0)
        if rc is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await self._stderr_done.wait()
        return rc

    async def close_reason(self) -> str:
        await self._settle()
        return self.describe_close()

    async def closed_error(self, what: str) -> ServerExited:
        """The error for ``what`` failing because the server went away (waits briefly for its exit)."""
        rc = await self._settle()
        return ServerExited(f"{what} failed: {self.describe_close()}", rc, self.stderr_tail())

    # ------------------------------------------------------------------ shutdown
    async def aclose(self) -> None:
        """close stdin → wait → SIGTERM (group) → wait → SIGKILL (group); bounded, idempotent."""
        if self._closed or self._transport is None:
            return
        self._closed = True
        transport = self._transport
        try:
            pipe = transport.get_pipe_transport(0)
            if pipe is not None:
                pipe.close()
            if await self.wait_exit(self.grace) is None:
                log.debug("server %s did not exit %.1f s after stdin closed; sending SIGTERM", self.pid, self.grace)
                self._end_tree(kill=False)
                if await self.wait_exit(self.grace) is None:
                    log.debug("server %s ignored SIGTERM for %.1f s; sending SIGKILL", self.pid, self.grace)
                    self._end_tree(kill=True)
                    await self.wait_exit(5.0)
            self._end_tree(kill=True)  # whatever is left of the group
        except BaseException:  # cancelled while closing: never leave the group behind
            self._end_tree(kill=True)
            raise
        finally:
            _live.discard(self)
            if self._tree is not None:
                self._tree.close()
            transport.close()
            self._on_stdout_eof()
            self._can_write.set()

    def _end_tree(self, kill: bool) -> None:
        """Ask the server's whole tree to stop (SIGTERM; CTRL_BREAK_EVENT), or end it (``kill``)."""
        if self._tree is not None:
            if kill:
                self._tree.kill()
            else:
                self._tree.terminate()


@atexit.register
def _kill_leftovers() -> None:
    for t in list(_live):
        t._end_tree(kill=True)
