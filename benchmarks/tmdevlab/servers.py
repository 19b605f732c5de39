"""``python benchmarks/tmdevlab/servers.py KIND PORT``: serve the TM Dev Lab workload's four tools
(tools.py) with framework KIND over Streamable HTTP at ``/mcp`` on 127.0.0.1:PORT (0: any),
under uvicorn configured alike for all; prints ``PORT n`` once listening.

KIND: ``mcpio`` (``Server.http_app()``), ``mcp`` (the official SDK's ``MCPServer``, its
``streamable_http_app()`` defaults), ``fastmcp`` (``FastMCP.http_app()`` defaults).
The TypeScript SDK's server is ``ts_server.mjs`` (run with Node).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tools


def build(kind: str) -> Any:
    if kind == "mcpio":
        from mcpio import Server

        server = Server("tmdevlab-mcpio", version="1.0.0")
        for fn in tools.TOOLS:
            server.tool(fn)
        return server.http_app("/mcp")
    if kind == "mcp":
        import warnings

        warnings.simplefilter("ignore")
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("tmdevlab-mcp")
        for fn in tools.TOOLS:
            server.tool()(fn)
        return server.streamable_http_app()
    if kind == "fastmcp":
        os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
        from fastmcp import FastMCP

        server = FastMCP("tmdevlab-fastmcp")
        for fn in tools.TOOLS:
            server.tool(fn)
        return server.http_app()
    raise SystemExit(f"unknown server {kind!r}: mcpio, mcp or fastmcp")


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    import uvicorn

    app = build(kind)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5, backlog=2048)
    )
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
