"""A proxy (and a gateway) in a server served on two event loops at once (two threads, each
with a loop and clients of its own). The upstream connection is one loop's; a request the other
loop serves runs on that loop, and what the upstream sends back during it (progress, log
messages, elicitation and sampling, its task's states) reaches the caller on its own loop: calls,
concurrent ones included, work from both loops, in both eras of the caller, and once the owner's
serving ends the other loop connects anew."""

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
from tests.gateway.support import proxy_log_says

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]


def in_thread(coro: Callable[[], Any]) -> Any:
    """Run ``coro()`` on a fresh event loop in a thread of its own; its result (or error)."""
    out: dict[str, Any] = {}

    def go() -> None:
        try:
            out["value"] = arun(coro(), 60)
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=go)
    t.start()
    t.join(90)
    assert not t.is_alive(), "the other loop hangs"
    if "error" in out:
        raise out["error"]
    return out["value"]


async def echo(client: Client, name: str, text: str = "x") -> str:
    return (await within(client.call_tool(name, {"text": text}), 20)).text


def make(kind: str, tmp_path: Path) -> tuple[Server, str]:
    """The proxy or gateway to mount under namespace ``up``, and its tools' prefix there."""
    if kind == "proxy":
        return Server.proxy(UPSTREAM, name="up", era="legacy"), "up__"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"u": {"command": UPSTREAM[0], "args": UPSTREAM[1:]}}}))
    return Server.from_config(str(config)), "up__u__"


async def exercised(parent: Server, prefix: str, era: str) -> None:
    """What a client of ``era`` gets through the upstream: concurrent calls, a log message, the
    upstream's elicitation and sampling during a call, progress, a task's states."""
    logs: list[dict] = []
    logged = asyncio.Event()
    asked: list[str] = []

    def on_log(params: dict) -> None:
        logs.append(params)
        logged.set()

    def elicitation(params: dict) -> dict:
        asked.append(params["message"])
        return {"name": "Ada"} if "name" in params["message"] else {"mood": "curious"}

    def sampling(params: dict) -> dict:
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    options: dict[str, Any] = {"elicitation": elicitation, "sampling": sampling, "on_log": on_log}
    async with Client(parent, era=era, timeout=30, **options) as c:
        texts = [f"{era}{i}" for i in range(20)]
        assert await asyncio.gather(*(echo(c, prefix + "echo", t) for t in texts)) == texts
        assert (await within(c.call_tool(prefix + "chatty", {}), 20)).text == "said"
        assert era == "modern" or [m["data"] for m in logs] == ["hello from upstream"]
        interview = await within(c.call_tool(prefix + "interview", {}), 20)
        assert interview.text == "Ada is curious; the model said hi"
        assert asked == ["Your name?", "Your mood?"]
        progressed = asyncio.Event()
        call = asyncio.ensure_future(c.call_tool(prefix + "block", {}, on_progress=lambda *_: progressed.set()))
        await within(progressed.wait(), 20)
        await within(c.call_tool(prefix + "unblock", {}), 20)
        assert (await within(call, 20)).text == "released"
        states: list[str] = []

        def on_task_status(task: dict) -> None:
            if task["status"] == "working" and task.get("statusMessage"):
                states.append(task["statusMessage"])

        staged = await within(c.call_tool(prefix + "staged", {}, on_task_status=on_task_status), 20)
        assert staged.text == "staged"
        # The statuses that come, come in order. Not each of them: one the upstream tells as its
        # task completes may reach this loop after the task's end, when it is a status no more.
        assert states == sorted(set(states)) and set(states) <= {"step 1", "step 2", "step 3"}
        if era == "legacy":  # cancelling a call cancels it upstream (hang logs, then waits until cancelled)
            with proxy_log_says("hang cancelled", threading.Event()) as cancelled:
                logged.clear()
                call = asyncio.ensure_future(c.call_tool(prefix + "hang", {}, timeout=None))
                await within(logged.wait(), 20)  # "hanging": the upstream runs it
                call.cancel()
                assert await asyncio.to_thread(cancelled.wait, 20)


