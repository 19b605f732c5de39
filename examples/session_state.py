"""State that outlives a request: ``ctx.session_state`` and ``mcpio.StateHandle``.

    mcpio run examples/session_state.py                  # stdio
    mcpio run -t http examples/session_state.py          # Streamable HTTP, state in memory
    mcpio run -t http --redis redis://127.0.0.1:6379/0 examples/session_state.py   # on Redis

``remember``/``recall`` keep state per legacy session (or per authenticated caller in the
2026-07-28 era); ``add_to_cart``/``view_cart`` keep it under a handle the server mints and the
client passes back (SEP-2567), so it works in every era, over every transport.
"""

from __future__ import annotations

from typing import Any

from mcpio import Context, Server, StateHandle

server = Server("session-state", "1.0.0")


@server.tool
async def remember(key: str, value: str, ctx: Context, ttl: float | None = None) -> str:
    """Keep ``value`` under ``key`` for this session (or caller), ``ttl`` seconds (default 1 hour)."""
    await ctx.session_state.set(key, value, ttl=ttl)
    return f"kept {key}"


@server.tool
async def recall(key: str, ctx: Context) -> str | None:
    """The value kept under ``key``, or null."""
    value = await ctx.session_state.get(key)
    return value if value is None else str(value)


@server.tool
async def forget(key: str, ctx: Context) -> bool:
    """Drop ``key``; whether it was there."""
    return await ctx.session_state.delete(key)


@server.tool
async def add_to_cart(item: str, cart: StateHandle, ctx: Context, ttl: float | None = None) -> dict[str, Any]:
    """Add ``item`` to the cart; pass back the ``cart`` handle the result gives to keep adding."""
    items = await ctx.session_state.get("items", [])
    items.append(item)
    await ctx.session_state.set("items", items, ttl=ttl)
    return {"cart": cart, "items": items}


@server.tool
async def view_cart(cart: StateHandle, ctx: Context) -> dict[str, Any]:
    """The items in the cart named by the ``cart`` handle."""
    return {"cart": cart, "items": await ctx.session_state.get("items", [])}


if __name__ == "__main__":
    server.run()
