"""Where a tools/call's client CPU goes over Streamable HTTP: ``mcpio.Client(url)`` against the
bare ``httpx.AsyncClient`` floor and a raw keep-alive socket (http_common.RawConn), on one
mcpio server (``benchmarks/http_server.py mcpio``, a subprocess on 127.0.0.1).

    python benchmarks/http_client_cost.py                         # both eras, the three clients
    python benchmarks/http_client_cost.py --era modern --concurrency 64 --calls 2000
    python benchmarks/http_client_cost.py --clients mcpio --profile   # + cProfile (CPU time)
    python benchmarks/http_client_cost.py --url URL --clients mcpio --calls 300   # instructions.py

Each client calls ``add`` ``--calls`` times (after 20 calls of warm-up), ``--concurrency`` at
once (1: one after another); the figure is this process's CPU time per call (user + system),
so the server is left out. ``httpx`` is what ``mcpio.Client`` sends through (the same options
as its transport: one POST per call, the body read as a stream), without the session, the
transport's bookkeeping and the answer's decoding: the difference is mcpio's own. ``raw`` is
the load benchmarks' client: what a call costs a client that does nothing else. Uses no private
API; for profiling, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import http_common as hc  # noqa: E402


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


async def _drive(call: Any, calls: int, concurrency: int, profile: cProfile.Profile | None) -> float:
    """CPU seconds per call of ``calls`` awaits of ``call(i)``, ``concurrency`` at once."""
    for i in range(20):
        await call(i)
    slots = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with slots:
            await call(i)

    start = _cpu()
    if profile is not None:
        profile.enable()
    if concurrency == 1:
        for i in range(calls):
            await call(i)
    else:
        await asyncio.gather(*(one(i) for i in range(calls)))
    if profile is not None:
        profile.disable()
    return (_cpu() - start) / calls


async def mcpio_client(url: str, era: str, calls: int, concurrency: int, profile: Any) -> float:
    import mcpio

    async with mcpio.Client(url, era=era) as client:

        async def call(i: int) -> None:
            result = await client.call_tool("add", {"a": i, "b": 2})
            assert result.data == i + 2, result

        return await _drive(call, calls, concurrency, profile)


async def _legacy_headers(post: Any) -> dict[str, str]:
    """Open a legacy session with ``post(body, headers) -> (status, headers, body)``."""
    accept = {"accept": hc.ACCEPT, "content-type": "application/json"}
    _, headers, _ = await post(hc.initialize_body(), accept)
    session = {**accept, "mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": hc.LEGACY}
    await post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    return session


MODERN_HEADERS = {
    "accept": hc.ACCEPT,
    "content-type": "application/json",
    "mcp-protocol-version": hc.MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "add",
}


async def httpx_client(url: str, era: str, calls: int, concurrency: int, profile: Any) -> float:
    import httpx

    limits = httpx.Limits(max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None), limits=limits) as http:

        async def post(body: bytes, headers: dict[str, str]) -> tuple[int, Any, bytes]:
            async with http.stream("POST", url, content=body, headers=headers) as resp:
                return resp.status_code, resp.headers, b"".join([c async for c in resp.aiter_bytes()])

        headers = MODERN_HEADERS if era == "modern" else await _legacy_headers(post)

        async def call(i: int) -> None:
            _, head, body = await post(hc.add_body(i, i, modern=era == "modern"), headers)
            assert hc.add_value(hc.answer_of(head.get("content-type", ""), body, i)) == i + 2

        return await _drive(call, calls, concurrency, profile)


async def raw_client(url: str, era: str, calls: int, concurrency: int, profile: Any) -> float:
    host, _, rest = url.removeprefix("http://").partition(":")
    port, path = int(rest.split("/", 1)[0]), "/" + rest.split("/", 1)[1]
    conns = [hc.RawConn(host, port) for _ in range(concurrency)]
    free = list(conns)

    async def post(body: bytes, headers: dict[str, str]) -> tuple[int, Any, bytes]:
        conn = free.pop()
        try:
            lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k != "content-type")
            r = await conn.request("POST", path, body, lines.encode())
        finally:
            free.append(conn)
        return r.status, r.headers, r.body

    headers = MODERN_HEADERS if era == "modern" else await _legacy_headers(post)

    async def call(i: int) -> None:
        _, head, body = await post(hc.add_body(i, i, modern=era == "modern"), headers)
        assert hc.add_value(hc.answer_of(head.get("content-type", ""), body, i)) == i + 2

    try:
        return await _drive(call, calls, concurrency, profile)
    finally:
        for conn in conns:
            conn.close()


CLIENTS = {"mcpio": mcpio_client, "httpx": httpx_client, "raw": raw_client}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="an mcpio server's endpoint (default: start one)")
    ap.add_argument("--era", choices=["legacy", "modern", "both"], default="both")
    ap.add_argument("--clients", default="mcpio,httpx,raw")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile (CPU time) of the timed calls")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    server = None
    url = args.url
    if url is None:
        server = hc.ServerProc("mcpio")
        url = f"http://127.0.0.1:{server.wait_listening()}/mcp"
    try:
        for era in ("legacy", "modern") if args.era == "both" else (args.era,):
            for name in args.clients.split(","):
                profile = cProfile.Profile(time.process_time) if args.profile else None
                per_call = asyncio.run(CLIENTS[name](url, era, args.calls, args.concurrency, profile))
                print(f"{name:<6} {era:<7} concurrency {args.concurrency}: {per_call * 1e6:7.0f} µs CPU per tools/call")
                if profile is not None:
                    out = io.StringIO()
                    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(args.top)
                    print(out.getvalue())
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
