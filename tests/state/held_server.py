"""A server for ``test_held_for_the_get.py``: ``python tests/state/held_server.py PORT REDIS_URL``.
Every process started with the same Redis serves every legacy session. On
``notifications/initialized`` and ``notifications/roots/list_changed`` from a client with roots,
it sends outside any request, as the reference filesystem server does, a log message ``hello``
and the request ``roots/list``. Tools: ``asked`` (whether this process has sent both),
``learned`` (the roots it got back last), ``grow(name)`` (adds a tool: ``tools/list_changed`` to
every copy of every session), ``touch(uri)`` (a resource update; resource ``memo://a``),
``push`` (``acme/pushed`` to the clients that declared extension ``com.acme/push``; ``push_when``
with a datetime in it). A third
argument is the ``session_timeout`` (seconds; 1800 without), a fourth the ``task_lease`` (10 without; with it, mcpio's INFO log goes to stderr)."""

from __future__ import annotations

import datetime
import logging
import sys

from mcpio import Context, Server
from mcpio._state import RedisState

server = Server("held", version="1.0.0")
server.extension("com.acme/push")
ASKED: list[bool] = []
LEARNED: list[str] = []


@server.on_notification("notifications/initialized")
@server.on_notification("notifications/roots/list_changed")
async def ask(ctx: Context, params: dict) -> None:
    if "roots" not in ctx.client_capabilities:
        return  # a session these tests use for their other calls
    await ctx.log("info", "hello")
    ASKED.append(True)  # roots/list is sent before this handler first waits (on the answer)
    LEARNED[:] = [r["uri"] for r in await ctx.list_roots(timeout=30)]


@server.tool
def asked() -> bool:
    return bool(ASKED)


@server.tool
def learned() -> list[str]:
    return LEARNED


@server.tool
def grow(name: str) -> str:
    server.add_tool(lambda: name, name=name)
    return name


@server.resource("memo://a")
def memo_a() -> str:
    return "a"


@server.tool
async def touch(uri: str) -> str:
    await server.notify_resource_updated(uri)
    return "touched"


@server.tool
async def push() -> int:
    return await server.notify_extension("com.acme/push", "acme/pushed", {"x": 1})


@server.tool
async def push_when() -> int:
    """``acme/pushed`` with a datetime, which the wire encodes (as an RFC 3339 string)."""
    when = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    return await server.notify_extension("com.acme/push", "acme/pushed", {"at": when})


if __name__ == "__main__":
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 1800.0
    lease = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    if len(sys.argv) > 4:  # the tests read when a process finds another dead (INFO on stderr)
        logging.getLogger("mcpio").addHandler(logging.StreamHandler())
        logging.getLogger("mcpio").setLevel(logging.INFO)
    state = RedisState(sys.argv[2], task_lease=lease)
    server.run("http", port=int(sys.argv[1]), state=state, session_timeout=timeout)
