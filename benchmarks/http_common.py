"""Shared pieces of the HTTP benchmarks (http_sessions.py, http_load.py).

* :class:`ServerProc`: one ``benchmarks/http_server.py KIND`` subprocess on an ephemeral
  127.0.0.1 port, with its CPU time and stderr;
* :class:`RawConn`: a minimal HTTP/1.1 keep-alive client on asyncio streams (Content-Length,
  chunked and close-delimited bodies) — the load benchmark's client, kept cheap so that the
  client is not what is measured;
* JSON-RPC messages of both eras and :func:`answer_of` (the JSON-RPC answer in a JSON or SSE
  body).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "http_server.py"
sys.path.insert(0, str(HERE))
from run import SCRUBBED_ENV, _commit, _load  # noqa: E402  (the stdio harness's helpers)

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "mcpio-http-bench", "version": "1.0"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}
DISTS = {
    "mcpio": "mcpio",
    "mcpio-inline": "mcpio",
    "mcp": "mcp",
    "mcp-json": "mcp",
    "fastmcp": "fastmcp",
    "floor": "msgspec",
}


def initialize_body(id_: int = 0) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": id_,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
    ).encode()


INITIALIZED_BODY = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
_META_JSON = json.dumps(MODERN_META, separators=(",", ":")).encode()


def add_body(id_: int, a: int, b: int = 2, modern: bool = False) -> bytes:
    if modern:
        return (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d},'
            b'"_meta":%s}}' % (id_, a, b, _META_JSON)
        )
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d}}}' % (
        id_,
        a,
        b,
    )


def hold_add_body(id_: int, a: int, ms: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold_add","arguments":{"a":%d,"b":2,"ms":%d},'
        b'"_meta":%s}}' % (id_, a, ms, _META_JSON)
    )


def answer_of(content_type: str, body: bytes, id_: Any) -> dict | None:
    """The JSON-RPC response with this id in a JSON body or an SSE stream, or None."""
    if content_type.startswith("application/json"):
        try:
            msg = json.loads(body)
        except ValueError:
            return None
        return msg if isinstance(msg, dict) and msg.get("id") == id_ else None
    if content_type.startswith("text/event-stream"):
        data: list[bytes] = []
        for raw in body.replace(b"\r\n", b"\n").split(b"\n") + [b""]:
            if raw.startswith(b"data:"):
                data.append(raw[5:].removeprefix(b" "))
            elif not raw and data:
                try:
                    msg = json.loads(b"\n".join(data))
                except ValueError:
                    msg = None
                data = []
                if isinstance(msg, dict) and msg.get("id") == id_ and ("result" in msg or "error" in msg):
                    return msg
    return None


def add_value(msg: dict | None) -> Any:
    try:
        return msg["result"]["structuredContent"]["result"]  # type: ignore[index]
    except (KeyError, TypeError):
        return None


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def median(values: list[Any]) -> Any:
    vals = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
    return statistics.median(vals) if vals else None


def versions(python: str, servers: list[str]) -> dict[str, str | None]:
    dists = {s: DISTS[s] for s in servers if s in DISTS}
    dists.update({"uvicorn": "uvicorn", "h11": "h11", "httptools": "httptools", "uvloop": "uvloop"})
    code = (
        "import importlib.metadata as m, json, sys\nout = {}\nfor s, d in json.loads(sys.argv[1]).items():\n"
        "    try: out[s] = m.version(d)\n    except Exception: out[s] = None\nprint(json.dumps(out))"
    )
    r = subprocess.run([python, "-c", code, json.dumps(dists)], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


commit = _commit
loadavg = _load

RESULTS_HTTP = HERE / "RESULTS-http.md"
_RESULTS_HTTP_HEAD = (
    "# Benchmark results (Streamable HTTP)\n\nWritten by `scripts/bench` (benchmarks/http_load.py and "
    "benchmarks/http_sessions.py; each rewrites its own section); see benchmarks/README.md § HTTP. "
    "The stdio table is in [RESULTS.md](RESULTS.md).\n"
)


def write_section(path: Path, name: str, title: str, text: str) -> None:
    """Replace (or append) the section ``name`` of a Markdown file, between HTML-comment markers,
    leaving the other sections as they are."""
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    block = f"{begin}\n## {title}\n\n{text.strip()}\n{end}"
    old = path.read_text() if path.exists() else _RESULTS_HTTP_HEAD
    if begin in old and end in old:
        i, j = old.index(begin), old.index(end) + len(end)
        new = old[:i] + block + old[j:]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)


# ==================================================================== the server process
class ServerProc:
    """``benchmarks/http_server.py KIND`` in a subprocess; ``port`` once it listens."""

    def __init__(self, kind: str, python: str = sys.executable, extra: list[str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        env.pop("BENCH_EXTRA_TOOLS", None)
        env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
        self.kind = kind
        self.errfile = tempfile.NamedTemporaryFile(prefix=f"bench-http-{kind}-", suffix=".stderr", delete=False)
        self.p = subprocess.Popen(
            [python, str(RUNNER), kind, *(extra or [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.errfile,
            env=env,
            close_fds=True,
        )
        self.pid = self.p.pid
        self.port = 0
        self.exit_code: int | None = None
        self.graceful: bool | None = None
        self.shutdown_s: float | None = None

    def wait_listening(self, timeout: float = 60.0) -> int:
        """Read ``PORT n`` and wait until an HTTP request is answered (the lifespan has run)."""
        assert self.p.stdout is not None
        line = self.p.stdout.readline().decode()
        if not line.startswith("PORT "):
            raise RuntimeError(f"{self.kind}: the server did not start: {line!r}{self.stderr_tail()}")
        self.port = int(line.split()[1])
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.stats_sync()
                return self.port
            except OSError:
                if self.p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{self.kind}: no answer on port {self.port}{self.stderr_tail()}") from None
                time.sleep(0.05)

    def stats_sync(self, collect: bool = False) -> dict[str, Any]:
        path = "/_bench/stats" + ("?gc=1" if collect else "")
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise OSError(f"stats: {head[:100]!r}")
        return json.loads(body)

    async def stats(self, collect: bool = False) -> dict[str, Any]:
        conn = RawConn("127.0.0.1", self.port)
        try:
            r = await conn.request("GET", "/_bench/stats" + ("?gc=1" if collect else ""), b"", timeout=30)
        finally:
            conn.close()
        return json.loads(r.body)

    def cpu_seconds(self) -> float:
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return float("nan")

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (uvicorn's graceful shutdown, after which uvicorn re-raises the signal: the exit
        status is -SIGTERM), then SIGKILL after ``timeout``. Sets ``graceful`` and ``shutdown_s``."""
        if self.p.poll() is None:
            t0 = time.perf_counter()
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
                self.graceful = True
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                self.graceful = False
            self.shutdown_s = time.perf_counter() - t0
        self.exit_code = self.p.returncode
        if self.p.stdout is not None:
            self.p.stdout.close()
        return self.exit_code

    def stderr_text(self) -> str:
        try:
            self.errfile.flush()
            return Path(self.errfile.name).read_text("utf-8", "replace")
        except OSError:
            return ""

    def stderr_tail(self) -> str:
        text = self.stderr_text()[-2000:]
        return ("; its stderr ends with:\n" + text) if text else ""

    def problems(self) -> list[str]:
        """Tracebacks and error lines the server logged (there should be none)."""
        lines = self.stderr_text().splitlines()
        return [ln for ln in lines if "Traceback" in ln or " ERROR" in ln or ln.startswith("ERROR")]

    def close(self) -> None:
        self.stop()
        self.errfile.close()
        try:
            os.unlink(self.errfile.name)
        except OSError:
            pass

    def __enter__(self) -> ServerProc:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ==================================================================== a raw HTTP/1.1 client
