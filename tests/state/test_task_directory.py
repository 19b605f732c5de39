"""The shared task store on a real redis-server, at the level of two ``TaskStore``s in one
test (each with its own ``RedisState``, as two processes would have): ``tasks/result`` on
another process is woken by the bus when the task ends; a waiter learns that the running
process died; the per-requester cap holds across processes; core tasks (2025-11-25) stay their
session's."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

from mcpio import MCPError
from mcpio._errors import InvalidParams
from mcpio._server._tasks import TaskStore, attach
from mcpio._state import RedisState
from mcpio._transports._base import Abilities


def session(sid: str) -> Any:
    """What a legacy HTTP session looks like to the task store: its transport declares the
    session id (``Abilities.session_id``)."""
    return SimpleNamespace(transport=SimpleNamespace(abilities=Abilities(session_id=sid)))


async def two(url: str, lease: float = 30.0, **store: Any) -> tuple[TaskStore, TaskStore, list[RedisState]]:
    states = [RedisState(url, task_lease=lease) for _ in range(2)]
    stores = []
    for state in states:
        await state.start()
        s = TaskStore(
            ttl=60.0, poll_interval=0.1, max_tasks=store.get("max_tasks", 100), max_per_requester=store.get("per", 10)
        )
        s.share(state.tasks)
        stores.append(s)
    return stores[0], stores[1], states


async def close(states: list[RedisState]) -> None:
    for s in states:
        await s.aclose()


def test_a_waiter_on_another_process_is_woken_by_the_bus_when_the_task_ends(redis_url):
    async def go() -> None:
        a, b, states = await two(redis_url)  # a 30 s lease: only the bus can wake the waiter in time
        try:
            release = asyncio.Event()

            async def work() -> dict:
                await release.wait()
                return {"content": [{"type": "text", "text": "done"}]}

            task = await a.begin(core=True, owner=session("s1"))
            attach(task, asyncio.get_running_loop().create_task(work()))
            remote = await b.find({"taskId": task.id}, session("s1"))
            assert remote.status == "working" and not hasattr(remote, "runner")
            waiter = asyncio.create_task(b.wait_end(remote))
            while not states[1].tasks._waiters:  # the waiter watches the bus, then reads "working"
                await asyncio.sleep(0)
            release.set()
            async with asyncio.timeout(10):
                ended = await waiter
            assert ended.status == "completed"
            assert ended.result == {"content": [{"type": "text", "text": "done"}]}
            assert ended.core_fields() == (await a.find({"taskId": task.id}, session("s1"))).core_fields()
        finally:
            await close(states)

    asyncio.run(go())


def test_a_core_task_is_its_sessions_on_every_process(redis_url):
    async def go() -> None:
        a, b, states = await two(redis_url)
        try:
            task = await a.begin(core=True, owner=session("s1"))
            with pytest.raises(InvalidParams, match="not found"):
                await b.find({"taskId": task.id}, session("s2"))
            assert (await b.find({"taskId": task.id}, session("s1"))).id == task.id
            assert await b.cancel(await b.find({"taskId": task.id}, session("s1"))) is True
            assert not await b.cancel(await b.find({"taskId": task.id}, session("s1")))  # already ended
            async with asyncio.timeout(10):
                await task.done.wait()  # the bus told A
            assert task.status == "cancelled"
        finally:
            await close(states)

    asyncio.run(go())


def test_tasks_list_shows_a_sessions_core_tasks_from_every_process(redis_url):
    async def go() -> None:
        a, b, states = await two(redis_url)
        try:
            first = await a.begin(core=True, owner=session("s1"))
            second = await b.begin(core=True, owner=session("s1"))
            await b.begin(core=True, owner=session("s2"))
            for store in (a, b):
                assert [t.id for t in await store.owned(session("s1"))] == [first.id, second.id]
            first.cancel()
            assert first.writer is not None
            await first.writer
            listed = await b.owned(session("s1"))
            assert [(t.id, t.status) for t in listed] == [(first.id, "cancelled"), (second.id, "working")]
            assert await a.owned(session("nobody")) == []
        finally:
            await close(states)

    asyncio.run(go())


def test_a_waiter_learns_that_the_running_process_died(redis_url):
    async def go() -> None:
        a, b, states = await two(redis_url, lease=0.3)
        try:
            task = await a.begin()
            attach(task, asyncio.get_running_loop().create_task(asyncio.Event().wait()))  # type: ignore[arg-type]
            await states[0].tasks.aclose()  # A stops refreshing its lease, as a dead process would
            remote = await b.find({"taskId": task.id})
            async with asyncio.timeout(10):
                ended = await b.wait_end(remote)
            assert ended.status == "failed" and "died" in (ended.status_message or "")
            assert ended.detailed()["error"]["code"] == -32603
            task.runner.cancel()  # type: ignore[union-attr]
        finally:
            await close(states)

    asyncio.run(go())


def test_the_per_requester_cap_holds_across_processes(redis_url):
    async def go() -> None:
        a, b, states = await two(redis_url, per=2)
        try:
            first = await a.begin(requester="alice")
            await b.begin(requester="alice")
            with pytest.raises(MCPError, match="this caller already has 2 unfinished tasks"):
                await a.begin(requester="alice")
            await b.begin(requester="bob")  # another caller is not counted with alice
            first.cancel()  # a finished task no longer counts, once its record says so
            assert first.writer is not None
            await first.writer
            assert (await b.begin(requester="alice")).status == "working"
            assert len(a) == 1  # the refused one was not kept on A either
        finally:
            await close(states)

    asyncio.run(go())


def test_core_tasks_over_http_keep_working_on_a_redis_backed_server_and_their_records_are_shared(redis_url):
    """2025-11-25 through the mcpio client (a legacy session, the task's elicitation answered
    while tasks/result waits); each record is in Redis with the session it belongs to."""
    import redis

    from mcpio import Client
    from tests.client.test_modern_client import _load
    from tests.conftest import EXAMPLES
    from tests.support.http import ServerThread

    async def go(url: str) -> None:
        async with Client(url, era="legacy", elicitation=lambda params: {"confirm": True}, timeout=10) as c:
            result = await asyncio.wait_for(c.call_tool("purge_table", {"table": "sessions"}), 20)
            assert result == {"content": [{"type": "text", "text": "Purged sessions"}]}
            [listed] = (await c.request("tasks/list"))["tasks"]
            assert listed["status"] == "completed"
            record = watch.hgetall(f"mcpio:task:{listed['taskId']}")
            assert record[b"st"] == b"completed"
            assert list(app.sessions) == [json.loads(record[b"body"])["owner"]]  # the Mcp-Session-Id

    watch = redis.Redis.from_url(redis_url)
    try:
        app = _load(EXAMPLES / "tasks.py").http_app(state=RedisState(redis_url))
        with ServerThread(app) as srv:
            asyncio.run(go(srv.url))
    finally:
        watch.close()


def test_redis_down_is_a_clear_error_and_tasks_go_on_when_it_is_back():
    from tests.support.redis import RedisServer

    own = RedisServer()
    own.start()

    async def go() -> None:
        a, b, states = await two(own.url)
        try:
            task = await a.begin()
            own.stop()
            with pytest.raises(MCPError, match="shared task store is unreachable.*retry it in 2 s") as caught:
                await b.find({"taskId": task.id})
            assert caught.value.code == -32603
            with pytest.raises(MCPError, match="unreachable"):
                await a.begin()
            assert len(a) == 1  # the refused one is not kept
            own.start()  # an empty Redis (no persistence): the task's record is gone with it
            with pytest.raises(InvalidParams, match="not found"):
                await b.find({"taskId": task.id})
            assert (await b.begin()).status == "working"  # service resumes by itself
        finally:
            await close(states)

    try:
        asyncio.run(go())
    finally:
        own.close()


def test_one_session_served_by_two_objects_in_one_process_is_one_owner(redis_url):
    """With shared sessions a session may have several server-side objects (one per process, or a
    replica made again): its core tasks are found by ``Mcp-Session-Id``, and a cancel through
    another object reaches the run (the bus does not echo a process's own messages)."""

    async def go() -> None:
        a, _, states = await two(redis_url)
        try:
            task = await a.begin(core=True, owner=session("s1"))
            attach(task, asyncio.get_running_loop().create_task(asyncio.Event().wait()))  # type: ignore[arg-type]
            again = session("s1")
            found = await a.find({"taskId": task.id}, again)
            assert found is task
            assert [t.id for t in await a.owned(again)] == [task.id]
            with pytest.raises(InvalidParams):
                await a.find({"taskId": task.id}, session("s2"))
            await states[0].tasks.send(states[0].tasks.node, {"op": "cancel", "id": task.id})
            async with asyncio.timeout(10):
                await task.done.wait()
            assert task.status == "cancelled" and task.runner is not None
            await asyncio.sleep(0)
            assert task.runner.cancelled()
        finally:
            await close(states)

    asyncio.run(go())


def test_a_lease_held_by_a_request_that_ends_during_the_beat_is_given_up_at_once(redis_url):
    # A legacy HTTP request in flight holds its process's lease (``hold``); the heartbeat that
    # left saying "held" may come back after the request was answered. That beat kept the lease,
    # so the heartbeat must give it up with one more beat at once, not leave ``tasks:nodes`` in
    # Redis until it expires (a CI failure: an idle database did not go back to zero keys).
    # Redis pauses writes so the beat is in flight, deterministically, when the request ends.
    import redis.asyncio as aredis

    async def blocked_scripts(admin: Any) -> int:
        clients = (await admin.execute_command("CLIENT", "LIST")).decode().splitlines()
        return sum("cmd=evalsha" in line and "flags=b" in line for line in clients)

    async def go() -> None:
        state = RedisState(redis_url, task_lease=30.0)  # a beat every 10 s: only the extra one is in time
        await state.start()
        admin = aredis.Redis.from_url(redis_url)
        try:
            await state.tasks.alive("warm-up")  # a connection is open before the pause
            await admin.execute_command("CLIENT", "PAUSE", "10000", "WRITE")
            try:
                state.tasks.hold("request")
                async with asyncio.timeout(10):
                    while not await blocked_scripts(admin):
                        await asyncio.sleep(0.01)  # until the beat's script waits on the pause
                state.tasks.release("request")  # answered while the beat is in flight
            finally:
                await admin.execute_command("CLIENT", "UNPAUSE")
            beat = state.tasks._beat
            assert beat is not None
            await asyncio.wait_for(beat, 10)  # the heartbeat ended: nothing holds the lease
            assert not await admin.exists("mcpio:tasks:nodes"), "the lease was left in Redis"
        finally:
            await admin.aclose()
            await state.aclose()

    asyncio.run(go())