@pytest.mark.parametrize("kind", ["proxy", "gateway"])
def test_a_second_loop_calls_through_the_first_loops_connection(kind, tmp_path):
    parent = Server("main")
    mounted, prefix = make(kind, tmp_path)
    parent.mount(mounted, namespace="up")

    async def other() -> None:
        await exercised(parent, prefix, "legacy")
        await exercised(parent, prefix, "modern")

    async def main() -> None:
        async with Client(parent) as a:
            assert await echo(a, prefix + "echo") == "x"
            pid = (await within(a.call_tool(prefix + "pid", {}), 20)).data
            await asyncio.to_thread(in_thread, other)
            assert await echo(a, prefix + "echo") == "x"  # the owner's connection outlived the other's serving
            assert (await within(a.call_tool(prefix + "pid", {}), 20)).data == pid  # one upstream process

    arun(main(), 90)


@pytest.mark.parametrize("kind", ["proxy", "gateway"])
def test_mounted_from_another_loop_while_both_serve(kind, tmp_path):
    """Mounted from loop B while loop A serves the parent too: both call through it, and A
    still does after B stops serving (whichever loop owned the connection)."""
    parent = Server("main")
    parent.tool(lambda: "hi", name="hello")  # tools announced before the mount
    mounted, prefix = make(kind, tmp_path)

    async def other() -> str:
        async with Client(parent) as b:
            parent.mount(mounted, namespace="up")
            return await echo(b, prefix + "echo", "b")

    async def main() -> None:
        async with Client(parent) as a:
            assert await asyncio.to_thread(in_thread, other) == "b"
            assert await echo(a, prefix + "echo", "a") == "a"

    arun(main(), 90)


def test_the_owner_stopping_ends_the_other_loops_call_with_an_error_then_the_other_connects():
    """Loop A owns the connection; loop B's call is running upstream when A stops serving: B's
    call ends with an error saying the upstream went away (never a hang), and B's next call
    opens a connection of B's own."""
    parent = Server("main")
    parent.mount(Server.proxy(UPSTREAM, name="up", era="legacy"), namespace="up")
    a_serves, a_stop = threading.Event(), threading.Event()

    async def owner() -> None:
        async with Client(parent) as a:
            assert await echo(a, "up__echo", "a") == "a"
            a_serves.set()
            await asyncio.to_thread(a_stop.wait, 60)

    async def main() -> None:
        thread = threading.Thread(target=lambda: arun(owner(), 60), name="loop-a")
        thread.start()
        try:
            await asyncio.to_thread(a_serves.wait, 60)
            hanging = asyncio.Event()
            async with Client(parent, era="legacy", on_log=lambda _: hanging.set()) as b:
                call = asyncio.ensure_future(b.call_tool("up__hang", {}, timeout=None))
                await within(hanging.wait(), 20)  # running upstream, through A's connection
                a_stop.set()
                with pytest.raises(MCPError, match="upstream 'up' went away during the request"):
                    await within(call, 20)
                assert await echo(b, "up__echo", "b") == "b"
        finally:
            a_stop.set()
            await asyncio.to_thread(thread.join, 60)

    arun(main(), 90)


def test_a_sole_client_served_on_the_loop_that_does_not_own_the_upstream_gives_it_its_roots():
    """Loop A (an HTTP app's, on 127.0.0.1) owns the connection to ``roots_upstream.py``: its
    lifespan opened it, and it serves no session (2026-07-28 requests only). Loop B's legacy
    client, declaring roots, is the proxy's sole client: the upstream, which asks ``roots/list``
    outside any call, is told when B is ready and when B's roots change, and gets B's roots
    (asked of B on B's loop), as on one loop."""
    from tests.gateway.support import upstream_learns
    from tests.support.http import ServerThread

    parent = Server("main")
    parent.mount(Server.proxy([sys.executable, str(HERE / "roots_upstream.py")], name="up"), namespace="up")

    async def main(url: str) -> None:
        async with Client(url, era="modern", timeout=30) as a:  # A's connection has started
            assert (await within(a.call_tool("up__roots", {}), 20)).text == "[]"
        changed = asyncio.Event()

        def on(method: str, params: Any) -> None:
            if method == "notifications/tools/list_changed":
                changed.set()

        async with Client(parent, era="legacy", roots=["file:///b"], on_notification=on, timeout=30) as b:
            await upstream_learns(b, changed, "up__roots", ["file:///b"])
            await b.set_roots(["file:///c"])
            await upstream_learns(b, changed, "up__roots", ["file:///c"])

    with ServerThread(parent.http_app()) as served:
        arun(main(served.url), 90)