class HTTPError(Exception):
    pass


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


class RawConn:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it, or when it has
    been idle for ``IDLE`` seconds."""

    IDLE = 2.0

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.host_header = f"{host}:{port}".encode()
        self.connects = 0
        self.last_used = 0.0

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connects += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, body: bytes, headers: bytes = b"", timeout: float = 60.0
    ) -> Response:
        """``headers``: extra header lines, each ending in CRLF."""
        return await asyncio.wait_for(self._request(method, path, body, headers), timeout)

    async def _request(self, method: str, path: str, body: bytes, headers: bytes) -> Response:
        now = time.monotonic()
        if self.writer is not None and now - self.last_used > self.IDLE:
            self.close()  # before the server's keep-alive timeout (uvicorn: 5 s) can close it under a request
        self.last_used = now
        if self.writer is None:
            await self.connect()
        assert self.reader is not None and self.writer is not None
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (method.encode(), path.encode(), self.host_header, headers)
        if body or method == "POST":
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.writer.write(head + b"\r\n" + body)
        reader = self.reader
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self.close()
            raise HTTPError(f"connection lost before the response: {exc!r}") from None
        lines = raw[:-4].split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        status = int(parts[1])
        hdrs: dict[str, str] = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            hdrs[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
        if "content-length" in hdrs:
            data = await reader.readexactly(int(hdrs["content-length"]))
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    break
                chunks.append((await reader.readexactly(size + 2))[:-2])
            data = b"".join(chunks)
        elif status in (204, 304) or 100 <= status < 200:
            data = b""
        else:
            data = await reader.read()  # close-delimited
            self.close()
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        return Response(status, hdrs, data)
