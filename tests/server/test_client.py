"""The same server driven by :class:`mcpio.Client` in process (``Client(server)``): the public
round trip works in every legacy version and closing is prompt (the server closes its end)."""

from __future__ import annotations

import asyncio

import pytest

from mcpio import Client, Context, Server
from tests.server.peer import LEGACY, arun, since


def demo() -> Server:
    server = Server("demo")

    @server.tool
    async def work(n: int, ctx: Context) -> int:
        await ctx.info("working")
        await ctx.report_progress(1, 2, "half way")
        r = await ctx.sample(f"what comes after {n}?")
        return int(r["content"]["text"])

    @server.resource("data://hello")
    def hello() -> str:
        return "hello"

    @server.prompt
    def greet(name: str) -> str:
        return f"Greet {name}."

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_client_round_trip_and_prompt_close(version):
    logs, progress = [], []

    def sample(params):
        n = int(params["messages"][0]["content"]["text"].split()[-1].rstrip("?"))
        return {"role": "assistant", "content": {"type": "text", "text": str(n + 1)}, "model": "m"}

    async def go():
        client = Client(demo(), protocol_version=version, sampling=sample, on_log=logs.append)
        async with client:
            assert client.negotiated_version == version
            r = await client.call_tool("work", {"n": 41}, on_progress=lambda p, t, m: progress.append((p, t, m)))
            assert r["content"] == [{"type": "text", "text": "42"}]
            assert ("structuredContent" in r) == since(version, "2025-06-18")
            assert [t["name"] for t in await client.list_tools()] == ["work"]
            assert (await client.read_resource("data://hello"))[0]["text"] == "hello"
            assert (await client.get_prompt("greet", {"name": "Ada"}))["messages"][0]["content"]["text"] == "Greet Ada."
            await client.ping()
            loop = asyncio.get_running_loop()
            closing = loop.time()
        assert loop.time() - closing < 2.0  # not the 10 s fallback of a server end left open
        assert logs == [{"level": "info", "data": "working"}]
        assert progress == [(1, 2, "half way" if since(version, "2025-03-26") else None)]

    arun(go())
