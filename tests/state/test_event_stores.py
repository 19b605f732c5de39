"""The event store contract, the same for the in-memory store and the Redis one (a real
redis-server): scoping by session and stream, bounds by bytes per session and in total, by
count, oldest first, no replay with a hole, delivered streams dropped (issue 12, break 1)."""

from __future__ import annotations

import asyncio

import pytest

from mcpio._state import MemoryState
from mcpio._transports._http_events import EVENT_OVERHEAD

COST = 1000 + EVENT_OVERHEAD


def make_state(kind: str, url: str | None, **bounds):
    if kind == "memory":
        return MemoryState(**bounds)
    from mcpio._state import RedisState

    return RedisState(url, **bounds)


async def retained(state) -> dict[str, int]:
    events = state.events
    if hasattr(events, "stats"):
        return await events.stats()
    return {"bytes": events.bytes, "evicted": events.evicted}


@pytest.fixture(params=["memory", "redis"])
def kind(request):
    return request.param


@pytest.fixture
def url(kind, request):
    return request.getfixturevalue("redis_url") if kind == "redis" else None


def test_scoped_by_session_and_stream_bounded_by_count(kind, url):
    async def go():
        state = make_state(kind, url, max_events=3, ttl=60)
        await state.start()
        store = state.events
        prime = await store.store("s1", "1", b"")
        ids = [await store.store("s1", "1", f"m{i}".encode()) for i in range(4)]
        other = await store.store("s1", "2", b"other-stream")
        assert (await store.replay_after("s1", ids[1]))[1] == [(ids[2], b"m2"), (ids[3], b"m3")]
        assert (await store.replay_after("s1", ids[0]))[1] == [(ids[n], f"m{n}".encode()) for n in (1, 2, 3)]
        assert await store.replay_after("s1", prime) is None  # m0 was evicted: no replay with a hole
        assert await store.replay_after("s2", ids[0]) is None  # another session sees nothing
        assert (await store.replay_after("s1", other))[1] == []
        assert await store.replay_after("s1", "9-1") is None and await store.replay_after("s1", "junk") is None
        assert await store.replay_after("s1", "1-99") is None  # an id never issued
        await store.forget("s1")
        assert (await retained(state))["bytes"] == 0
        await state.aclose()

    asyncio.run(go())


def test_bounded_by_bytes_per_session_and_in_total_oldest_first(kind, url):
    async def go():
        state = make_state(kind, url, max_session_bytes=5 * COST, max_total_bytes=8 * COST)
        await state.start()
        store = state.events
        a = [await store.store("a", str(i), b"x" * 1000) for i in range(7)]  # seven streams, one event each
        assert await retained(state) == {"bytes": 5 * COST, "evicted": 2}
        assert await store.replay_after("a", "0-0") is None and await store.replay_after("a", "1-0") is None
        assert (await store.replay_after("a", "2-0"))[1] == [(a[2], b"x" * 1000)]
        for _ in range(4):
            await store.store("b", "1", b"y" * 1000)
        assert (await retained(state))["bytes"] == 8 * COST  # the total bound took a's oldest, not b's
        assert await store.replay_after("a", "2-0") is None
        assert (await store.replay_after("a", "3-0"))[1] == [(a[3], b"x" * 1000)]
        assert len((await store.replay_after("b", "1-0"))[1]) == 4
        await store.discard_stream("b", "1")  # delivered: dropped at once
        assert (await retained(state))["bytes"] == 4 * COST
        big = await store.store("c", "1", b"z" * (6 * COST))  # larger than a session's bound: not kept
        assert (await retained(state))["bytes"] == 4 * COST
        assert await store.replay_after("c", big) == ("1", []) and await store.replay_after("c", "1-0") is None
        for sid in "abc":
            await store.forget(sid)
        assert (await retained(state))["bytes"] == 0
        await state.aclose()

    asyncio.run(go())


def test_the_redis_store_leaves_no_keys_behind(redis_url):
    import redis

    async def go():
        state = make_state("redis", redis_url)
        await state.start()
        for n in range(5):
            await state.events.store("s", str(n), b"payload")
        await state.events.discard_stream("s", "0")
        await state.events.forget("s")
        await state.aclose()

    asyncio.run(go())
    client = redis.Redis.from_url(redis_url)
    left = {k.decode() for k in client.keys("*")}
    client.close()
    assert left <= {"mcpio:gbytes", "mcpio:evicted", "mcpio:bus:key"}, left


def test_redis_down_is_state_unavailable_not_a_hang():
    from mcpio._state import RedisState, StateUnavailable
    from tests.support.http import free_port

    async def go():
        state = RedisState(f"redis://127.0.0.1:{free_port()}/0")
        assert await state.ready() is False
        with pytest.raises(StateUnavailable, match="cannot reach Redis"):
            await state.start()
        with pytest.raises(StateUnavailable):
            await state.events.store("s", "1", b"x")
        await state.aclose()

    asyncio.run(go())
