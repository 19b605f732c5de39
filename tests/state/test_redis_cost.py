"""What a legacy session costs on Redis (issue 14: Redis may cost at most 25 % of the
single-process legacy throughput). Counted by the real redis-server (``INFO commandstats``),
never timed: a process that read a session's record within ``fresh_for`` serves the session's
requests from its local copy without a round trip (``SharedSessions.find``), and touches the
record in the background, batched, once per window. What must hold as well: a DELETE made on
another process ends the copy at once (the bus), and a session used through one process only
never expires while in use.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import redis

from mcpio._state import RedisState
from mcpio._state._redis_sessions import LOST
from tests.state.test_shared_sessions import VERSION, RoundRobin, start

CALLS = 200


def commands(db: redis.Redis) -> int:
    """Every command Redis has run so far (those inside scripts included), INFO itself aside."""
    stats = db.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k != "cmdstat_info")


def stop(procs) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(10)


def test_legacy_json_calls_on_one_process_cost_no_redis_command_within_the_window(redis_url):
    # A 60 s window and a 60 s task lease (a beat every 20 s): nothing time-driven in the count.
    urls, procs = start(redis_url, 1, "1800", "10000", "60", "60")
    db = redis.Redis.from_url(redis_url)
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            s.call("where")  # the first request reads the record: the copy is vouched for
            before = commands(db)
            for _ in range(CALLS):
                r = s.post("tools/call", {"name": "where", "arguments": {}})
                assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
                assert "result" in r.json()
            spent = commands(db) - before
        # Before this change: one script per call (~9 commands each, 1,760 here). Now at most
        # the task lease's beats (a request in flight holds it: a few commands per beat).
        print("redis commands for", CALLS, "calls:", spent)
        assert spent <= 12, (spent, db.info("commandstats"))
    finally:
        stop(procs)
        db.close()


def test_with_fresh_for_0_every_request_reads_the_record(redis_url):
    urls, procs = start(redis_url, 1, "1800", "10000", "60", "0")
    db = redis.Redis.from_url(redis_url)
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            before = commands(db)
            for _ in range(20):
                s.call("where")
            assert commands(db) - before >= 20 * 5  # a touch script (EVALSHA and its commands) each
    finally:
        stop(procs)
        db.close()


def test_a_delete_elsewhere_ends_a_fresh_copy_at_once(redis_url):
    urls, procs = start(redis_url, 2, "1800", "10000", "60", "60")
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            s.call("where", at=0)
            s.call("where", at=0)  # A serves it from its copy now (60 s window)
            assert c.delete(urls[1], headers=s.headers).status_code == 200
            r = s.post("tools/list", at=0)
            assert r.status_code == 404 and "session unknown or ended" in r.json()["error"]["message"]
    finally:
        stop(procs)


def test_a_session_used_through_one_process_only_does_not_expire(redis_url):
    # session_timeout 1 s (window 0.25 s): served from A's copy, touched in the background.
    urls, procs = start(redis_url, 2, "1", "10000", "60", "60")
    db = redis.Redis.from_url(redis_url)
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls[:1])
            end = time.monotonic() + 3  # three session timeouts of use
            while time.monotonic() < end:
                s.call("where")
            assert db.exists(f"mcpio:s:{s.sid}")
            s.urls = urls[1:]  # and the other process still finds it
            s.turn = iter(lambda: 0, 1)
            assert s.post("tools/list").status_code == 200
    finally:
        stop(procs)
        db.close()


def test_the_batched_touch_answers_each_session_as_touch_does(redis_url):
    """``touch_many`` (the background touch): unchanged, changed, gone and "Redis lost its
    data" sessions in one script, each answered as ``touch`` answers it; TTLs refreshed."""

    async def go() -> None:
        state = RedisState(redis_url, prefix="cost-test:")
        d = state.sessions
        try:
            for sid in ("a", "b", "c"):
                assert await d.create(sid, {"v": VERSION}, ttl=30, max_sessions=0)
            await d.update("b", {"lvl": "error"}, [], ttl=30)  # rev 2: a copy knowing rev 1 gets it
            await d.delete("c")
            found = await d.touch_many({"a": 1, "b": 1, "c": 1}, ttl=60)
            assert found["a"] == 1
            assert found["b"] == {"rev": "2", "v": VERSION, "lvl": "error"}
            assert found["c"] is None
            assert 30_000 < await state.client.pttl("cost-test:s:a") <= 60_000
            await state.client.delete("cost-test:epoch", "cost-test:s:a")  # as after a restart, empty
            assert (await d.touch_many({"a": 1}, ttl=60))["a"] == LOST
        finally:
            keys = await state.client.keys("cost-test:*")
            if keys:
                await state.client.delete(*keys)
            await state.aclose()

    asyncio.run(go())
