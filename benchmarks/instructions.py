"""CPU instructions per request, counted by valgrind's callgrind (``PYTHONHASHSEED=0``): the
figure issue 17's cuts are measured by, because it does not move with the machine's load.

    python benchmarks/instructions.py stdio [SERVER_SCRIPT] [--modern]  # default servers/mcpio_inline_server.py
    python benchmarks/instructions.py http legacy|modern [APP]  # APP: mcpio-inline (default), mcpio, floor
    python benchmarks/instructions.py cold [SERVER_SCRIPT] [--extra-tools N] [--gateway]  # default servers/mcpio_server.py
    python benchmarks/instructions.py client legacy|modern [CLIENT]  # CLIENT: mcpio (default), httpx, raw
    python benchmarks/instructions.py hop proxy|gateway|http|url  # one proxy hop (issue 35)

stdio: the server script runs with stdin = a file holding initialize, initialized and N pipelined
``tools/call add`` (stdout to /dev/null), once with N = 2,000 and once with 12,000; the figure is
the difference over 10,000. ``--modern``: 2026-07-28 instead (no ``initialize``; each call carries
the era's ``_meta``). The plain-``def`` server (``servers/mcpio_server.py``) inlines ``add``
adaptively: under valgrind every call is ~50× slower in wall time, so on a loaded machine the
policy may move it back to worker threads mid-run; the run is then reported as unreliable.
http: ``http_app_cost.py`` drives the ASGI app alone (no uvicorn, no sockets) for 500 and 1,500
requests; the figure is the difference over 1,000. A/B a patched copy with ``PYTHONPATH=SRC``.
client: ``http_client_cost.py`` calls ``add`` 100 and 300 times, one after another, through
``mcpio.Client(url)`` (or the bare httpx floor, or a raw socket) against ``http_server.py mcpio``
running outside valgrind; the figure is the client process's difference over 200 calls.
hop: the process of ``mcpio run "python servers/mcpio_server.py"`` (proxy; the upstream runs outside
valgrind), of ``mcpio run gateway.json`` (one upstream; ``s0__add``) or of ``mcpio run "python
servers/mcpio_server.py" -t http`` (http; driven by proxy_http's raw keep-alive client), or of
``mcpio run URL`` (url: the stdio->HTTP bridge; URL an ``http_server.py mcpio`` outside valgrind), after its
upstream started (a first ``tools/list`` answered): stdio, 100 and 300 calls one after another, then
200 and 1,200 pipelined; http, 200 and 1,200 calls over 8 connections of one session (one after
another, its idle timers would count: they tick with the wall clock, which valgrind stretches ~50x).
The figures are the differences over 200 and 1,000. Stopped by stdin EOF (stdio) or SIGTERM (http).
cold: spawn -> ``initialize`` answered, for ``python SCRIPT``, ``python -m mcpio run SCRIPT`` (the
command ``mcpio install`` writes into host configs) and ``servers/floor_server.py``
(both with ``BENCH_EXTRA_TOOLS=N``), and with ``--gateway`` ``python -m mcpio run gateway.json`` (a
gateway over SCRIPT) and ``python -m mcpio run "python SCRIPT"`` (its proxy) up to the start of its upstream (the
``subprocess.Popen`` call), and up to its first request upstream (the first write into that process's stdin; the
upstream runs, outside valgrind; the wrapper
imports subprocess first, which the gateway needs anyway): the whole process, stdin = a file holding one ``initialize``,
stopped with ``os._exit`` as soon as its first answer line is written to fd 1 (a ``-c`` wrapper
patches ``os.write``, which every server here writes with, then runs the script, or ``-m mcpio``,
as ``__main__``; the wrapper is the same for all and costs ~0.1 M). Run once first without valgrind so the ``.pyc``
files are warm; ``PYTHONDONTWRITEBYTECODE`` and ``PYTHONUNBUFFERED`` are dropped (benchmarks/PROFILE.md
section 2). Prints the counts and their ratios to the floor.
Needs ``valgrind`` on PATH. A profiling aid, not a test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _stdin_file(n: int, modern: bool = False) -> str:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    if modern:
        lines = []
    for i in range(n):
        args: dict[str, object] = {"name": "add", "arguments": {"a": i, "b": 2}}
        if modern:
            args["_meta"] = MODERN_META
        lines.append({"jsonrpc": "2.0", "id": 100_000 + i, "method": "tools/call", "params": args})
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w") as f:
        f.write("".join(json.dumps(m) + "\n" for m in lines))
    return path


def _count(argv: list[str], stdin_path: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Instructions of one run of ``argv`` under callgrind, and its stderr."""
    out = tempfile.mktemp(prefix="callgrind.")
    env = dict(os.environ if env is None else env, PYTHONHASHSEED="0")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
        )
    finally:
        if stdin_path:
            stdin.close()  # type: ignore[union-attr]
        if os.path.exists(out):
            os.unlink(out)
    err = r.stderr.decode(errors="replace")
    m = re.search(r"Collected : (\d+)", err)
    if m is None:
        sys.exit(f"valgrind gave no count for {argv}:\n{err[-2000:]}")
    return int(m.group(1)), err


