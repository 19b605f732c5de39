"""``Server.proxy`` served by two processes of one deployment: two real uvicorn servers on
127.0.0.1, each with its own ``RedisState`` on one real redis-server (two processes as far as the
sessions and the bus go), in front of one upstream (``upstream.py`` run by ``mcpio run -t http``).

Each process's upstream connection holds the subscriptions its own copies of the sessions hold;
when several hear the same update, the process holding the update's turn tells every process,
so each subscribed client is told once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpio import Client, Server
from mcpio._state import RedisState
from tests.client.support import arun, within
from tests.support.http import ServerThread, mcpio_http

HERE = Path(__file__).parent
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def upstream_url() -> Iterator[str]:
    with mcpio_http(str(HERE / "upstream.py")) as (url, _):
        yield url


@pytest.fixture
def pair(upstream_url: str, redis_url: str) -> Iterator[list[str]]:
    """The URLs of two proxies of ``upstream_url`` sharing one Redis."""
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(
                ServerThread(Server.proxy(upstream_url, name="up", era="legacy").http_app(state=RedisState(redis_url)))
            ).url
            for _ in range(2)
        ]


def listener() -> tuple[asyncio.Queue[str], dict]:
    """A queue of the URIs of the ``resources/updated`` a client is told of, and its Client options."""
    updated: asyncio.Queue[str] = asyncio.Queue()

    def on_notification(method: str, params: dict) -> None:
        if method == "notifications/resources/updated":
            updated.put_nowait(params["uri"])

    return updated, {"era": "legacy", "on_notification": on_notification, "timeout": 30}


def test_an_update_both_processes_hear_reaches_each_subscriber_once(pair):
    """A client on each process subscribes to note://7 and note://8, so both processes' upstream
    connections hold both subscriptions and both hear every update. Five updates of note://7,
    then one of note://8: each client is told of each once, not once per process."""

    async def go():
        queues, clients = [], []
        for url in pair:
            updated, options = listener()
            queues.append(updated)
            clients.append(Client(url, **options))
        async with clients[0], clients[1]:
            for client in clients:
                await client.subscribe("note://7")
                await client.subscribe("note://8")
            for _ in range(5):
                await clients[0].call_tool("touch", {"id": "7"})
            await clients[1].call_tool("touch", {"id": "8"})
            for updated in queues:
                seen: list[str] = []
                while seen.count("note://7") < 5 or "note://8" not in seen:
                    seen.append(await within(updated.get()))
                assert sorted(seen) == ["note://7"] * 5 + ["note://8"]
                assert updated.empty()

    arun(go(), timeout=90)


def test_the_turn_passes_at_once_when_the_process_holding_it_stops_hearing(pair):
    """Only the client on A subscribes at first: A alone hears the first update and takes its
    turn. Then a client on B subscribes and A's unsubscribes: A hands the turn over as its
    upstream subscription ends, so the very next update, which only B hears, reaches B's client
    (not dropped for a turn A would still hold for two seconds)."""

    async def go():
        updated, options = listener()
        async with Client(pair[0], **options) as on_a:
            await on_a.subscribe("note://7")
            await on_a.call_tool("touch", {"id": "7"})
            assert await within(updated.get()) == "note://7"  # told by A, whose turn it is now
            heard, options = listener()
            async with Client(pair[1], **options) as on_b:
                await on_b.subscribe("note://7")
                await on_a.unsubscribe("note://7")
                await on_b.call_tool("touch", {"id": "7"})
                assert await within(heard.get()) == "note://7"
            assert updated.empty()

    arun(go(), timeout=90)


def test_a_session_ended_on_another_process_leaves_that_process_s_own_subscribers_subscribed(pair):
    """Session S subscribes to note://7 on A, and a client on B does too. S is then used on B (B
    makes its copy of S, subscribed as S's record says) and ended there with DELETE. B's upstream
    subscription was held for its own client and for its copy of S: it is held still for its
    client, which is told of the next update (before, B unsubscribed upstream on ending a copy
    whose subscription it had never held, and nobody heard the update)."""
    a, b = pair
    with httpx.Client(timeout=30) as http:

        def post(url: str, headers: dict[str, str], message: dict) -> httpx.Response:
            r = http.post(url, headers=headers, json={"jsonrpc": "2.0", **message})
            assert r.status_code in (200, 202), r.text
            return r

        r = post(
            a,
            {"accept": ACCEPT},
            {"id": 0, "method": "initialize", "params": {"protocolVersion": LEGACY, "capabilities": {},
                                                          "clientInfo": {"name": "s", "version": "1"}}},
        )  # fmt: skip
        s = {"accept": ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
        post(a, s, {"method": "notifications/initialized"})
        post(a, s, {"id": 1, "method": "resources/subscribe", "params": {"uri": "note://7"}})

        async def go():
            heard, options = listener()
            async with Client(b, **options) as on_b:
                await on_b.subscribe("note://7")
                await asyncio.to_thread(post, b, s, {"id": 2, "method": "ping"})  # B's copy of S
                assert (await asyncio.to_thread(http.delete, b, headers=s)).status_code == 200
                await on_b.call_tool("touch", {"id": "7"})
                assert await within(heard.get()) == "note://7"

        arun(go(), timeout=90)
