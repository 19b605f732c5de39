"""The stdio benchmark: mcpio against the official SDK, fastmcp and a hand-written floor.

    scripts/bench                      # installs the peers into .venv-bench, full run (~10 min)
    scripts/bench --quick              # a few seconds per server
    python benchmarks/run.py --servers mcpio,floor --quick --json out.json   # no peers needed

Every server (benchmarks/servers/*.py) offers the same two tools, ``add(a:int,b:int)->int`` and
``echo(text:str)->str``, with the same result shape (text content plus ``structuredContent``
``{"result": …}``), and ``BENCH_EXTRA_TOOLS=N`` more for the tools/list figure. The client here
is the standard library only (raw ``os.read``/``os.write`` on the pipes, ``json`` parsing kept
out of the timed sections where it can be), so it costs every server the same.

Each round runs every figure for every server, figure by figure, in an order rotated from
round to round (interleaved, so a noisy minute hurts all servers alike); a figure's value is the
median over rounds, and each server's is also given as a ratio to the floor's in the same run.

Figures (per server):
 1. ``cold_init_ms``: spawn → initialize response; ``cold_discover_ms``: spawn → answer to a
    ``server/discover`` sent first (``discover_answer`` says whether it was a result or an error);
    ``cold_init_200_ms``: spawn → initialize with 200 extra tools registered;
 2. ``seq_p50_us`` / ``seq_p99_us``: sequential ``tools/call add`` round trips;
 3. ``pipelined_per_s``: N ``tools/call add`` written at once from a thread while the main thread
    reads; calls/s from the first byte written to the last answer read; every id must be answered
    exactly once with the right sum; ``burst_cpu_us``: server CPU time per call during the burst;
 4. ``echo_1MiB_ms`` / ``echo_10MiB_ms``: round trip of an echo of that many ASCII characters
    (the answer carries the text twice: content and structuredContent);
 5. ``rss_seq_mib`` / ``rss_burst_mib``: peak RSS (VmHWM) after the sequential calls and after the
    burst; ``rss_now_burst_mib``: VmRSS after the burst;
 6. ``shutdown_idle_ms``: stdin closed → process exit, right after initialize;
    ``shutdown_load_ms``: the same right after the burst, with one more ``tools/call`` written just
    before the close — it must still be answered (``last_answered``);
 7. ``list200_ms``: ``tools/list`` of all 202 tools, following ``nextCursor`` to the end.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = {
    "floor": HERE / "servers" / "floor_server.py",
    "mcpio": HERE / "servers" / "mcpio_server.py",
    "mcpio-inline": HERE / "servers" / "mcpio_inline_server.py",
    "mcp": HERE / "servers" / "mcp_server.py",
    "fastmcp": HERE / "servers" / "fastmcp_server.py",
    # mcpio_server.py on --own-python: an environment holding mcpio and its one dependency, as a host's
    # `uvx`/`pipx` gives a server that depends on mcpio. The shared venv holds the peers' packages,
    # among them typing_extensions, which msgspec imports (and inspect with it) whenever it is
    # installed: ~34 M instructions of a cold start that mcpio itself does not ask for. Cold start only.
    "mcpio-own": HERE / "servers" / "mcpio_server.py",
    # mcpio_server.py as `python -m mcpio run mcpio_server.py`: the command `mcpio install` writes into
    # host configs (the command line's start-up before the script's). Cold start only.
    "mcpio-run": HERE / "servers" / "mcpio_server.py",
}
DISTS = {"floor": None, "mcpio": "mcpio", "mcpio-inline": "mcpio", "mcp": "mcp", "fastmcp": "fastmcp"}
OWN_FIGURES = {"cold_start"}  # what mcpio-own and mcpio-run run (their other figures would be mcpio's)
COLD_ONLY = {"mcpio-own", "mcpio-run"}
VERSION = "2025-11-25"
EXTRA_TOOLS = 200
MIB = 1024 * 1024
# Interpreter settings a host does not set when it launches a server, and that change what is
# measured: -u (unbuffered stdout: a syscall per write), no .pyc cache (recompiling every module
# at every start), debug modes. The servers run without them.
SCRUBBED_ENV = frozenset(
    {
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONDEVMODE",
        "PYTHONASYNCIODEBUG",
        "PYTHONTRACEMALLOC",
        "PYTHONPROFILEIMPORTTIME",
        "PYTHONMALLOC",
        "PYTHONMALLOCSTATS",
        "PYTHONFAULTHANDLER",
        "PYTHONVERBOSE",
        "PYTHONINSPECT",
        "PYTHONWARNINGS",
        "PYTHONBREAKPOINT",
        "PYTHONDEBUG",
        "PYTHONOPTIMIZE",
        "PYTHONNODEBUGRANGES",
        "PYTHONPYCACHEPREFIX",
    }
)

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "mcpio-bench", "version": "1.0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "mcpio-bench", "version": "1.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def add_request(id_: int, a: int, b: int = 2) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":%d}}}\n' % (
        id_,
        a,
        b,
    )


class Timeout(Exception):
    pass


class Proc:
    """One server process on pipes, driven with raw reads and writes."""

    def __init__(
        self, python: str, script: Path, extra_tools: int = 0, pythonpath: str | None = None, via_cli: bool = False
    ) -> None:
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.pop("BENCH_EXTRA_TOOLS", None)
        if extra_tools:
            env["BENCH_EXTRA_TOOLS"] = str(extra_tools)
        env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
        self.errfile = tempfile.NamedTemporaryFile(prefix=f"bench-{script.stem}-", suffix=".stderr", delete=False)
        self.p = subprocess.Popen(
            [python, "-m", "mcpio", "run", str(script)] if via_cli else [python, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errfile,
            env=env,
            bufsize=0,
            close_fds=True,
        )
        self.pid = self.p.pid
        self.wfd = self.p.stdin.fileno()
        self.rfd = self.p.stdout.fileno()
        self.buf = bytearray()
        self.scan = 0
        self.eof = False

    # ---------------------------------------------------------------- I/O
    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def write_in_thread(self, data: bytes) -> threading.Thread:
        t = threading.Thread(target=self._write_quietly, args=(data,), daemon=True)
        t.start()
        return t

    def _write_quietly(self, data: bytes) -> None:
        try:
            self.write(data)
        except OSError:
            pass  # the server went away; the reader reports it

    def _fill(self, deadline: float) -> None:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise Timeout()
        r, _, _ = select.select([self.rfd], [], [], left)
        if not r:
            raise Timeout()
        chunk = os.read(self.rfd, 4 * MIB)
        if not chunk:
            self.eof = True
            raise EOFError(f"the server closed its stdout{self.stderr_tail()}")
        self.buf += chunk

    def read_line(self, timeout: float = 60.0) -> bytes:
        deadline = time.perf_counter() + timeout
        while True:
            nl = self.buf.find(b"\n", self.scan)
            if nl >= 0:
                out = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                self.scan = 0
                return out
            self.scan = len(self.buf)
            self._fill(deadline)

    def read_response(self, id_: Any, timeout: float = 60.0) -> dict:
        """The next response with this id (notifications and other lines are skipped)."""
        while True:
            msg = json.loads(self.read_line(timeout))
            if isinstance(msg, dict) and msg.get("id") == id_ and ("result" in msg or "error" in msg):
                return msg

    def read_lines(self, n: int, timeout: float) -> list[bytes]:
        """Read until ``n`` newlines have arrived; return the lines (only newlines are counted
        in the timed loop, splitting is left to the caller's untimed part)."""
        deadline = time.perf_counter() + timeout
        count = self.buf.count(b"\n")
        chunks = [bytes(self.buf)]
        self.buf.clear()
        self.scan = 0
        rfd = self.rfd
        while count < n:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                raise Timeout(f"{count} of {n} lines")
            chunk = os.read(rfd, 4 * MIB)
            if not chunk:
                self.eof = True
                raise EOFError(f"the server closed its stdout after {count} of {n} lines{self.stderr_tail()}")
            chunks.append(chunk)
            count += chunk.count(b"\n")
        data = b"".join(chunks)
        lines = data.split(b"\n")
        self.buf += lines.pop()  # after the last newline
        return lines

    def request(self, obj: dict, timeout: float = 60.0) -> dict:
        self.write(line(obj))
        return self.read_response(obj["id"], timeout)

    def initialize(self, timeout: float = 60.0) -> dict:
        r = self.request(INIT, timeout)
        self.write(line(INITIALIZED))
        return r

    # ---------------------------------------------------------------- process
    def status(self) -> dict[str, int]:
        out = {}
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for row in f:
                    k, _, v = row.partition(":")
                    if k in ("VmHWM", "VmRSS"):
                        out[k] = int(v.split()[0])  # kB
        except OSError:
            pass
        return out

    def cpu_seconds(self) -> float:
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return float("nan")

    def close_stdin(self) -> None:
        try:
            self.p.stdin.close()
        except OSError:
            pass

    def wait_exit(self, timeout: float = 30.0, since: float | None = None) -> float | None:
        """Wait for the process to exit, draining its stdout; the time since ``since`` (default:
        now) until it exited, or None on timeout."""
        t0 = time.perf_counter() if since is None else since
        deadline = t0 + timeout
        pidfd = -1
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pass
        try:
            while True:
                if pidfd < 0 and self.p.poll() is not None:
                    break
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                watch = [pidfd] if pidfd >= 0 else []
                if not self.eof:
                    watch.append(self.rfd)
                r, _, _ = select.select(watch, [], [], min(left, 0.001 if pidfd < 0 else left))
                if pidfd >= 0 and pidfd in r:
                    break
                if self.rfd in r:
                    chunk = os.read(self.rfd, 4 * MIB)
                    if chunk:
                        self.buf += chunk
                    else:
                        self.eof = True
            elapsed = time.perf_counter() - t0
        finally:
            if pidfd >= 0:
                os.close(pidfd)
        self.p.wait()
        return elapsed

    def drain_lines(self) -> list[bytes]:
        """Whatever complete lines are buffered (after exit)."""
        if not self.eof:
            while select.select([self.rfd], [], [], 0)[0]:
                chunk = os.read(self.rfd, 4 * MIB)
                if not chunk:
                    break
                self.buf += chunk
        lines = bytes(self.buf).split(b"\n")
        self.buf.clear()
        return [x for x in lines if x.strip()]

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except OSError:
                pass
        self.errfile.close()
        try:
            os.unlink(self.errfile.name)
        except OSError:
            pass

    def stderr_tail(self) -> str:
        try:
            self.errfile.flush()
            with open(self.errfile.name, "rb") as f:
                data = f.read()[-2000:]
        except OSError:
            return ""
        return ("; its stderr ends with:\n" + data.decode("utf-8", "replace")) if data else ""

    def __enter__(self) -> Proc:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()


# ==================================================================== figures
class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.python = args.python
        self.q = args.quick
        self.raw: dict[str, dict[str, list[Any]]] = {s: {} for s in args.servers}
        self.checks: dict[str, list[str]] = {s: [] for s in args.servers}
        self.info: dict[str, dict[str, Any]] = {s: {} for s in args.servers}

    def rec(self, server: str, key: str, value: Any) -> None:
        self.raw[server].setdefault(key, []).append(value)

    def fail(self, server: str, what: str) -> None:
        if what not in self.checks[server]:
            self.checks[server].append(what)
        print(f"  !! {server}: {what}", file=sys.stderr)

    def proc(self, server: str, extra_tools: int = 0) -> Proc:
        if server in self.args.variants:
            script = Path(self.args.variant_scripts.get(server, SERVERS["mcpio"]))
            return Proc(self.python, script, extra_tools, pythonpath=self.args.variants[server] or None)
        if server == "mcpio-own":
            return Proc(self.args.own_python, SERVERS[server], extra_tools)
        if server == "mcpio-run":
            return Proc(self.python, SERVERS[server], extra_tools, via_cli=True)
        return Proc(self.python, SERVERS[server], extra_tools)

    # ---------------------------------------------------------------- 1. cold start
    def cold_start(self, server: str) -> None:
        spawns = self.args.spawns
        for _ in range(spawns):
            t0 = time.perf_counter()  # before the spawn: fork/exec is part of a cold start
            with self.proc(server) as p:
                p.write(line(INIT))  # written at once: it waits in the pipe while the server starts
                r = p.read_response(0)
                self.rec(server, "cold_init_ms", (time.perf_counter() - t0) * 1e3)
                if "result" not in r:
                    self.fail(server, f"initialize failed: {r.get('error')}")
                self.info[server]["serverInfo"] = r.get("result", {}).get("serverInfo")
        for _ in range(spawns):
            t0 = time.perf_counter()
            with self.proc(server) as p:
                p.write(line(DISCOVER))
                r = p.read_response(0)
                self.rec(server, "cold_discover_ms", (time.perf_counter() - t0) * 1e3)
                if "result" in r:
                    ok = isinstance(r["result"], dict) and "supportedVersions" in r["result"]
                    self.info[server]["discover_answer"] = "result" if ok else "result (not a DiscoverResult)"
                else:
                    e = r.get("error") or {}
                    self.info[server]["discover_answer"] = f"error {e.get('code')}: {str(e.get('message'))[:80]}"
        for _ in range(spawns):
            t0 = time.perf_counter()
            with self.proc(server, EXTRA_TOOLS) as p:
                p.write(line(INIT))
                r = p.read_response(0)
                self.rec(server, "cold_init_200_ms", (time.perf_counter() - t0) * 1e3)
                if "result" not in r:
                    self.fail(server, f"initialize with {EXTRA_TOOLS} extra tools failed: {r.get('error')}")

    # ---------------------------------------------------------------- 2/3/5/6. one loaded session
    def load_session(self, server: str) -> None:
        n_seq, n_burst = self.args.seq, self.args.burst
        with self.proc(server) as p:
            p.initialize()
            for i in range(1, 51):  # warm-up: first calls pay imports, thread-pool start, caches
                p.write(add_request(i, i))
                p.read_response(i)
            # 2. sequential round trips
            times = []
            lines = []
            pc = time.perf_counter_ns
            base = 1000
            for i in range(n_seq):
                req = add_request(base + i, i)
                t0 = pc()
                p.write(req)
                ln = p.read_line()
                times.append(pc() - t0)
                lines.append(ln)
            bad = 0
            for i, ln in enumerate(lines):
                m = json.loads(ln)
                if m.get("id") != base + i or _add_result(m) != i + 2:
                    bad += 1
            if bad:
                self.fail(server, f"{bad} of {n_seq} sequential answers wrong or out of order")
            times.sort()
            self.rec(server, "seq_p50_us", _pct(times, 50) / 1e3)
            self.rec(server, "seq_p99_us", _pct(times, 99) / 1e3)
            st = p.status()
            self.rec(server, "rss_seq_mib", st.get("VmHWM", 0) / 1024)
            # 3. pipelined burst
            base = 100_000
            blob = b"".join(add_request(base + i, i) for i in range(n_burst))
            cpu0 = p.cpu_seconds()
            t0 = time.perf_counter()
            writer = p.write_in_thread(blob)
            try:
                got = p.read_lines(n_burst, timeout=self.args.burst_timeout)
            except Timeout as exc:
                self.fail(server, f"burst timed out after {self.args.burst_timeout} s ({exc})")
                self.rec(server, "pipelined_per_s", None)
                return
            elapsed = time.perf_counter() - t0
            cpu = p.cpu_seconds() - cpu0
            writer.join()
            seen: dict[int, int] = {}
            wrong = 0
            for ln in got:
                m = json.loads(ln)
                id_ = m.get("id")
                seen[id_] = seen.get(id_, 0) + 1
                if not isinstance(id_, int) or _add_result(m) != (id_ - base) + 2:
                    wrong += 1
            missing = sum(1 for i in range(n_burst) if seen.get(base + i) != 1)
            if missing or wrong or len(seen) != n_burst:
                self.fail(server, f"burst: {missing} ids not answered exactly once, {wrong} wrong results")
            self.rec(server, "pipelined_per_s", n_burst / elapsed)
            self.rec(server, "burst_cpu_us", cpu / n_burst * 1e6)
            st = p.status()
            self.rec(server, "rss_burst_mib", st.get("VmHWM", 0) / 1024)
            self.rec(server, "rss_now_burst_mib", st.get("VmRSS", 0) / 1024)
            # 6b. shutdown after load, with a request written just before EOF
            p.write(add_request(7, 40))
            t0 = time.perf_counter()
            p.close_stdin()
            took = p.wait_exit(self.args.exit_timeout, since=t0)
            if took is None:
                self.fail(server, f"did not exit within {self.args.exit_timeout} s of stdin EOF after load")
            self.rec(server, "shutdown_load_ms", None if took is None else took * 1e3)
            answered = any(_is_answer(ln, 7, 42) for ln in p.drain_lines())
            self.rec(server, "last_answered", answered)
            if not answered:
                self.fail(server, "the request written just before stdin EOF was not answered")

    def shutdown_idle(self, server: str) -> None:
        with self.proc(server) as p:
            p.initialize()
            p.request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            time.sleep(0.05)
            t0 = time.perf_counter()
            p.close_stdin()
            took = p.wait_exit(self.args.exit_timeout, since=t0)
            if took is None:
                self.fail(server, f"did not exit within {self.args.exit_timeout} s of stdin EOF when idle")
            self.rec(server, "shutdown_idle_ms", None if took is None else took * 1e3)
            self.rec(server, "exit_code", p.p.returncode)

    # ---------------------------------------------------------------- 4. big echoes
    def echo(self, server: str) -> None:
        with self.proc(server) as p:
            p.initialize()
            for size, reps, key in (
                (MIB, self.args.echo1_reps, "echo_1MiB_ms"),
                (10 * MIB, self.args.echo10_reps, "echo_10MiB_ms"),
            ):
                text = _text(size)
                times = []
                for r in range(reps):
                    id_ = 10 + r
                    req = line(
                        {
                            "jsonrpc": "2.0",
                            "id": id_,
                            "method": "tools/call",
                            "params": {"name": "echo", "arguments": {"text": text}},
                        }
                    )
                    t0 = time.perf_counter()
                    w = p.write_in_thread(req)
                    ln = p.read_line(timeout=self.args.echo_timeout)
                    times.append(time.perf_counter() - t0)
                    w.join()
                    m = json.loads(ln)
                    res = m.get("result") or {}
                    content = res.get("content") or [{}]
                    # The text must come back in the content; a structuredContent twin (the SDKs
                    # send one for a `-> str` tool, mcpio does not) must hold it too.
                    structured = res.get("structuredContent")
                    if (
                        m.get("id") != id_
                        or content[0].get("text") != text
                        or (structured is not None and structured != {"result": text})
                    ):
                        self.fail(server, f"echo of {size} bytes came back wrong")
                    self.info[server][f"echo_{size // MIB}MiB_answer_bytes"] = len(ln)
                self.rec(server, key, statistics.median(times) * 1e3)
            self.rec(server, "rss_echo_mib", p.status().get("VmHWM", 0) / 1024)

    # ---------------------------------------------------------------- 7. tools/list of 202 tools
    def list200(self, server: str) -> None:
        with self.proc(server, EXTRA_TOOLS) as p:
            p.initialize()
            times = []
            nid = 100
            for _ in range(self.args.list_reps + 1):
                t0 = time.perf_counter()
                cursor = None
                names: list[str] = []
                pages = 0
                size = 0
                while True:
                    nid += 1
                    params = {"cursor": cursor} if cursor else {}
                    p.write(line({"jsonrpc": "2.0", "id": nid, "method": "tools/list", "params": params}))
                    ln = p.read_line()
                    size += len(ln)
                    m = json.loads(ln)
                    pages += 1
                    res = m.get("result") or {}
                    names += [t.get("name") for t in res.get("tools", [])]
                    cursor = res.get("nextCursor")
                    if not cursor:
                        break
                times.append(time.perf_counter() - t0)
            if len(set(names)) != EXTRA_TOOLS + 2:
                self.fail(server, f"tools/list returned {len(set(names))} distinct tools, expected {EXTRA_TOOLS + 2}")
            self.rec(server, "list200_ms", statistics.median(times[1:]) * 1e3)  # the first one warms caches
            self.info[server]["list200_pages"] = pages
            self.info[server]["list200_bytes"] = size


FIGURES = ["cold_start", "load_session", "echo", "shutdown_idle", "list200"]


def _pct(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


def _add_result(m: dict) -> Any:
    try:
        return m["result"]["structuredContent"]["result"]
    except (KeyError, TypeError):
        return None


def _is_answer(ln: bytes, id_: int, value: int) -> bool:
    try:
        m = json.loads(ln)
    except ValueError:
        return False
    return isinstance(m, dict) and m.get("id") == id_ and _add_result(m) == value


def _text(size: int) -> str:
    unit = "The quick brown fox jumps over the lazy dog 0123456789. "
    return (unit * (size // len(unit) + 1))[:size]


# ==================================================================== report
ROWS = [
    # key, label, unit format, better ("low"/"high")
    ("cold_init_ms", "cold start: spawn → initialize result (ms)", "{:.0f}", "low"),
    ("cold_discover_ms", "cold start: spawn → server/discover answer (ms)", "{:.0f}", "low"),
    ("cold_init_200_ms", "cold start with 202 tools → initialize (ms)", "{:.0f}", "low"),
    ("seq_p50_us", "sequential tools/call p50 (µs)", "{:.0f}", "low"),
    ("seq_p99_us", "sequential tools/call p99 (µs)", "{:.0f}", "low"),
    ("pipelined_per_s", "pipelined tools/call (calls/s)", "{:,.0f}", "high"),
    ("burst_cpu_us", "server CPU per pipelined call (µs)", "{:.0f}", "low"),
    ("echo_1MiB_ms", "echo 1 MiB round trip (ms)", "{:.1f}", "low"),
    ("echo_10MiB_ms", "echo 10 MiB round trip (ms)", "{:.0f}", "low"),
    ("rss_seq_mib", "peak RSS after sequential calls (MiB)", "{:.1f}", "low"),
    ("rss_burst_mib", "peak RSS after the burst (MiB)", "{:.1f}", "low"),
    ("rss_echo_mib", "peak RSS after the 10 MiB echoes (MiB)", "{:.0f}", "low"),
    ("shutdown_idle_ms", "shutdown, idle: stdin EOF → exit (ms)", "{:.1f}", "low"),
    ("shutdown_load_ms", "shutdown after load: EOF → exit (ms)", "{:.1f}", "low"),
    ("list200_ms", "tools/list, 202 tools, all pages (ms)", "{:.2f}", "low"),
]

TARGETS = [
    # key, description, kind, bound, versus
    ("cold_init_ms", "cold start ≤ 2× floor", "le", 2.0, "floor"),
    ("cold_init_200_ms", "cold start with 200 tools ≤ 2× floor (also 200)", "le", 2.0, "floor"),
    ("cold_init_ms", "cold start ≤ 2× floor, mcpio in its own install (msgspec only)", "le", 2.0, "floor", "mcpio-own"),
    ("cold_init_200_ms", "… with 200 tools, in its own install", "le", 2.0, "floor", "mcpio-own"),
    ("cold_init_ms", "cold start ≤ 2× floor, as `python -m mcpio run server.py`", "le", 2.0, "floor", "mcpio-run"),
    # issue 17: the benchmark's mcpio server serves plain `def` tools (adaptive inlining)
    ("seq_p50_us", "def tools: p50 ≤ 1.5× floor", "le", 1.5, "floor"),
    ("pipelined_per_s", "def tools: pipelined ≥ 1× floor", "ge", 1.0, "floor"),
    ("pipelined_per_s", "def tools: pipelined ≥ 50× official SDK", "ge", 50.0, "mcp"),
    ("echo_10MiB_ms", "10 MiB echo ≤ 1× floor", "le", 1.0, "floor"),
    ("rss_burst_mib", "RSS after the burst ≤ 3× floor", "le", 3.0, "floor"),
    ("shutdown_load_ms", "shutdown after load ≤ 3× floor", "le", 3.0, "floor"),
]


def _median(values: list[Any]) -> Any:
    vals = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
    return statistics.median(vals) if vals else None


def summarize(bench: Bench) -> dict[str, Any]:
    med = {s: {k: _median(v) for k, v in figs.items()} for s, figs in bench.raw.items()}
    ratios: dict[str, dict[str, float | None]] = {}
    if "floor" in med:
        for s in med:
            ratios[s] = {}
            for k, v in med[s].items():
                f = med["floor"].get(k)
                ratios[s][k] = (v / f) if (v is not None and f) else None
    targets = []
    if "mcpio" in med:
        for key, desc, kind, bound, versus, *who in TARGETS:
            mine, theirs = med.get(who[0] if who else "mcpio", {}).get(key), med.get(versus, {}).get(key)
            if mine is None or not theirs:
                targets.append({"target": desc, "ratio": None, "met": None})
                continue
            ratio = mine / theirs
            targets.append(
                {
                    "target": desc,
                    "key": key,
                    "versus": versus,
                    "ratio": ratio,
                    "met": ratio <= bound if kind == "le" else ratio >= bound,
                }
            )
    return {"median": med, "ratio_to_floor": ratios, "targets": targets}


def table(bench: Bench, summary: dict[str, Any], meta: dict[str, Any]) -> str:
    servers = [
        s for s in ("floor", "mcpio", "mcpio-own", "mcpio-run", "mcpio-inline", "mcp", "fastmcp") if s in bench.raw
    ] + sorted(bench.args.variants)
    med, ratios = summary["median"], summary["ratio_to_floor"]
    names = {s: (f"{s} {meta['versions'].get(s) or ''}".strip()) for s in servers}
    names.update({s: f"{s} (variant)" for s in bench.args.variants})
    out = [
        f"| figure (median of {meta['rounds']} rounds) | " + " | ".join(names[s] for s in servers) + " |",
        "|---|" + "---:|" * len(servers),
    ]
    for key, label, fmt, _better in ROWS:
        if not any(med[s].get(key) is not None for s in servers):
            continue
        cells = []
        for s in servers:
            v = med[s].get(key)
            if v is None:
                cells.append("—")
                continue
            cell = fmt.format(v)
            r = ratios.get(s, {}).get(key)
            if s != "floor" and r is not None:
                cell += f" ({r:.2g}×)" if r < 10 else f" ({r:.0f}×)"
            cells.append(cell)
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    extra = []
    for s in servers:
        i = bench.info[s]
        extra.append(
            f"{s}: discover → {i.get('discover_answer', '?')}; tools/list of 202 in {i.get('list200_pages', '?')} page(s), "
            f"{(i.get('list200_bytes') or 0) / 1024:.0f} KiB; 10 MiB echo answer {(i.get('echo_10MiB_answer_bytes') or 0) / MIB:.0f} MiB"
        )
    out.append("")
    out.append("Ratios are to the floor in the same run. " + " · ".join(extra) + ".")
    if summary["targets"]:
        out.append("")
        out.append("| mcpio target | ratio | met |")
        out.append("|---|---:|:---:|")
        for t in summary["targets"]:
            r = "—" if t["ratio"] is None else f"{t['ratio']:.2f}×"
            met = "—" if t["met"] is None else ("yes" if t["met"] else "**no**")
            out.append(f"| {t['target']} | {r} | {met} |")
    bad = {s: c for s, c in bench.checks.items() if c}
    if bad:
        out.append("")
        out.append("Correctness problems: " + "; ".join(f"{s}: {', '.join(c)}" for s, c in bad.items()))
    return "\n".join(out)


def _versions(python: str, servers: list[str]) -> dict[str, str | None]:
    dists = {s: DISTS[s] for s in servers if DISTS.get(s)}
    code = (
        "import importlib.metadata as m, json, sys\nout = {}\nfor s, d in json.loads(sys.argv[1]).items():\n"
        "    try: out[s] = m.version(d)\n    except Exception: out[s] = None\nprint(json.dumps(out))"
    )
    r = subprocess.run([python, "-c", code, json.dumps(dists)], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def _commit() -> str | None:
    try:
        r = subprocess.run(
            ["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None


def _load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--servers",
        default="floor,mcpio,mcpio-own,mcpio-run,mcpio-inline,mcp,fastmcp",
        help="comma-separated subset of: " + ", ".join(SERVERS),
    )
    ap.add_argument("--quick", action="store_true", help="a few seconds per server (smoke test)")
    ap.add_argument("--rounds", type=int, help="rounds (default 5, quick 1)")
    ap.add_argument("--python", default=sys.executable, help="interpreter the servers run on (default: this one)")
    ap.add_argument(
        "--own-python",
        default=str(HERE.parent / ".venv-bench-own" / "bin" / "python"),
        help="interpreter of server mcpio-own: an environment with mcpio and msgspec only (scripts/bench makes it)",
    )
    ap.add_argument("--json", dest="json_path", help="write the results here (default benchmarks/results/<time>.json)")
    ap.add_argument("--markdown", help="also write the table to this file (scripts/bench: benchmarks/RESULTS.md)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=SRC",
        help="also run mcpio_server.py with PYTHONPATH=SRC as server NAME (A/B of a patched copy; "
        "an empty SRC: the installed mcpio)",
    )
    ap.add_argument(
        "--variant-script",
        action="append",
        default=[],
        metavar="NAME=SCRIPT",
        help="run variant NAME from this server script instead of servers/mcpio_server.py",
    )
    ap.add_argument("--figures", default=",".join(FIGURES), help="comma-separated subset of: " + ", ".join(FIGURES))
    args = ap.parse_args(argv)
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    args.variants = {}
    for v in args.variant:
        name, _, src = v.partition("=")
        if not name or not _ or name in SERVERS:
            ap.error(f"--variant wants NAME=SRC with a new NAME, got {v!r}")
        args.variants[name] = os.path.abspath(src) if src else ""
        args.servers.append(name)
    args.variant_scripts = {}
    for v in args.variant_script:
        name, _, script = v.partition("=")
        if name not in args.variants or not script:
            ap.error(f"--variant-script wants NAME=SCRIPT for a NAME given with --variant, got {v!r}")
        args.variant_scripts[name] = os.path.abspath(script)
    for s in args.servers:
        if s in args.variants:
            continue
        if s not in SERVERS:
            ap.error(f"unknown server {s!r}")
    if "floor" not in args.servers:
        args.servers.insert(0, "floor")  # ratios need it
    if "mcpio-own" in args.servers and not os.path.exists(args.own_python):
        print(f"bench: no {args.own_python} (scripts/bench makes it): mcpio-own left out", file=sys.stderr)
        args.servers.remove("mcpio-own")
    figures = [f.strip() for f in args.figures.split(",") if f.strip()]
    q = args.quick
    args.rounds = args.rounds or (1 if q else 5)
    args.spawns = 2 if q else 3  # per figure per round
    args.seq = 300 if q else 2000
    args.burst = 2000 if q else 20_000
    args.burst_timeout = 60 if q else 300
    args.exit_timeout = 20
    args.echo_timeout = 10 if q else 60
    args.echo1_reps = 2 if q else 5
    args.echo10_reps = 1 if q else 3
    args.list_reps = 3 if q else 20

    versions = _versions(args.python, args.servers)
    for s in args.servers:
        if DISTS.get(s) and not versions.get(s):
            print(
                f"bench: {s} is not installed for {args.python}; run scripts/bench (it installs the peers)",
                file=sys.stderr,
            )
            return 2
    bench = Bench(args)
    started = time.time()
    load_before = _load()
    print(
        f"bench: {', '.join(args.servers)}; {args.rounds} round(s){' (quick)' if q else ''}; load {load_before}",
        file=sys.stderr,
    )
    # Warm-up: one start of each server so .pyc files and the page cache are hot for all.
    for s in args.servers:
        with bench.proc(s) as p:
            p.initialize(timeout=120)
            p.close_stdin()
            p.wait_exit(20)
    for rnd in range(args.rounds):
        order = args.servers[rnd % len(args.servers) :] + args.servers[: rnd % len(args.servers)]
        for fig in figures:
            for s in order:
                if s in COLD_ONLY and fig not in OWN_FIGURES:
                    continue
                t = time.perf_counter()
                try:
                    getattr(bench, fig)(s)
                except (Timeout, EOFError, OSError, ValueError) as exc:
                    bench.fail(s, f"{fig} failed: {type(exc).__name__}: {exc}")
                print(
                    f"  round {rnd + 1}/{args.rounds} {fig:<13} {s:<8} {time.perf_counter() - t:6.1f} s",
                    file=sys.stderr,
                )
    summary = summarize(bench)
    meta = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 1),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}",
        "python": args.python,
        "own_python": args.own_python if "mcpio-own" in args.servers else None,
        "load_before": load_before,
        "scrubbed_env": sorted(k for k in SCRUBBED_ENV if k in os.environ),
        "load_after": _load(),
        "rounds": args.rounds,
        "quick": q,
        "sizes": {
            "sequential_calls": args.seq,
            "burst_calls": args.burst,
            "spawns_per_round": args.spawns,
            "echo_1MiB_reps": args.echo1_reps,
            "echo_10MiB_reps": args.echo10_reps,
            "list_reps": args.list_reps,
        },
        "versions": versions,
        "mcpio_commit": _commit(),
        "variants": {
            k: {"pythonpath": v, "script": args.variant_scripts.get(k, str(SERVERS["mcpio"]))}
            for k, v in args.variants.items()
        },
    }
    md = table(bench, summary, meta)
    doc = {"meta": meta, **summary, "info": bench.info, "checks": bench.checks, "raw": bench.raw}
    json_path = (
        Path(args.json_path)
        if args.json_path
        else HERE / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if q else ''}.json"
    )
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(doc, indent=1))
    header = (
        f"Machine: {meta['machine']}; load average {meta['load_before']} before, {meta['load_after']} after; "
        f"{meta['date']}; {meta['duration_s']} s{' (quick mode)' if q else ''}; mcpio at {meta['mcpio_commit'] or '?'}."
    )
    print()
    print(header)
    print()
    print(md)
    print(f"\nbench: JSON written to {json_path}", file=sys.stderr)
    if args.markdown:
        Path(args.markdown).write_text(
            "# Benchmark results (stdio)\n\nWritten by `scripts/bench` (benchmarks/run.py); see docs/evidence/benchmarks.md.\n\n"
            f"{header}\n\n{md}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
