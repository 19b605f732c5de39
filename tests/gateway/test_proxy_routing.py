"""``Server.proxy`` with several clients at once, served over HTTP: what a legacy Streamable HTTP
upstream asks during a call reaches the client of that call; an upstream subscription lives as
long as its subscribers' sessions. The upstream is ``upstream.py``, a real subprocess (over
HTTP: run by ``mcpio run -t http``)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path

from mcpio import Client, Server
from tests.client.support import arun, within
from tests.gateway.support import each_caller_is_asked_alone
from tests.support.http import ServerThread, mcpio_http

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]


def test_what_a_legacy_http_upstream_asks_during_concurrent_calls_goes_to_the_client_of_each_call():
    """The upstream speaks the legacy era over HTTP: it asks each call's client with a request on
    the SSE stream of the POST carrying that call, while both calls are in flight. Each client is
    asked about its own call only, and each call gets its own client's answer. In both eras of
    the proxy's clients."""
    with mcpio_http(str(HERE / "upstream.py")) as (upstream_url, _):
        each_caller_is_asked_alone(Server.proxy(upstream_url, name="up", era="legacy"))


def test_the_upstream_subscription_ends_when_its_last_subscriber_leaves_without_unsubscribing():
    """Two legacy clients of the proxy (over HTTP) subscribe to one upstream resource and leave
    without ``resources/unsubscribe`` (their sessions end): the proxy holds its upstream
    subscription while one of them is left, and unsubscribes upstream when the last one goes,
    as the upstream sees on the wire."""
    sent: list[str] = []  # the methods the proxy sent upstream, in order
    unsubscribed = threading.Event()

    def trace(direction: str, frame: bytes) -> None:
        if direction == "out":
            method = json.loads(frame).get("method")
            if method in ("resources/subscribe", "resources/unsubscribe"):
                sent.append(method)
            if method == "resources/unsubscribe":
                unsubscribed.set()

    proxy = Server.proxy(UPSTREAM, name="up", era="legacy", trace=trace)  # resources/subscribe upstream
    with ServerThread(proxy.http_app()) as served:

        async def go():
            updated: asyncio.Queue[str] = asyncio.Queue()

            def on_notification(method, params):
                if method == "notifications/resources/updated":
                    updated.put_nowait(params["uri"])

            first = Client(served.url, era="legacy", timeout=30)
            second = Client(served.url, era="legacy", on_notification=on_notification, timeout=30)
            async with first, second:
                await first.subscribe("note://7")
                await second.subscribe("note://7")
                await first.aclose()  # leaves without unsubscribing: the second still hears of it
                await second.call_tool("touch", {"id": "7"})
                assert await within(updated.get()) == "note://7"
                assert sent == ["resources/subscribe"]
            # the second leaves too (its session ends, DELETE): the upstream subscription ends
            assert await asyncio.to_thread(unsubscribed.wait, 10), "the proxy never unsubscribed upstream"
            assert sent == ["resources/subscribe", "resources/unsubscribe"]

        arun(go(), timeout=60)


def test_the_upstream_task_status_messages_reach_the_client_of_the_proxy_task():
    """A 2025-11-25 upstream runs a tool as a task and reports three stages as its status: the
    proxy runs its own task for the client's call, and each of the upstream's statuses reaches
    the client as a status of the client's task (its id, not the upstream's)."""
    proxy = Server.proxy(UPSTREAM, name="up", era="legacy")

    async def go():
        seen: list[dict] = []
        third = asyncio.Event()

        def on_task_status(task):
            seen.append(task)
            if task.get("statusMessage") == "step 3":
                third.set()

        async with Client(proxy, era="legacy", timeout=30) as c:
            result = await c.call_tool("staged", {}, on_task_status=on_task_status)
            assert result.text == "staged"
            await within(third.wait())
        working = [t.get("statusMessage") for t in seen if t["status"] == "working"]
        assert [m for m in working if m is not None] == ["step 1", "step 2", "step 3"]
        assert len({t["taskId"] for t in seen}) == 1  # all of them about the client's one task

    arun(go(), timeout=60)
