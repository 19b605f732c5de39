"""A proxy (and a gateway) in a server served on two event loops at once (two threads, each
with a loop and a client of its own): the loop owning the upstream connection calls through it;
another loop's call is a one-line error naming the cause and the fix, never a hang or asyncio's
"attached to a different loop"; once the owner's serving ends, the other loop connects anew."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpio import Client, MCPError, Server
from tests.client.support import arun, within

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]
ELSEWHERE = "is connected by another event loop serving this server"


def in_thread(coro: Callable[[], Any]) -> Any:
    """Run ``coro()`` on a fresh event loop in a thread of its own; its result (or error)."""
    out: dict[str, Any] = {}

    def go() -> None:
        try:
            out["value"] = arun(coro())
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=go)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the other loop hangs"
    if "error" in out:
        raise out["error"]
    return out["value"]


async def echo(client: Client, name: str) -> str:
    return (await within(client.call_tool(name, {"text": "x"}), 20)).text


def make(kind: str, tmp_path: Path) -> tuple[Server, str]:
    """The proxy or gateway to mount, and its echo tool's name under namespace ``up``."""
    if kind == "proxy":
        return Server.proxy(UPSTREAM, name="up"), "up__echo"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"u": {"command": UPSTREAM[0], "args": UPSTREAM[1:]}}}))
    return Server.from_config(str(config)), "up__u__echo"


@pytest.mark.parametrize("kind", ["proxy", "gateway"])
def test_a_second_loop_gets_a_clear_error_and_the_first_serves_on(kind, tmp_path):
    parent = Server("main")
    mounted, name = make(kind, tmp_path)
    parent.mount(mounted, namespace="up")

    async def other() -> tuple[bool, list[Any]]:
        async with Client(parent) as b:
            listed = name in {t.name for t in await within(b.list_tools(), 20)}
            calls = [echo(b, name) for _ in range(20)]  # at once: each one's answer, or its error
            return listed, await asyncio.gather(*calls, return_exceptions=True)

    async def main() -> None:
        async with Client(parent) as a:
            assert await echo(a, name) == "x"
            listed, outcomes = await asyncio.to_thread(in_thread, other)
            assert listed
            for outcome in outcomes:
                assert isinstance(outcome, MCPError), outcome
                assert ELSEWHERE in str(outcome) and "one event loop" in str(outcome), outcome
            assert await echo(a, name) == "x"  # the owner's connection outlived the other's serving

    arun(main(), 60)


@pytest.mark.parametrize("kind", ["proxy", "gateway"])
def test_mounted_from_another_loop_while_both_serve(kind, tmp_path):
    """Mounted from loop B while loop A serves the parent too: whichever loop owns the upstream
    calls through it, the other gets the clear error; after B stops serving, A calls through it."""
    parent = Server("main")
    parent.tool(lambda: "hi", name="hello")  # tools announced before the mount
    mounted, name = make(kind, tmp_path)

    async def outcome(client: Client) -> str:
        try:
            return await echo(client, name)
        except MCPError as exc:
            assert ELSEWHERE in str(exc), exc
            return "elsewhere"

    async def other() -> str:
        async with Client(parent) as b:
            parent.mount(mounted, namespace="up")
            return await outcome(b)

    async def main() -> None:
        async with Client(parent) as a:
            got_b = await asyncio.to_thread(in_thread, other)
            assert got_b in ("x", "elsewhere")
            assert await echo(a, name) == "x"
            assert await echo(a, name) == "x"

    arun(main(), 60)
