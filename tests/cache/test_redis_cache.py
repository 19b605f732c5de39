"""RedisCache: one cache for a fleet of host processes, on a real redis-server. Each host here is
a separate Python process with its own Client; the server counts what reaches it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import uuid

import redis

from mcpio import Client, RedisCache
from tests.cache.conftest import ALICE, BOB, hits, notified
from tests.support.http import free_port

HOST = """
import asyncio, json, sys
from mcpio import Client, RedisCache

async def main(url, redis_url, token):
    cache = RedisCache(redis_url)
    async with Client(url, era="modern", cache=cache, headers={"Authorization": "Bearer " + token}, timeout=30) as c:
        tools = sorted(t.name for t in await c.list_tools())
        secret = (await c.read_resource("secret://mine"))[0].text
    await cache.aclose()
    print(json.dumps({"tools": tools, "secret": secret}))

asyncio.run(main(*sys.argv[1:]))
"""


def host(url: str, redis_url: str, token: str) -> dict:
    """One host process: lists the tools and reads its secret through the shared Redis cache."""
    out = subprocess.run(
        [sys.executable, "-c", HOST, url, redis_url, token],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def observer(url: str, **options) -> Client:
    return Client(url, era="modern", headers={"Authorization": f"Bearer {ALICE}"}, timeout=30, **options)


def test_two_host_processes_share_public_answers_and_keep_private_ones_apart(http_url, redis_url):
    async def count(what: str) -> int:
        async with observer(http_url) as c:
            return await hits(c, what)

    lists, secrets = asyncio.run(count("tools/list")), asyncio.run(count("read secret://mine"))
    alice = host(http_url, redis_url, ALICE)
    assert asyncio.run(count("tools/list")) == lists + 1
    bob = host(http_url, redis_url, BOB)
    assert asyncio.run(count("tools/list")) == lists + 1  # Bob's process got Alice's public list
    assert bob["tools"] == alice["tools"]
    assert (alice["secret"], bob["secret"]) == ("the secret of token-1", "the secret of token-2")
    assert host(http_url, redis_url, ALICE)["secret"] == "the secret of token-1"
    assert asyncio.run(count("read secret://mine")) == secrets + 2  # Alice's second process: cached

    db = redis.Redis.from_url(redis_url)
    try:
        keys = db.keys("*")
        assert keys and all(k.startswith(b"mcpio:client-cache:mcpio:cc:") for k in keys)
        for key in keys:
            value = db.get(key)
            json.loads(value)  # values are JSON
            for token in (ALICE, BOB):
                assert token.encode() not in key and token.encode() not in value
            assert 0 < db.pttl(key) <= 60000
    finally:
        db.close()


def test_list_changed_seen_by_one_host_drops_the_entry_for_all(http_url, redis_url):
    async def main():
        cache = RedisCache(redis_url)
        changed, on_notification = notified("notifications/tools/list_changed")
        async with observer(http_url, cache=cache, on_notification=on_notification) as c:
            await c.list_tools()
            await c.subscribe("note://settled")  # returns once a listen stream is acknowledged
            name = "t" + uuid.uuid4().hex[:12]
            await c.call_tool("add_tool", {"name": name})
            await asyncio.wait_for(changed.wait(), 20)
        await cache.aclose()
        return name

    host(http_url, redis_url, BOB)  # stores the list
    name = asyncio.run(main())
    assert name in host(http_url, redis_url, BOB)["tools"]  # another process asks the server again


def test_a_redis_that_is_down_never_fails_a_call(http_url, caplog):
    async def main():
        cache = RedisCache(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
        async with observer(http_url, cache=cache) as c:
            before = await hits(c, "tools/list")
            assert await c.list_tools() == await c.list_tools()
            assert await hits(c, "tools/list") == before + 2
        await cache.aclose()

    with caplog.at_level(logging.WARNING, logger="mcpio.client"):
        asyncio.run(main())
    assert "client cache: get failed" in caplog.text and "served without the cache" in caplog.text


def test_a_redis_that_hangs_costs_one_timeout_per_outage_not_one_per_call(http_url, caplog):
    """A socket that accepts and never answers: the first call waits for the cache's timeout,
    then the cache is left alone for a while (one warning, not one per call and key)."""
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(16)  # connections complete in the backlog; nothing is ever read or answered

    async def main():
        cache = RedisCache(f"redis://127.0.0.1:{hung.getsockname()[1]}/0", timeout=0.5)
        async with observer(http_url, cache=cache) as c:
            before = await hits(c, "tools/list")
            for _ in range(4):
                await c.list_tools()
            assert await hits(c, "tools/list") == before + 4

    try:
        with caplog.at_level(logging.WARNING, logger="mcpio.client"):
            asyncio.run(main())
    finally:
        hung.close()
    assert caplog.text.count("client cache:") == 1, caplog.text
