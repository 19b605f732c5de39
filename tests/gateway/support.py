"""What several tests of the proxy check the same way."""

from __future__ import annotations

import asyncio

from mcpio import Client, Server
from tests.client.support import arun
from tests.support.http import ServerThread


def each_caller_is_asked_alone(proxy: Server) -> None:
    """Two clients call ``ask_name`` at once through ``proxy`` (served over HTTP); the upstream
    asks each call's client its name while both calls are in flight: each client is asked about
    its own call only, and each call gets its own client's answer. In both eras of the clients."""

    async def one(url: str, era: str, name: str, asked: list[str]) -> str:
        def elicitation(params):
            asked.append(params["message"])
            return {"name": name}

        async with Client(url, era=era, elicitation=elicitation, timeout=30) as c:
            return (await c.call_tool("ask_name", {})).text

    with ServerThread(proxy.http_app()) as served:

        async def go():
            for era in ("legacy", "modern"):
                asked_ada: list[str] = []
                asked_bob: list[str] = []
                ada, bob = await asyncio.gather(
                    one(served.url, era, "Ada", asked_ada), one(served.url, era, "Bob", asked_bob)
                )
                assert (ada, bob) == ("hello Ada", "hello Bob"), era
                assert asked_ada == asked_bob == ["Your name?"], era

        arun(go(), timeout=60)
