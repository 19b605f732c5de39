"""Real Streamable HTTP servers for tests: uvicorn on an ephemeral loopback port.

:class:`ServerThread` runs an ASGI app (``server.http_app()``) with uvicorn in a daemon thread,
on a socket bound before the thread starts (no port race), and waits until the port accepts
connections. :func:`spawn_fixture` runs ``tests/conformance/server.py`` as a subprocess.
:func:`exchange` writes raw bytes on a new connection and reads the response (malformed or
hostile HTTP that a client library will not send).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "conformance" / "server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, host: str = "127.0.0.1", timeout: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    """Poll until ``host:port`` accepts a TCP connection."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing listens on {host}:{port} after {timeout} s") from None
            time.sleep(0.02)


class ServerThread:
    """``with ServerThread(app) as srv: httpx.get(srv.url)`` — uvicorn in a thread."""

    def __init__(self, app: Any, path: str = "/mcp", **config: Any) -> None:
        """``config``: more ``uvicorn.Config`` options (``ssl_certfile``/``ssl_keyfile``: https)."""
        import uvicorn

        # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets created with it; without, every
        # small response waits ~40 ms for Nagle's algorithm.
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.base = f"{'https' if config.get('ssl_certfile') else 'http'}://127.0.0.1:{self.port}"
        self.url = self.base + path
        self.app = app
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, **config)
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve(sockets=[self.sock])

        asyncio.run(main())

    def call(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(*args)`` on the server's loop and return its result (for inspecting state)."""
        assert self.loop is not None

        async def go() -> Any:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(go(), self.loop).result(10)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        wait_port(self.port)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@contextlib.contextmanager
def mcpio_http(
    *args: str, env: dict[str, str] | None = None, log: Path | None = None, port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``mcpio run -t http ARGS --port P`` on 127.0.0.1 (``env`` added to this one; its stderr to
    ``log``; ``port`` when the caller must know it before, e.g. for an issuer URL): yields its
    ``/mcp`` URL and the process once the port accepts (if it never does, the failure carries the
    process's stderr); stopped after."""
    port = port or free_port()
    argv = [sys.executable, "-m", "mcpio", "run", "-t", "http", *args, "--port", str(port)]
    with serving_process(argv, port, env=env, log=log) as served:
        yield served


@contextlib.contextmanager
def script_http(
    script: Path, *args: str, env: dict[str, str] | None = None, log: Path | None = None, port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python SCRIPT PORT ARGS``: a test's own server script that serves Streamable HTTP on
    127.0.0.1:PORT (its first argument); the rest as :func:`mcpio_http`."""
    port = port or free_port()
    with serving_process([sys.executable, str(script), str(port), *args], port, env=env, log=log) as served:
        yield served


@contextlib.contextmanager
def serving_process(
    argv: list[str], port: int, *, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The process ``argv``, which serves ``/mcp`` on 127.0.0.1:``port`` (see :func:`mcpio_http`)."""
    err = open(log, "ab") if log is not None else subprocess.DEVNULL  # several processes may share one log
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **(env or {})}
    )
    try:
        try:
            wait_port(port, proc=proc)
        except AssertionError as exc:  # say why the server did not start (its stderr), not only that
            said = log.read_text(errors="replace") if log is not None else "(not kept: pass log=)"
            raise AssertionError(f"{exc}; its stderr:\n{said}") from None
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if log is not None:
            err.close()  # type: ignore[union-attr]


@contextlib.contextmanager
def spawn_fixture(port: int | None = None, log: Path | None = None) -> Iterator[str]:
    """Run the conformance fixture server; yields its URL."""
    port = port or free_port()
    out = open(log, "wb") if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--port", str(port)],
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=str(ROOT),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not None:
            out.close()  # type: ignore[union-attr]


def complete(raw: bytes) -> bool:
    """``raw`` holds a whole response (the server may keep the connection open after it)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = re.search(rb"(?im)^content-length: *(\d+)\r?$", head)
    if length is not None:
        return len(body) >= int(length.group(1))
    return re.search(rb"(?im)^transfer-encoding: *chunked", head) is not None and body.endswith(b"0\r\n\r\n")


def exchange(port: int, data: bytes, wait: float = 5.0) -> bytes:
    """Write ``data``, then read until a whole response came, the server closes, or ``wait``
    seconds pass; the client then closes (a request the server still waits on ends as a
    disconnect)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may refuse and close before it has read everything
        out = b""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
            if complete(out):
                break
        return out
