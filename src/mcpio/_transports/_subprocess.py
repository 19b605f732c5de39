"""stdio client transport: spawn a server process and talk NDJSON over its pipes (spec-notes §8).

* The server runs in its own session / process group, so shutdown reaches its children
  (``npx``/``uv`` wrappers) too (pain point #3).
* Environment: ``env_mode="inherit"`` (default) passes our environment plus ``env``;
  ``"safe"`` passes only a small allowlist (PATH, HOME, LANG, TMPDIR …) plus ``env``.
  PATH is always kept, and a missing executable is an error naming it and the PATH searched.
* stderr never blocks the child: it is drained continuously into a callback (default: the
  ``mcpio.server.stderr`` logger) and the last lines are kept for error messages.
* Shutdown follows the spec: close stdin, wait ``grace``; SIGTERM the group, wait ``grace``;
  SIGKILL the group. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shutil
import signal
from collections.abc import Callable, Mapping, Sequence

from .._errors import EndOfStream, TransportError
from .._protocol._framing import DEFAULT_MAX_LINE_SIZE, LineBuffer
from ._base import Frame

log = logging.getLogger("mcpio.client")
stderr_log = logging.getLogger("mcpio.server.stderr")

SAFE_ENV_KEYS = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TMP", "TEMP",
    "SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "XDG_RUNTIME_DIR",
    "VIRTUAL_ENV", "PYTHONPATH", "NODE_PATH",
)


class ServerNotFound(FileNotFoundError):
    """The server's executable does not exist on the PATH that was searched."""


def build_env(env: Mapping[str, str] | None, mode: str) -> dict[str, str]:
    if mode == "inherit":
        base = dict(os.environ)
    elif mode == "safe":
        base = {k: v for k, v in os.environ.items() if k in SAFE_ENV_KEYS}
    else:
        raise ValueError(f"env_mode must be 'inherit' or 'safe', not {mode!r}")
    base.update(env or {})
    base.setdefault("PATH", os.environ.get("PATH", os.defpath))
    return base


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
        on_stderr: Callable[[str], None] | None = None,
        grace: float = 2.0,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
        stderr_tail: int = 40,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = build_env(env, env_mode)
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.grace = grace
        self._lines = LineBuffer(max_line_size)
        self._frames: collections.deque[Frame] = collections.deque()
        self._eof = False
        self._waiter: asyncio.Future | None = None
        self._room = asyncio.Event()
        self._room.set()
        self._tail: collections.deque[str] = collections.deque(maxlen=stderr_tail)
        self.proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task] = []
        self._closed = False

    async def open(self) -> None:
        exe = shutil.which(self.command, path=self.env.get("PATH"))
        if exe is None:
            raise ServerNotFound(
                f"cannot start MCP server: executable {self.command!r} was not found on PATH "
                f"({self.env.get('PATH', '')}); give its absolute path or fix PATH"
            )
        self.proc = await asyncio.create_subprocess_exec(
            exe, *self.args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self.env, cwd=self.cwd, start_new_session=True, limit=1 << 20,
        )
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read_stdout()), loop.create_task(self._read_stderr())]

    async def _read_stdout(self) -> None:
        assert self.proc and self.proc.stdout
        read = self.proc.stdout.read
        try:
            while True:
                chunk = await read(1 << 20)
                if not chunk:
                    break
                frames = self._lines.feed(chunk)
                if frames:
                    self._frames.extend(frames)
                    self._wake()
                    if len(self._frames) >= 1024:  # backpressure: stop reading until drained
                        self._room.clear()
                        await self._room.wait()
        except Exception as exc:  # pipe errors end the stream
            log.debug("server stdout failed: %s", exc)
        finally:
            self._frames.extend(self._lines.close())
            self._eof = True
            self._wake()

    async def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        while True:
            try:
                line = await self.proc.stderr.readline()
            except ValueError:  # an over-long line: take what is there
                line = await self.proc.stderr.read(1 << 16)
            except Exception:
                return
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self._tail.append(text)
            if self.on_stderr is not None:
                try:
                    self.on_stderr(text)
                except Exception:
                    log.exception("stderr callback failed")
            else:
                stderr_log.info("%s", text)

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def receive(self) -> Frame:
        while True:
            if self._frames:
                frame = self._frames.popleft()
                if len(self._frames) < 512 and not self._room.is_set():
                    self._room.set()
                return frame
            if self._eof:
                raise EndOfStream()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def send(self, frame: bytes) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise TransportError(self.describe_close())
        try:
            proc.stdin.write(frame)
            proc.stdin.write(b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise TransportError(self.describe_close()) from exc

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc else None

    def describe_close(self) -> str:
        """Why the connection ended: exit code and the tail of stderr, for error messages."""
        rc = self.returncode
        what = f"the server process exited with code {rc}" if rc is not None else "the server closed its stdout"
        tail = self.stderr_tail()
        return f"{what}" + (f"; last stderr lines:\n{tail}" if tail else " (no stderr output)")

    async def close_reason(self) -> str:
        await self.wait_exit(2.0)
        return self.describe_close()

    async def wait_exit(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.proc.wait()
        return self.proc.returncode

    async def aclose(self) -> None:
        """close stdin → wait → SIGTERM (group) → wait → SIGKILL (group); all bounded."""
        if self._closed or self.proc is None:
            return
        self._closed = True
        proc = self.proc
        with contextlib.suppress(Exception):
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()
        if await self.wait_exit(self.grace) is None:
            self._signal_group(signal.SIGTERM)
            if await self.wait_exit(self.grace) is None:
                self._signal_group(signal.SIGKILL)
                await self.wait_exit(5)
        # The leader is gone; make sure nothing of its group survives.
        self._signal_group(signal.SIGKILL)
        for t in self._tasks:
            t.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait(self._tasks, timeout=1)

    def _signal_group(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)
