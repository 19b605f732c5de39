"""Utilities: logging, progress, cancellation, pagination, lifespan (spec: basic/utilities,
server/utilities)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest

from mcpio import Client, Context, Server
from tests.server.peer import LEGACY, Peer, arun, since, within


# ---------------------------------------------------------------------------- logging
def logging_server() -> Server:
    server = Server("logs")

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info({"step": 1})
        await ctx.log("notice", "n", logger="db")
        await ctx.warning("w")
        await ctx.error("e", logger="db")
        return "done"

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_log_messages_follow_the_level_the_client_set(version):
    async def go():
        async with Peer(logging_server(), version=version) as peer:
            assert peer.init_result["capabilities"]["logging"] == {}
            await peer.call_tool("chatty")
            assert [m["level"] for m in peer.notifications("notifications/message")] == [
                "debug",
                "info",
                "notice",
                "warning",
                "error",
            ]
            assert peer.notifications("notifications/message")[1] == {"level": "info", "data": {"step": 1}}
            assert peer.notifications("notifications/message")[2] == {"level": "notice", "data": "n", "logger": "db"}

            assert await peer.call("logging/setLevel", {"level": "warning"}) == {}
            start = len(peer.received)
            await peer.call_tool("chatty")
            later = [m["params"]["level"] for m in peer.received[start:] if m.get("method") == "notifications/message"]
            assert later == ["warning", "error"]

    arun(go())


def test_invalid_log_level_is_invalid_params():
    async def go():
        async with Peer(logging_server()) as peer:
            resp = await peer.request("logging/setLevel", {"level": "verbose"}, check=False)
            assert resp["error"]["code"] == -32602 and "verbose" in resp["error"]["message"]

    arun(go())


# ---------------------------------------------------------------------------- progress
def progress_server() -> Server:
    server = Server("progress")

    @server.tool
    async def work(ctx: Context) -> str:
        await ctx.report_progress(1, 10, "one")
        await ctx.report_progress(1, 10, "again")  # not an increase: dropped
        await ctx.report_progress(0.5)  # a decrease: dropped
        await ctx.report_progress(2.5, 10, "two and a half")
        await ctx.report_progress(10, 10)
        return "done"

    return server


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("token", ["tok-1", 7])
def test_progress_is_monotonic_and_carries_message_from_2025_03_26(version, token):
    async def go():
        async with Peer(progress_server(), version=version) as peer:
            await peer.call_tool("work", _meta={"progressToken": token})
            got = peer.notifications("notifications/progress")
            assert [p["progress"] for p in got] == [1, 2.5, 10]
            assert all(p["progressToken"] == token and p["total"] == 10 for p in got)
            if since(version, "2025-03-26"):
                assert [p.get("message") for p in got] == ["one", "two and a half", None]
            else:
                assert not any("message" in p for p in got)

    arun(go())


def test_no_progress_without_a_token():
    async def go():
        async with Peer(progress_server()) as peer:
            await peer.call_tool("work")
            assert peer.notifications("notifications/progress") == []

    arun(go())


# ---------------------------------------------------------------------------- cancellation
@pytest.mark.parametrize("version", LEGACY)
def test_cancelled_request_stops_its_handler_and_gets_no_response(version):
    server = Server("cancel")
    started = asyncio.Event()
    saw_cancel = asyncio.Event()

    @server.tool
    async def forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            saw_cancel.set()
            raise
        return "unreachable"

    async def go():
        async with Peer(server, version=version) as peer:
            id_, fut = await peer.start("tools/call", {"name": "forever", "arguments": {}})
            await within(started.wait())
            await peer.notify("notifications/cancelled", {"requestId": id_, "reason": "the user pressed stop"})
            await within(saw_cancel.wait())
            await peer.barrier()  # the ping is answered ...
        # ... and after the server drained and closed, nothing ever answered the cancelled id
        assert not fut.done()
        assert not [m for m in peer.received if m.get("id") == id_]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_a_handler_running_on_after_its_cancellation_sends_no_progress(version):
    """Spec basic/utilities/progress: progress references only operations in progress. A handler
    that outlives its cancelled request (a shielded continuation) reports to nobody; its log
    message still goes out (logging is the connection's, not the request's)."""
    server = Server("late")
    started, release, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @server.tool
    async def linger(ctx: Context) -> str:
        await ctx.report_progress(1)
        started.set()

        async def rest() -> str:
            await release.wait()
            await ctx.report_progress(2)
            await ctx.info("late")
            finished.set()
            return "done"

        return await asyncio.shield(asyncio.ensure_future(rest()))

    async def go():
        async with Peer(server, version=version) as peer:
            id_, _ = await peer.start("tools/call", {"name": "linger", "arguments": {}, "_meta": {"progressToken": 9}})
            await within(started.wait())
            await peer.notify("notifications/cancelled", {"requestId": id_})
            await peer.barrier()  # the cancellation is read
            release.set()
            await within(finished.wait())
            await peer.notification("notifications/message")
            assert [p["progress"] for p in peer.notifications("notifications/progress")] == [1]

    arun(go())


def test_a_sync_tool_sees_ctx_cancelled_in_its_thread_and_stops():
    """A worker thread cannot be stopped from outside: ctx.cancelled lets a long loop stop itself."""
    server = Server("cancel-sync")
    started, stopped = threading.Event(), threading.Event()

    @server.tool
    def crunch(ctx: Context) -> str:
        started.set()
        deadline = time.monotonic() + 10
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.002)  # a unit of work
        if ctx.cancelled:
            stopped.set()
        return "done"

    async def go():
        async with Peer(server) as peer:
            id_, fut = await peer.start("tools/call", {"name": "crunch", "arguments": {}})
            await within(asyncio.to_thread(started.wait, 5))
            await peer.notify("notifications/cancelled", {"requestId": id_})
            assert await within(asyncio.to_thread(stopped.wait, 5))
            await peer.barrier()
            assert not fut.done()

    arun(go())


# ---------------------------------------------------------------------------- pagination
def paged_server() -> Server:
    server = Server("paged", page_size=2)
    for i in range(5):
        server.add_tool(lambda i=i: i, name=f"tool{i}")
        server.add_resource(lambda i=i: str(i), f"file:///r{i}.txt", name=f"r{i}")
        server.add_prompt(lambda i=i: str(i), name=f"prompt{i}")

        def tmpl(x: str, i=i) -> str:
            return x

        server.add_resource(tmpl, f"t{i}://{{x}}", name=f"t{i}")
    return server


@pytest.mark.parametrize("version", LEGACY)
def test_following_next_cursor_yields_every_item_once(version):
    async def go():
        async with Peer(paged_server(), version=version) as peer:
            page = await peer.call("tools/list")
            assert len(page["tools"]) == 2 and "nextCursor" in page
            for method, key, field, prefix in [
                ("tools/list", "tools", "name", "tool"),
                ("resources/list", "resources", "name", "r"),
                ("resources/templates/list", "resourceTemplates", "name", "t"),
                ("prompts/list", "prompts", "name", "prompt"),
            ]:
                items = await peer.list_all(method, key)
                assert [it[field] for it in items] == [f"{prefix}{i}" for i in range(5)], method

    arun(go())


def test_invalid_cursor_is_invalid_params():
    async def go():
        async with Peer(paged_server()) as peer:
            for cursor in ["garbage", "", "bWNwaW86dG9vbHM6LTE"]:  # the last is "mcpio:tools:-1"
                err = await peer.error("tools/list", {"cursor": cursor})
                assert err["code"] == -32602
            tools_cursor = (await peer.call("tools/list"))["nextCursor"]
            err = await peer.error("prompts/list", {"cursor": tools_cursor})
            assert err["code"] == -32602

    arun(go())


# ---------------------------------------------------------------------------- lifespan
def test_lifespan_value_reaches_handlers_entered_once_and_exited_at_the_end():
    events = []

    @contextlib.asynccontextmanager
    async def lifespan(server):
        events.append("enter")
        try:
            yield {"db": "connection-1"}
        finally:
            events.append("exit")

    server = Server("life", lifespan=lifespan)

    @server.tool
    def which_db(ctx: Context) -> str:  # a sync tool: ctx crosses to the worker thread
        return ctx.lifespan["db"]

    @server.tool
    async def which_db_async(ctx: Context) -> str:
        return ctx.lifespan["db"]

    async def go():
        async with Peer(server) as peer:
            for name in ["which_db", "which_db_async", "which_db"]:
                assert (await peer.call_tool(name))["content"][0]["text"] == "connection-1"
            assert events == ["enter"]
            assert server.lifespan_value == {"db": "connection-1"}  # what ctx.lifespan reads
        assert events == ["enter", "exit"]
        assert server.lifespan_value is None

    arun(go())


def test_connections_served_at_once_share_one_lifespan_until_the_last_one_leaves():
    """Two in-memory clients of one server: the lifespan is entered by the first, still held for
    the second after the first leaves, exited when the last leaves (in the task that entered it:
    a task group in the lifespan closes cleanly), and entered anew by a later connection."""
    events = []

    @contextlib.asynccontextmanager
    async def lifespan(server):
        events.append("enter")
        async with asyncio.TaskGroup() as group:  # bound to the task that enters it
            group.create_task(asyncio.sleep(0))
            try:
                yield {"db": f"connection-{events.count('enter')}"}
            finally:
                events.append("exit")

    server = Server("life", lifespan=lifespan)

    @server.tool
    async def which_db(ctx: Context) -> str:
        return ctx.lifespan["db"]

    async def go():
        async with contextlib.AsyncExitStack() as first_only:
            first = await first_only.enter_async_context(Client(server))
            async with Client(server) as second:
                assert (await first.call_tool("which_db")).text == "connection-1"
                await first_only.aclose()  # the first leaves; the second still uses the lifespan
                assert events == ["enter"]
                assert (await second.call_tool("which_db")).text == "connection-1"
            assert events == ["enter", "exit"]
        async with Client(server) as third:
            assert (await third.call_tool("which_db")).text == "connection-2"
        assert events == ["enter", "exit", "enter", "exit"]
        assert server.lifespan_value is None

    arun(go())


def test_a_lifespan_still_starting_when_its_last_user_is_cancelled_is_cancelled_too():
    """A serving cancelled (SIGTERM, a closed connection) while the lifespan starts stops the
    start at once, as it did before the lifespan was shared: nothing waits for it to finish
    starting only to exit it."""
    events = []
    starting = asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server):
        events.append("starting")
        starting.set()
        try:
            await asyncio.Event().wait()  # a start that never ends (an upstream that never answers)
        except asyncio.CancelledError:
            events.append("start cancelled")
            raise
        yield

    server = Server("life", lifespan=lifespan)

    async def serving():
        async with server.running():
            events.append("served")  # never

    async def go():
        task = asyncio.ensure_future(serving())
        await starting.wait()
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=10)  # (waiting on it must not cancel it again)
        assert done and task.cancelled(), "the cancelled serving waited for the start to end"
        assert events == ["starting", "start cancelled"]

    arun(go())


def test_one_server_served_on_two_event_loops_at_once_holds_a_lifespan_on_each():
    """Two threads, each with its event loop and an in-memory client of the same server (two
    ServerThreads of one module-level server do this): each loop holds the lifespan of its own,
    and its handlers read what their own loop's lifespan yielded (``ctx.lifespan``, from an async
    tool and from a sync one in a worker thread); one leaving ends only its own, and a third
    connection later enters it again."""
    events = []

    @contextlib.asynccontextmanager
    async def lifespan(server):
        events.append("enter")
        try:
            yield f"db-{events.count('enter')}"
        finally:
            events.append("exit")

    server = Server("life", lifespan=lifespan)

    @server.tool
    async def ping(ctx: Context) -> str:
        return f"pong from {ctx.lifespan}"

    @server.tool(inline=False)
    def ping_in_a_thread(ctx: Context) -> str:
        return f"pong from {ctx.lifespan}"

    async def pings(client: Client) -> set[str]:
        return {(await client.call_tool(name)).text for name in ("ping", "ping_in_a_thread")}

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    async def first():
        async with Client(server) as client:
            assert await pings(client) == {"pong from db-1"}
            first_in.set()
            assert await asyncio.to_thread(second_in.wait, 20)
            assert await pings(client) == {"pong from db-1"}  # not the other loop's, entered since
        first_out.set()

    async def second():
        assert await asyncio.to_thread(first_in.wait, 20)
        async with Client(server) as client:
            assert await pings(client) == {"pong from db-2"}
            second_in.set()
            assert await asyncio.to_thread(first_out.wait, 20)
            assert await pings(client) == {"pong from db-2"}  # the other loop's end is not ours

    failures = []

    def run(coro_fn):
        try:
            arun(coro_fn())
        except BaseException as exc:  # reported below, from the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(fn,)) for fn in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    assert events == ["enter", "enter", "exit", "exit"]

    async def third():
        async with Client(server) as client:
            return await pings(client)

    assert arun(third()) == {"pong from db-3"}
    assert events == ["enter", "enter", "exit", "exit", "enter", "exit"]


def test_one_server_served_on_two_event_loops_at_once_tells_each_loops_clients_and_keeps_its_tasks():
    """Two threads, each with its event loop and a client of the same server: a tool added from a
    third thread reaches both clients (``list_changed``); the second loop's client leaving (its
    lifespan there ends) does not end the task the first loop's client started; and the first
    loop's client still hears of changes once the second loop is closed."""
    server = Server("two loops")
    started, release = threading.Event(), threading.Event()

    @server.tool(task_support="optional")
    async def slow() -> str:
        started.set()
        await asyncio.to_thread(release.wait, 20)
        return "done"

    first_in, second_in, second_out = threading.Event(), threading.Event(), threading.Event()

    def listener():
        heard: list[str] = []
        arrived = asyncio.Event()

        def on_notification(method, params):
            heard.append(method)
            arrived.set()

        async def changes(count: int) -> None:
            while heard.count("notifications/tools/list_changed") < count:
                arrived.clear()
                await within(arrived.wait())

        return on_notification, changes

    async def first():
        on_notification, changes = listener()
        async with Client(server, era="legacy", on_notification=on_notification) as client:
            call = asyncio.ensure_future(client.call_tool("slow", task=True))
            assert await asyncio.to_thread(started.wait, 20)
            first_in.set()
            await changes(1)
            assert await asyncio.to_thread(second_out.wait, 20)
            release.set()  # the task runs on after the other loop's lifespan ended
            assert (await within(call)).text == "done"
            server.add_tool(lambda: "later", name="later")  # the other loop is closed by now
            await changes(2)

    async def second():
        assert await asyncio.to_thread(first_in.wait, 20)
        on_notification, changes = listener()
        async with Client(server, era="legacy", on_notification=on_notification):
            second_in.set()
            await changes(1)

    failures = []

    def run(coro_fn, then=None):
        try:
            arun(coro_fn())
        except BaseException as exc:  # reported below, from the test's thread
            failures.append(exc)
        finally:
            if then is not None:
                then.set()

    threads = [threading.Thread(target=run, args=args) for args in ((first,), (second, second_out))]
    for t in threads:
        t.start()
    assert second_in.wait(20), failures
    server.add_tool(lambda: "new", name="new")  # from neither loop's thread
    for t in threads:
        t.join(60)
    assert not failures, failures


def test_a_lifespan_that_fails_to_start_fails_each_waiting_connection_and_is_tried_again():
    starts = []

    @contextlib.asynccontextmanager
    async def lifespan(server):
        starts.append(1)
        await asyncio.sleep(0)  # both connections wait on this start
        if len(starts) == 1:
            raise RuntimeError("database unreachable")
        yield "up"

    server = Server("life", lifespan=lifespan)

    @server.tool
    async def state(ctx: Context) -> str:
        return ctx.lifespan

    async def connect() -> str:
        async with Client(server) as client:
            return (await client.call_tool("state")).text

    async def go():
        failed = await asyncio.gather(connect(), connect(), return_exceptions=True)
        assert all("the server stopped: RuntimeError: database unreachable" in str(e) for e in failed), failed
        assert len(starts) == 1
        assert await connect() == "up"
        assert len(starts) == 2

    arun(go())
