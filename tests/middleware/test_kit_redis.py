"""The middleware kit on a shared Redis state backend: two real ``mcpio run -t http --redis``
processes on one real redis-server. The rate-limit buckets are Redis's (a bucket drained on one
process refuses on the other); the response cache is per process but dropped by changes the
other process announces on the state backend's bus."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpio import Client, MCPError
from mcpio.middleware import RATE_LIMITED
from tests.middleware.test_kit_http import Kit, start_kit
from tests.support.redis import RedisServer


def text(result: dict) -> str:
    return result["content"][0]["text"]


@contextlib.contextmanager
def two_processes(redis_url: str, tmp_path: Path, **env: str) -> Iterator[tuple[Kit, Kit]]:
    """Two ``mcpio run`` processes sharing ``redis_url`` (limits from ``env``)."""
    one = start_kit(tmp_path, "--redis", redis_url, **env)
    two = start_kit(tmp_path, "--redis", redis_url, **env)
    try:
        yield next(one), next(two)
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_bucket_drained_on_one_process_refuses_on_the_other(redis_url, tmp_path, era):
    """3 tool calls per client address (both processes see 127.0.0.1), then one a minute."""

    async def main(a: Kit, b: Kit):
        async with Client(a.url, era=era, timeout=20) as ca, Client(b.url, era=era, timeout=20) as cb:
            assert text(await ca.call_tool("echo", {"text": "1"})) == "1"
            assert text(await cb.call_tool("echo", {"text": "2"})) == "2"
            assert text(await ca.call_tool("echo", {"text": "3"})) == "3"  # the burst of 3, spent on both
            refused = []
            for c in (cb, ca):
                with pytest.raises(MCPError) as exc:
                    await c.call_tool("echo", {"text": "4"})
                refused.append(exc.value)
            return refused

    with two_processes(redis_url, tmp_path, KIT_RATE="1/minute", KIT_BURST="3") as (a, b):
        refused = asyncio.run(main(a, b))
    assert [r.code for r in refused] == [RATE_LIMITED, RATE_LIMITED]
    assert all(55 < r.data["retryAfter"] <= 60 for r in refused)


def test_a_change_on_one_process_drops_the_cached_answers_of_the_other(redis_url, tmp_path):
    async def main(a: Kit, b: Kit):
        heard: dict[str, asyncio.Event] = {}

        def on_notification(method: str, params: dict | None) -> None:
            heard.setdefault(method, asyncio.Event()).set()

        def event(method: str) -> asyncio.Event:
            return heard.setdefault(method, asyncio.Event())

        updated, changed = event("notifications/resources/updated"), event("notifications/tools/list_changed")
        async with (
            Client(a.url, era="legacy", timeout=20) as ca,
            Client(b.url, era="legacy", timeout=20, on_notification=on_notification) as cb,
        ):
            await cb.subscribe("memo://public")
            first = text(await cb.call_tool("counter", {}))
            assert text(await cb.call_tool("counter", {})) == first  # cached on B
            read = (await cb.read_resource("memo://public"))[0]["text"]
            assert (await cb.read_resource("memo://public"))[0]["text"] == read
            await ca.call_tool("touch", {"uri": "memo://public"})  # on A: the bus tells B
            await asyncio.wait_for(updated.wait(), 10)  # B dropped the entry before telling its subscriber
            reread = (await cb.read_resource("memo://public"))[0]["text"]
            assert text(await cb.call_tool("counter", {})) == first  # a resource update keeps tool answers
            await ca.call_tool("grow", {"name": "sprout"})  # tools/list_changed on A, told to B
            await asyncio.wait_for(changed.wait(), 10)
            again = text(await cb.call_tool("counter", {}))
            return first, read, reread, again

    with two_processes(redis_url, tmp_path) as (a, b):
        first, read, reread, again = asyncio.run(main(a, b))
    assert reread != read and again != first


def test_while_redis_is_down_each_process_limits_on_its_own_buckets(tmp_path):
    own = RedisServer()  # its own: this test stops it
    own.start()
    kit = start_kit(tmp_path, "--redis", own.url, KIT_RATE="1/minute", KIT_BURST="2")
    a = next(kit)

    async def main():
        async with Client(a.url, era="modern", timeout=20) as c:
            assert text(await c.call_tool("echo", {"text": "on redis"})) == "on redis"
            own.stop()
            served = [text(await c.call_tool("echo", {"text": str(i)})) for i in range(2)]  # a full bucket here
            with pytest.raises(MCPError) as refused:
                await c.call_tool("echo", {"text": "one too many"})
            return served, refused.value

    try:
        served, refused = asyncio.run(main())
    finally:
        kit.close()
        own.close()
    assert served == ["0", "1"] and refused.code == RATE_LIMITED
    log = a.log.read_text()
    assert "Redis is unreachable" in log and "limiting in this process meanwhile" in log
