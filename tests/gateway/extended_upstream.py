"""An upstream with an extension of its own, ``com.acme/push``: a custom request (``acme/echo``),
a notification it hears from its client (``acme/ping``: the tool ``pings`` tells what it heard)
and one it sends to the clients that declared the extension (``acme/pushed``: the tools ``push_back``
and ``push_many``);
``acme/stamped`` answers with ``_meta`` of its own; ``acme/declared`` and the tool ``declared``
tell the settings the client declared for ``com.acme/push``; ``acme/wait`` reports progress, then waits until the tool ``release`` is called, and ``waits`` tells
whether each one was cancelled."""

import asyncio

from mcpio import Context, Server

server = Server("extended")
push = server.extension("com.acme/push", {"version": 1})
heard: list[int] = []
released = asyncio.Event()
waited: list[str] = []


@push.method("acme/echo")
def echo(text: str) -> dict:
    return {"echo": text}


@push.method("acme/stamped")
def stamped() -> dict:
    """A result with ``_meta`` of the extension's own."""
    return {"ok": True, "_meta": {"com.acme/stamp": 7}}


@push.notification("acme/ping")
def ping(n: int) -> None:
    heard.append(n)


@push.method("acme/wait")
async def wait(ctx: Context) -> dict:
    await ctx.report_progress(1, None, "waiting")
    try:
        await released.wait()
    except asyncio.CancelledError:
        waited.append("cancelled")
        raise
    waited.append("released")
    return {"waited": True}


@push.method("acme/declared")
def declared_method(ctx: Context) -> dict:
    """The settings the request's client declared for com.acme/push (None: it did not)."""
    return {"settings": ctx.client_extension("com.acme/push")}


@server.tool
def declared(ctx: Context) -> dict:
    """The settings the call's client declared for com.acme/push (None: it did not)."""
    return {"settings": ctx.client_extension("com.acme/push")}


@server.tool
def release() -> None:
    """End every acme/wait."""
    released.set()


@server.tool
def waits() -> list[str]:
    """How each acme/wait ended so far."""
    return waited


@server.tool
def pings() -> list[int]:
    """The numbers of the acme/ping notifications heard so far."""
    return heard


@server.tool
async def push_back() -> int:
    """Send acme/pushed to the clients that declared com.acme/push; how many."""
    return await server.notify_extension("com.acme/push", "acme/pushed", {"x": 1})


@server.tool
async def push_many(n: int, start: int = 0) -> None:
    """Send acme/pushed ``n`` times, ``x`` counting from ``start``, to the clients that declared com.acme/push."""
    for x in range(start, start + n):
        await server.notify_extension("com.acme/push", "acme/pushed", {"x": x})


@server.tool
async def progress_many(n: int, ctx: Context) -> int:
    """Report progress ``n`` times (1 .. n of n) as fast as it can; returns ``n``."""
    for done in range(1, n + 1):
        await ctx.report_progress(done, n)
    return n


@server.tool
def churn(n: int, name: str) -> str:
    """Add and remove a tool ``n`` times (each tells the clients: 2n tools/list_changed), then
    register a tool named ``name``."""
    for _ in range(n):
        server.add_tool(lambda: "", name="fleeting")
        server.remove_tool("fleeting")
    server.add_tool(lambda: name, name=name)
    return name


if __name__ == "__main__":
    server.run()
