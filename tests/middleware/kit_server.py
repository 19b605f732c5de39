"""The server the middleware kit's end-to-end tests serve with ``mcpio run`` (stdio or HTTP, with
``--redis`` and ``--auth-token-env`` as a test needs). Limits come from the environment:
``KIT_RATE`` (default "1000/second"), ``KIT_BURST`` (default 1000), ``KIT_CACHE_SCOPE``.

Every tool and resource counts its executions (``runs``), so a test sees whether an answer
was computed or served from the cache."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from mcpio import Context, Server, StateHandle
from mcpio.middleware import RateLimit, ResponseCache, StructuredLogging, Timing

server = Server("kit", "1.0.0", cache_scope=os.environ.get("KIT_CACHE_SCOPE", "private"))
# Pure JSON lines on stderr: a logger of its own with a "%(message)s" handler, not propagated.
requests = logging.getLogger("kit.requests")
requests.addHandler(logging.StreamHandler(sys.stderr))
requests.propagate = False
server.middleware(StructuredLogging(requests, logging.INFO, include_arguments=True))
server.middleware(Timing())
server.middleware(
    RateLimit(
        os.environ.get("KIT_RATE", "1000/second"), int(os.environ.get("KIT_BURST", "1000")), methods=["tools/call"]
    )
)
server.middleware(ResponseCache(ttl=600))
runs = {"n": 0}


def run() -> int:
    runs["n"] += 1
    return runs["n"]


def who(ctx: Context) -> str:
    return ctx.auth.subject if ctx.auth is not None else "anonymous"


@server.tool(annotations={"readOnlyHint": True})
def whoami(ctx: Context) -> str:
    """Who is calling, and the how-manieth execution this is (read-only: cached, per caller)."""
    return f"{who(ctx)} #{run()}"


@server.tool(annotations={"readOnlyHint": True})
def counter() -> int:
    """The how-manieth execution this is (read-only: cached)."""
    return run()


@server.tool
def echo(text: str, api_key: str = "", key: str = "", sig: str = "") -> str:
    """Not read-only: never cached; api_key, key and sig are never logged."""
    return text


@server.tool
def grow(name: str) -> str:
    """Add a tool: tools/list_changed (and every cached tool answer is dropped)."""
    server.add_tool(lambda: name, name=name)
    return f"added {name}"


@server.tool
async def touch(uri: str) -> str:
    """notifications/resources/updated for ``uri`` (its cached reads are dropped)."""
    await server.notify_resource_updated(uri)
    return "touched"


@server.resource("memo://public", cache_scope="public")
def public_memo() -> str:
    return f"public #{run()}"


@server.resource("memo://mine")
def my_memo(ctx: Context) -> str:
    return f"memo of {who(ctx)} #{run()}"


@server.resource("memo://fresh", ttl_ms=0)
def fresh_memo() -> str:
    return f"fresh #{run()}"


@server.tool
async def remember(note: str, ctx: Context) -> str:
    """Keep ``note`` in this caller's session state (not read-only)."""
    await ctx.session_state.set("note", note)
    return "kept"


@server.tool(annotations={"readOnlyHint": True})
async def recall(ctx: Context) -> str:
    """The note this legacy session kept (read-only: cached, per session)."""
    return f"{await ctx.session_state.get('note')} #{run()}"


@server.tool(annotations={"readOnlyHint": True})
def cookie_user(ctx: Context) -> str:
    """Whom the Cookie names: a server that tells its callers apart by a cookie of its own."""
    cookie = ctx.http.secret_header("cookie") if ctx.http is not None else None
    return f"{cookie} #{run()}"


@server.tool(annotations={"readOnlyHint": True})
def client_name(ctx: Context) -> str:
    """The name the client gave in its clientInfo: an answer shaped by the client."""
    return f"{ctx.client_info.get('name')} #{run()}"


@server.tool
def peer(ctx: Context) -> str:
    """The client address ``ctx.http`` reports."""
    return ctx.http.client[0] if ctx.http is not None and ctx.http.client is not None else "none"


@server.tool
async def basket(item: str, cart: StateHandle, ctx: Context) -> dict[str, Any]:
    """Add ``item`` to the cart the handle names (a new one without): the handle is a bearer secret."""
    items = [*await ctx.session_state.get("items", []), item]
    await ctx.session_state.set("items", items)
    return {"cart": cart, "items": items}
