"""A legacy Streamable HTTP server's request sent on the SSE stream of the POST carrying a call
relates to that call (spec 2025-11-25, transports): mcpio's client runs its handler in the
context of that call, so with several calls in flight a handler knows which call asks."""

from __future__ import annotations

import asyncio
import contextvars

from mcpio import Client, Context, Server
from tests.client.support import arun
from tests.support.http import ServerThread

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def server() -> Server:
    app = Server("asker")
    both = asyncio.Event()
    started: list[int] = []

    @app.tool
    async def ask(ctx: Context) -> str:
        """Wait until two calls are in flight, then ask this call's client a question."""
        started.append(1)
        if len(started) == 2:
            both.set()
        await both.wait()
        said = await ctx.sample("Who are you?", max_tokens=5)
        return str(said["content"]["text"])

    return app


def test_a_servers_request_on_a_calls_stream_is_answered_in_that_calls_context():
    def sampling(params):
        return WHO.get()  # the context of the call the request came with

    async def call(c: Client, who: str) -> str:
        WHO.set(who)  # this task's own context: the call is made from it
        return (await c.call_tool("ask", {})).text

    with ServerThread(server().http_app()) as served:

        async def go():
            async with Client(served.url, era="legacy", sampling=sampling, timeout=30) as c:
                ada, bob = await asyncio.gather(call(c, "Ada"), call(c, "Bob"))
                assert (ada, bob) == ("Ada", "Bob")

        arun(go(), timeout=60)