def stdio(script: str, modern: bool = False) -> None:
    counts = []
    demoted = False
    for n in (2_000, 12_000):
        path = _stdin_file(n, modern)
        try:
            count, err = _count([sys.executable, script], path)
        finally:
            os.unlink(path)
        counts.append(count)
        demoted = demoted or "worker threads" in err
    per_call = (counts[1] - counts[0]) / 10_000 / 1000
    era = " (2026-07-28)" if modern else ""
    print(f"{script}: {per_call:.1f} k instructions per pipelined tools/call{era}")
    if demoted:
        print("unreliable: the adaptive policy moved a tool to worker threads during a run (machine loaded?)")


def http(era: str, app: str) -> None:
    counts = []
    argv = [sys.executable, str(HERE / "http_app_cost.py"), "--rounds", "1", "--apps", app, "--eras", era]
    # once outside valgrind first: a module changed since its .pyc was written is compiled by the
    # first run only, which would make the two counts below differ by more than the requests
    subprocess.run([*argv, "--requests", "10"], capture_output=True, check=True)
    for n in (500, 1_500):
        count, _ = _count([*argv, "--requests", str(n)])
        counts.append(count)
    print(f"{app} {era}: {(counts[1] - counts[0]) / 1000 / 1000:.1f} k instructions per tools/call request")


def client(era: str, kind: str) -> None:
    sys.path.insert(0, str(HERE))
    import http_common as hc

    with hc.ServerProc("mcpio") as server:
        url = f"http://127.0.0.1:{server.wait_listening()}/mcp"
        argv = [sys.executable, str(HERE / "http_client_cost.py"), "--url", url, "--era", era, "--clients", kind]
        subprocess.run([*argv, "--calls", "10"], capture_output=True, check=True)  # warm .pyc (see http())
        counts = [_count([*argv, "--calls", str(n)])[0] for n in (100, 300)]
    print(f"{kind} client {era}: {(counts[1] - counts[0]) / 200 / 1000:.1f} k instructions per tools/call")


# Runs sys.argv[1] as __main__ and ends the process right after its first write to fd 1 holding a
# newline: the initialize answer (both the floor's loop and mcpio's first answer use os.write).
_UNTIL_ANSWER = """
import os, sys
def _write(fd, data, _w=os.write):
    n = _w(fd, data)
    if fd == 1 and b"\\n" in bytes(data):
        os._exit(17)  # the exit status cold() checks for
    return n
os.write = _write
path = sys.argv[1]
sys.argv = sys.argv[1:]
if path == "-m":  # `python -m MODULE ARGS...`, as the interpreter runs it (runpy's own entry point)
    import runpy
    sys.argv = sys.argv[1:]
    runpy._run_module_as_main(sys.argv[0])
    sys.exit("no answer written")
sys.path[0] = os.path.dirname(os.path.abspath(path))
with open(path, "rb") as f:
    source = f.read()
# exec() of the source, not compile(): compile() first asks whether its argument is an AST, which
# makes the ast module's ~120 node classes (~10.7 M instructions) that `python script.py` never makes.
exec(source, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})
sys.exit("no answer written")
"""

# The same, ended at the first subprocess.Popen (a gateway starting its upstream).
_UNTIL_SPAWN = _UNTIL_ANSWER.replace(
    "os.write = _write", "import subprocess\nsubprocess.Popen.__init__ = lambda *a, **k: os._exit(17)"
)

# The same, ended at the first write into a started process's stdin (a gateway's first request
# upstream): through the Popen's own stdin (written before the event loop exists) or os.write on
# its fd (the event loop's pipe transport). The process itself runs, outside valgrind.
_UNTIL_REQUEST = _UNTIL_ANSWER.replace(
    "os.write = _write",
    """import subprocess
_popen_init = subprocess.Popen.__init__
class _Stdin:
    def __init__(self, raw): self.raw = raw
    def write(self, data): os._exit(17)
    def __getattr__(self, name): return getattr(self.raw, name)
def _init(self, *a, **k):
    _popen_init(self, *a, **k)
    fd = self.stdin.fileno()
    def _write(f, data, _w=os.write):
        if f == fd:
            os._exit(17)
        return _w(f, data)
    os.write = _write
    self.stdin = _Stdin(self.stdin)
subprocess.Popen.__init__ = _init""",
)


