"""What several tests of the proxy check the same way."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from mcpio import Client, Server
from tests.client.support import arun
from tests.support.http import ServerThread

E = TypeVar("E", asyncio.Event, threading.Event)


@contextlib.contextmanager
def proxy_log_says(text: str, said: E) -> Iterator[E]:
    """``said`` (an asyncio event, or a threading one for a test on two threads), set when the
    proxy logs a line containing ``text`` (an upstream's stderr lines are logged)."""

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if text in record.getMessage():
                said.set()

    logger = logging.getLogger("mcpio.gateway")
    watch, level = Watch(), logger.level
    logger.addHandler(watch)
    logger.setLevel(logging.INFO)
    try:
        yield said
    finally:
        logger.removeHandler(watch)
        logger.setLevel(level)


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


async def upstream_learns(client: Client, changed: asyncio.Event, tool: str, roots: list[str]) -> None:
    """Return once ``tool`` (``roots_upstream.py``'s ``roots``, as ``client`` lists it) says the
    upstream learned ``roots`` (its URIs); ``changed`` is set on each ``tools/list_changed``."""
    want, said = json.dumps(sorted(roots)), None
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(15):
            while said != want:
                changed.clear()
                said = {t.name: t.description for t in await client.list_tools()}.get(tool)
                if said != want:
                    await changed.wait()
    assert said == want, f"{tool}: the upstream learned the roots {said}, not {want}"


def tools_changed(changed: asyncio.Event) -> Callable[[str, Any], None]:
    """An ``on_notification`` that sets ``changed`` on each ``tools/list_changed``."""

    def on_notification(method: str, params: Any) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    return on_notification


async def initialized_declaring(peer: Any, extension: str) -> None:
    """A legacy handshake declaring ``extension`` (as hosts send it: no member of 2025-11-25)."""
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {extension: {}}},
        "clientInfo": {"name": "mcpio-tests", "version": "1.0.0"},
    }
    peer.version = (await peer.request("initialize", hello, check=False))["result"]["protocolVersion"]
    await peer.notify("notifications/initialized")
