"""The upstream of the burst test (tests/client/test_http_burst.py): Streamable HTTP on a port.

    python tests/servers/burst_server.py PORT

``add`` answers at once and notes the client port of the connection that carried it;
``connections`` says how many connections (client ports) carried calls of ``add``.
"""

from __future__ import annotations

import asyncio
import sys

from mcpio import Context, Server

server = Server("burst", version="1.0.0")
_ports: set[int] = set()


@server.tool
def add(a: int, b: int, ctx: Context) -> int:
    if ctx.http is not None and ctx.http.client is not None:
        _ports.add(ctx.http.client[1])
    return a + b


@server.tool
def connections() -> int:
    return len(_ports)


if __name__ == "__main__":
    asyncio.run(server.serve_http(port=int(sys.argv[1])))
