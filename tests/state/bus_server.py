"""A server for the cross-process tests: ``python tests/state/bus_server.py PORT REDIS_URL``.
Resources ``memo://a`` and ``memo://b``; the tool ``hello`` (plain), and ``touch(uri)``, which calls
``notify_resource_updated(uri)`` (on this process; the state backend carries it to the others)."""

from __future__ import annotations

import sys

from mcpio import Server
from mcpio._state import RedisState

server = Server("bus", version="1.0.0")


@server.resource("memo://a")
def memo_a() -> str:
    return "a"


@server.resource("memo://b")
def memo_b() -> str:
    return "b"


@server.tool
def hello(name: str) -> str:
    return f"Hello, {name}"


@server.tool
async def touch(uri: str) -> str:
    await server.notify_resource_updated(uri)
    return "touched"


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), state=RedisState(sys.argv[2]))
