"""The HTTP/2 benchmark's server (benchmarks/http2_servers.py): an mcpio Server with ``add`` and
``ticks`` (a tool reporting ``n`` progress notifications, answered as an SSE stream), its
``http_app()`` served over h2c (cleartext HTTP/2, prior knowledge) by one ASGI server:

    python benchmarks/servers/h2_server.py hypercorn|granian|uvicorn

uvicorn speaks HTTP/1.1 only: it is the baseline for the same requests over HTTP/1.1. Prints
``PORT <n>`` once the socket listens; serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys

from mcpio import Context, Server

server = Server("bench-h2", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def ticks(n: int, ctx: Context) -> int:
    """Report ``n`` progress notifications, then answer ``n``."""
    for i in range(n):
        await ctx.report_progress(i + 1, n)
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def main(kind: str) -> None:
    app = server.http_app("/mcp")
    port = free_port()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"PORT {port}", flush=True)
    if kind == "hypercorn":
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.accesslog = None
        config.loglevel = "WARNING"
        config.keep_alive_max_requests = (
            2**31
        )  # as mcpio's (_transports/_hypercorn.py): its default 1000 ends the h2 connection
        await serve(app, config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]
    elif kind == "granian":
        from granian.constants import HTTPModes, Interfaces
        from granian.server.embed import Server as Granian

        g = Granian(
            app, address="127.0.0.1", port=port, interface=Interfaces.ASGI, http=HTTPModes.auto, log_enabled=False
        )
        task = asyncio.create_task(g.serve())
        await stop.wait()
        g.stop()
        await task
    else:
        import uvicorn

        cfg = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
        srv = uvicorn.Server(cfg)
        task = asyncio.create_task(srv.serve())
        await stop.wait()
        srv.should_exit = True
        await task


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