def cold(script: str, extra_tools: int, gateway: bool = False) -> None:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}) + "\n")
    listing = Path(path).with_suffix(".list.jsonl")  # and a tools/list, which holds a gateway until its upstream is up
    listing.write_text(
        Path(path).read_text()
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        + "\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}
    env["BENCH_EXTRA_TOOLS"] = str(extra_tools)
    runs = {  # what a host runs: the script, the command `mcpio install` writes, and the floor
        f"python {Path(script).name}": [script],
        f"python -m mcpio run {Path(script).name}": ["-m", "mcpio", "run", script],
        "floor": [str(HERE / "servers" / "floor_server.py")],
    }
    config = Path(path).with_suffix(".gateway.json")
    if gateway:
        config.write_text(json.dumps({"mcpServers": {"up": {"command": sys.executable, "args": [script]}}}))
        runs["mcpio run gateway.json: to its upstream's start"] = ["-m", "mcpio", "run", str(config)]
        runs['mcpio run "CMD": to its upstream\'s start'] = ["-m", "mcpio", "run", f"{sys.executable} {script}"]
        runs["mcpio run gateway.json: to its first request upstream"] = ["-m", "mcpio", "run", str(config)]
        runs['mcpio run "CMD": to its first request upstream'] = ["-m", "mcpio", "run", f"{sys.executable} {script}"]
    counts = {}
    try:
        for name, tail in runs.items():
            spawns = name.endswith(("start", "upstream"))
            wrapper = _UNTIL_SPAWN if name.endswith("start") else _UNTIL_REQUEST if spawns else _UNTIL_ANSWER
            argv = [sys.executable, "-c", wrapper, *tail]
            feed = str(listing) if wrapper is _UNTIL_REQUEST else path
            with open(feed, "rb") as stdin:  # once outside valgrind: warm .pyc, and check the answer
                r = subprocess.run(argv, stdin=stdin, capture_output=True, env=env, check=False)
            if r.returncode != 17 or (b'"result"' not in r.stdout and not spawns):
                sys.exit(
                    f"{name}: no initialize answer (exit {r.returncode}):\n{r.stderr.decode(errors='replace')[-2000:]}"
                )
            counts[name] = _count(argv, feed, env)[0]
    finally:
        os.unlink(path)
        listing.unlink(missing_ok=True)
        config.unlink(missing_ok=True)
    floor = counts["floor"]
    tools = f" with {extra_tools} extra tools" if extra_tools else ""
    print(f"spawn -> initialize answered{tools}, instructions:")
    for name, n in counts.items():
        print(f"  {name:<50} {n / 1e6:7.1f} M  {n / floor:.2f}x the floor")


def _callgrind(out: str) -> list[str]:
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]


def _collected(err: bytes, what: str) -> int:
    m = re.search(r"Collected : (\d+)", err.decode(errors="replace"))
    if m is None:
        sys.exit(f"valgrind gave no count for {what}:\n{err.decode(errors='replace')[-2000:]}")
    return int(m.group(1))


def _hop_stdio(argv: list[str], tool: str, sequential: int, pipelined: int) -> int:
    """Instructions of one proxy (or gateway) process under callgrind serving ``sequential`` then
    ``pipelined`` calls of ``tool``, started and stopped alike (proxy_bench's client)."""
    import proxy_bench as pb

    out = tempfile.mktemp(prefix="callgrind.")
    s = pb.Server([*_callgrind(out), *argv])
    s.line = lambda timeout=600.0: pb.Server.line(s, timeout)  # type: ignore[method-assign]  # ~50x slower
    try:
        s.initialize()
        s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})  # the upstream has started
        s.answer(7)
        for i in range(sequential):
            s.send(pb.call(tool, i + 1, i))
            s.answer(i + 1)
        for i in range(pipelined):
            s.send(pb.call(tool, 100_000 + i, i))
        for i in range(pipelined):
            s.answer(100_000 + i)
        assert s.p.stdin is not None
        s.p.stdin.close()
        s.p.wait(600)
        s.err.seek(0)
        return _collected(s.err.read(), " ".join(argv))
    finally:
        if s.p.poll() is None:
            s.p.kill()
        if os.path.exists(out):
            os.unlink(out)


def _warm(argv: list[str], tool: str = "add") -> None:
    """One session through ``argv`` outside valgrind, so that every module's .pyc is written."""
    import proxy_bench as pb

    s = pb.Server(argv)
    try:
        s.initialize()
        s.send(pb.call(tool, 1, 1))
        s.answer(1)
        assert s.p.stdin is not None
        s.p.stdin.close()
        s.p.wait(60)
    finally:
        if s.p.poll() is None:
            s.p.kill()


