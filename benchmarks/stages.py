"""Where one ``tools/call`` spends its time inside mcpio: each stage of the stdio hot path timed
alone, in one process, without pipes (CPU cost, not latency).

    python benchmarks/stages.py            # mcpio as installed (or PYTHONPATH=... for a patched copy)

Stages: framing (LineBuffer) → decode (msgspec) → Connection.receive → Session dispatch (a Task
per request) → Server method table + Context → argument binding → the tool call itself (inline,
or through the default thread pool as the server does for a sync function) → result building →
Connection.respond → encode. Uses private modules; it profiles, it does not test, so a change
of internals may need a change here.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
import sys
import time
from typing import Any


def per_call(fn: Any, n: int, repeat: int = 5) -> float:
    """Median over ``repeat`` runs of the µs per call of ``fn()`` (which does ``n`` calls)."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def main() -> None:
    import mcpio
    from mcpio import Server
    from mcpio import _jsonrpc as rpc
    from mcpio._protocol._connection import Connection
    from mcpio._protocol._framing import LineBuffer
    from mcpio._versions import RULES

    n = 20_000
    rules = RULES["2025-11-25"]
    server = Server("stages")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    tool = server.registry.tools["add"]
    lines = [
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":2}}}' % (i, i)
        for i in range(n)
    ]
    blob = b"\n".join(lines) + b"\n"
    chunks = [blob[i : i + 65536] for i in range(0, len(blob), 65536)]
    msgs = [rpc.decode(x) for x in lines]
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    }
    rows: list[tuple[str, float]] = []

    def framing() -> None:
        buf = LineBuffer()
        for c in chunks:
            buf.feed(c)

    rows.append(("framing: LineBuffer.feed (64 KiB chunks)", per_call(framing, n)))
    rows.append(("decode: msgspec.json → dict", per_call(lambda: [rpc.decode(x) for x in lines], n)))

    def connection() -> None:
        conn = Connection("server")
        conn.receive(init)
        conn.respond("init", {})
        conn.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for m in msgs:
            for ev in conn.receive(m):
                conn.respond(ev.id, {})

    rows.append(("Connection.receive + respond (classify, lifecycle, ids)", per_call(connection, n)))
    args = [m["params"]["arguments"] for m in msgs]
    rows.append(("bind arguments (validate + convert)", per_call(lambda: [tool.sig.bind(a) for a in args], n)))
    rows.append(
        ("Tool.result (content + structuredContent)", per_call(lambda: [tool.result(i, rules) for i in range(n)], n))
    )
    resp = [
        rpc.response(i, {"content": [{"type": "text", "text": str(i)}], "structuredContent": {"result": i}})
        for i in range(n)
    ]
    rows.append(("encode: msgspec.json ← dict", per_call(lambda: [rpc.encode(r) for r in resp], n)))

    async def tasks() -> None:
        async def nothing() -> None:
            return None

        loop = asyncio.get_running_loop()
        await asyncio.gather(*[loop.create_task(nothing()) for _ in range(n)])

    rows.append(("asyncio: one Task per request (create, run, gather)", per_call(lambda: asyncio.run(tasks()), n)))

    try:  # mcpio's own worker threads (the hop a sync tool takes), else the default executor
        from mcpio._server._threads import WORKERS

        def hop() -> Any:
            return WORKERS.run(add, {"a": 1, "b": 2})

        hop_label = "mcpio worker threads"
    except ImportError:

        def hop() -> Any:
            return asyncio.get_running_loop().run_in_executor(None, functools.partial(add, a=1, b=2))

        hop_label = "run_in_executor"

    async def hops() -> None:
        await asyncio.gather(*[hop() for _ in range(n)])

    async def hops_seq() -> None:
        for _ in range(2000):
            await hop()

    async def executor() -> None:
        loop = asyncio.get_running_loop()
        f = functools.partial(add, a=1, b=2)
        await asyncio.gather(*[loop.run_in_executor(None, f) for _ in range(n)])

    rows.append(
        (
            f"thread hop, {hop_label}, {n:,} at once (CPU + hand-offs)",
            per_call(lambda: asyncio.run(hops()), n, repeat=3),
        )
    )
    rows.append(
        (f"thread hop, {hop_label}, one at a time (latency)", per_call(lambda: asyncio.run(hops_seq()), 2000, repeat=3))
    )
    rows.append(
        ("(reference) asyncio default executor, at once", per_call(lambda: asyncio.run(executor()), n, repeat=3))
    )

    async def whole() -> None:
        # Server._on_request through the method table, with the thread hop, as a Task each.
        from mcpio._protocol._events import RequestReceived
        from mcpio._session import Session

        class Null:
            async def send(self, frame: bytes) -> None:
                pass

            async def receive(self) -> Any:
                raise EOFError

            async def aclose(self) -> None:
                pass

        session = server.session(Null())  # type: ignore[arg-type]
        conn = session.connection
        conn.receive(init)
        session.state["capabilities"] = server.capabilities(rules)
        conn.respond("init", {})
        evs = [RequestReceived(id=m["id"], method="tools/call", params=m["params"], version="2025-11-25") for m in msgs]
        assert isinstance(session, Session)
        loop = asyncio.get_running_loop()
        await asyncio.gather(*[loop.create_task(server._on_request(session, ev)) for ev in evs])

    rows.append(
        (
            "Server._on_request, whole (Context, method table, bind, hop, result), a Task each",
            per_call(lambda: asyncio.run(whole()), n, repeat=3),
        )
    )

    print(
        f"mcpio {getattr(mcpio, '__version__', '?')} from {mcpio.__file__}; Python {sys.version.split()[0]}; {n:,} calls"
    )
    print()
    print("| stage | µs per call |")
    print("|---|---:|")
    for label, us in rows:
        print(f"| {label} | {us:.2f} |")


if __name__ == "__main__":
    main()