def _hop_http(argv_for: Any, calls: int) -> int:
    """Instructions of one ``-t http`` bridge process under callgrind serving ``calls`` calls over
    8 connections (proxy_http's client, after its one timed call), stopped with SIGTERM."""
    import signal

    import proxy_http as ph

    out = tempfile.mktemp(prefix="callgrind.")
    port = ph.free_port()
    server = ph.HttpServer([*_callgrind(out), *argv_for(port)], port)
    try:
        server.ready(300)
        ph.measure(port, "/mcp", 1, calls)
        os.killpg(server.p.pid, signal.SIGTERM)
        server.p.wait(600)
        server.err.seek(0)
        return _collected(server.err.read(), " ".join(argv_for(port)))
    finally:
        if server.p.poll() is None:
            os.killpg(server.p.pid, signal.SIGKILL)
        if os.path.exists(out):
            os.unlink(out)


def hop(kind: str) -> None:
    import shlex

    sys.path.insert(0, str(HERE))
    upstream = str(HERE / "servers" / "mcpio_server.py")
    command = shlex.join([sys.executable, upstream])
    env_note = "the hop's own process; its upstream outside valgrind"
    if kind == "url":
        import http_common as hc

        with hc.ServerProc("mcpio") as server:
            url = f"http://127.0.0.1:{server.wait_listening()}/mcp"
            argv = [sys.executable, "-m", "mcpio", "run", url]
            _warm(argv)  # a whole session: the client's modules load on connecting (see http())
            seq = [_hop_stdio(argv, "add", n, 0) for n in (100, 300)]
            piped = [_hop_stdio(argv, "add", 0, n) for n in (200, 1_200)]
        print(
            f"mcpio run URL: {(seq[1] - seq[0]) / 200 / 1000:.1f} k instructions per sequential call, "
            f"{(piped[1] - piped[0]) / 1000 / 1000:.1f} k per pipelined call ({env_note})"
        )
        return
    if kind == "http":

        def argv_for(port: int) -> list[str]:
            return [sys.executable, "-m", "mcpio", "run", command, "-t", "http", "--port", str(port)]

        a, b = (_hop_http(argv_for, n) for n in (200, 1_200))
        print(f"mcpio run CMD -t http: {(b - a) / 1000 / 1000:.1f} k instructions per call, 8 at once ({env_note})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "gateway":
            config = Path(tmp) / "gateway.json"
            config.write_text(json.dumps({"mcpServers": {"s0": {"command": sys.executable, "args": [upstream]}}}))
            argv, tool = [sys.executable, "-m", "mcpio", "run", str(config)], "s0__add"
        else:
            argv, tool = [sys.executable, "-m", "mcpio", "run", command], "add"
        _warm(argv, tool)  # a call, not only initialize: the upstream's client loads on the first start
        seq = [_hop_stdio(argv, tool, n, 0) for n in (100, 300)]
        piped = [_hop_stdio(argv, tool, 0, n) for n in (200, 1_200)]
    print(
        f"mcpio {kind}: {(seq[1] - seq[0]) / 200 / 1000:.1f} k instructions per sequential call, "
        f"{(piped[1] - piped[0]) / 1000 / 1000:.1f} k per pipelined call ({env_note})"
    )


def main() -> None:
    args = sys.argv[1:]
    modern = args[:1] == ["stdio"] and "--modern" in args
    if modern:
        args.remove("--modern")
    if args[:1] == ["stdio"] and len(args) <= 2:
        stdio(args[1] if len(args) == 2 else str(HERE / "servers" / "mcpio_inline_server.py"), modern)
    elif args[:1] == ["cold"] and len(args) <= 5:
        gateway = "--gateway" in args
        if gateway:
            args.remove("--gateway")
        extra = 0
        if "--extra-tools" in args:
            i = args.index("--extra-tools")
            extra = int(args[i + 1])
            del args[i : i + 2]
        if len(args) > 2:
            sys.exit(__doc__)
        cold(args[1] if len(args) == 2 else str(HERE / "servers" / "mcpio_server.py"), extra, gateway)
    elif args[:1] == ["client"] and len(args) in (2, 3) and args[1] in ("legacy", "modern"):
        client(args[1], args[2] if len(args) == 3 else "mcpio")
    elif args[:1] == ["hop"] and len(args) == 2 and args[1] in ("proxy", "gateway", "http", "url"):
        hop(args[1])
    elif args[:1] == ["http"] and len(args) in (2, 3) and args[1] in ("legacy", "modern"):
        http(args[1], args[2] if len(args) == 3 else "mcpio-inline")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
