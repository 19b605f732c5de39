"""A proxied call with nothing to carry but itself is relayed: written upstream on the stack that
read it and answered on the stack that read the upstream's answer, no task of its own
(``_gateway._forwarded``). These tests drive such calls (a client of either era, no
heartbeat, no task) through ``Server.proxy`` over a real upstream process, and check that they
end as an awaited call ends: in the same answers, errors, logs, cancellation and death of the
upstream; and that what the upstream asks during one reaches that call's client (a 2026-07-28
client's as ``input_required`` rounds of its call)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpio import Client, MCPError, Server
from tests.client.support import arun, within
from tests.gateway.support import proxy_log_says
from tests.support.http import ServerThread, mcpio_http

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]
AWAITED = {"progressToken": "awaited"}  # with a heartbeat (below): the call goes through the engine instead
ERAS = pytest.mark.parametrize("era", ["legacy", "modern"])  # the client's: 2025-11-25, 2026-07-28


def proxy_for(era: str) -> Server:
    """The proxy over ``upstream.py`` for a client of ``era``. A 2026-07-28 client's call of a tool
    the proxy may run as a task is awaited (``called_plainly``), and ``upstream.py`` has task tools:
    its 2026-07-28 side would announce the tasks extension, so the proxy speaks 2025-11-25 to it,
    whose tools without ``execution.taskSupport`` are never tasks."""
    return Server.proxy(UPSTREAM, name="up", era="legacy" if era == "modern" else "auto")


def client_era(era: str) -> str:
    """``"modern, awaited"``: a 2026-07-28 client whose calls :func:`proxy_for` awaits."""
    return era.split(",")[0]


async def relayed_call(c: Client, name: str, **arguments: object) -> str:
    """Call ``name`` as a raw request (``Client.call_tool`` sends a progress token: not relayed);
    its text."""
    result = await c.request("tools/call", {"name": name, "arguments": arguments})
    return str(result["content"][0]["text"]) if result["content"] else ""


@ERAS
def test_relayed_and_awaited_calls_give_the_same_answers_and_errors(era):
    proxy = proxy_for(era)
    proxy.heartbeat = 3600  # a call with a progress token beats (Tool.call): it is awaited

    async def both(c: Client, arguments: dict) -> list:
        out = []
        for meta in ({}, AWAITED):
            try:
                out.append(
                    await c.request(
                        "tools/call",
                        {"name": "fail" if "code" in arguments else "echo", "arguments": arguments, "_meta": meta},
                    )
                )
            except MCPError as exc:
                out.append((exc.code, exc.message, exc.data))
        return out

    async def go():
        async with Client(proxy, era=era, timeout=30) as c:
            relayed, awaited = await both(c, {"text": "hi"})
            assert relayed == awaited
            assert relayed["content"] == [{"type": "text", "text": "hi"}]
            relayed, awaited = await both(c, {"code": 1})  # a ToolError: an isError result
            assert relayed == awaited
            assert relayed["isError"] is True and "failed on purpose" in relayed["content"][0]["text"]
            relayed, awaited = await both(c, {"code": -32001})  # the upstream's JSON-RPC error, as it came
            assert relayed == awaited == (-32001, "refused on purpose", {"why": "asked"})
            relayed, awaited = await both(c, {"text": "hi", "typo": 1})  # refused upstream: -32602
            assert relayed == awaited
            assert relayed[0] == -32602

    arun(go(), timeout=60)


@ERAS
def test_many_relayed_calls_in_flight_are_each_answered_and_a_slow_one_holds_none_up(era):
    proxy = proxy_for(era)

    async def go():
        async with Client(proxy, era=era, timeout=30) as c:
            slow = asyncio.ensure_future(relayed_call(c, "block"))
            texts = [f"t{i}" for i in range(64)]
            assert await asyncio.gather(*(relayed_call(c, "echo", text=t) for t in texts)) == texts
            assert not slow.done()
            await relayed_call(c, "unblock")
            assert await within(slow) == "released"

    arun(go(), timeout=60)


@pytest.mark.parametrize("era", ["legacy", "modern", "modern, awaited"])
def test_a_relayed_call_gets_the_upstream_log_and_its_cancellation_reaches_the_upstream(era):
    proxy = proxy_for(era)
    logs: list[dict] = []
    hanging = asyncio.Event()

    def on_log(params: dict) -> None:
        logs.append(params)
        hanging.set()

    async def go():
        with proxy_log_says("hang cancelled", asyncio.Event()) as cancelled:
            async with Client(proxy, era=client_era(era), timeout=30, on_log=on_log, log_level="info") as c:
                call = asyncio.ensure_future(relayed_call(c, "hang"))
                await within(hanging.wait())
                assert logs[0]["data"] == "hanging"
                call.cancel()  # the client sends notifications/cancelled to the proxy
                with pytest.raises(asyncio.CancelledError):
                    await call
                await within(cancelled.wait())  # the proxy cancelled the upstream request
                assert await relayed_call(c, "echo", text="after") == "after"

    arun(go(), timeout=60)


@ERAS
def test_an_upstream_killed_during_a_relayed_call_ends_it_with_an_error_and_is_started_again(era):
    proxy = proxy_for(era)
    hanging = asyncio.Event()

    async def go():
        async with Client(proxy, era=era, timeout=30, on_log=lambda params: hanging.set(), log_level="info") as c:
            first = int(await relayed_call(c, "pid"))
            call = asyncio.ensure_future(relayed_call(c, "hang"))
            await within(hanging.wait())
            os.kill(first, signal.SIGKILL)
            with pytest.raises(MCPError, match="went away during the request"):
                await within(call)
            assert int(await relayed_call(c, "pid")) != first

    arun(go(), timeout=60)


@ERAS
def test_what_the_upstream_asks_during_a_relayed_call_reaches_its_client(era):
    proxy = proxy_for(era)
    asked: list[str] = []

    def elicitation(params: dict) -> dict:
        asked.append(params["message"])
        return {"name": "Ada"} if "name" in params["message"] else {"mood": "fine"}

    async def go():
        async with Client(proxy, era=era, timeout=30, elicitation=elicitation, sampling=sample) as c:
            # A legacy client: the upstream (2026-07-28 to the proxy) asks in input_required
            # rounds, and the client is asked with requests. A 2026-07-28 client: the upstream
            # (2025-11-25 to the proxy) asks with requests, and the client is asked in rounds of
            # its call. Either way in order, and the call ends with their answers.
            assert await relayed_call(c, "interview") == "Ada is fine; the model said hi"
            assert asked == ["Your name?", "Your mood?"]

    arun(go(), timeout=60)


def sample(params: dict) -> dict:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test"}


@pytest.mark.parametrize("upstream", ["stdio-modern", "http-legacy"])
def test_what_the_upstream_asks_during_concurrent_relayed_calls_goes_to_the_client_of_each_call(upstream):
    """Two clients of one proxy (over HTTP) call ``ask_name``, which the upstream answers only
    once both calls are in flight, asking each call's client its name: a 2026-07-28 upstream
    on stdio in input_required rounds, a legacy one over HTTP with a request on the SSE stream
    of the POST carrying the call. (A legacy stdio upstream's requests carry no link to their
    call: docs/guides/gateways.md, limits.)"""

    async def one(url: str, name: str, asked: list[str]) -> str:
        def elicitation(params: dict) -> dict:
            asked.append(params["message"])
            return {"name": name}

        async with Client(url, era="legacy", elicitation=elicitation, timeout=30) as c:
            return await relayed_call(c, "ask_name")

    def check(proxy: Server) -> None:
        with ServerThread(proxy.http_app()) as served:

            async def go():
                asked_ada: list[str] = []
                asked_bob: list[str] = []
                both = await asyncio.gather(one(served.url, "Ada", asked_ada), one(served.url, "Bob", asked_bob))
                assert both == ["hello Ada", "hello Bob"]
                assert asked_ada == asked_bob == ["Your name?"]

            arun(go(), timeout=60)

    if upstream == "stdio-modern":
        check(Server.proxy(UPSTREAM, name="up", era="modern"))
    else:
        with mcpio_http(str(HERE / "upstream.py")) as (upstream_url, _):
            check(Server.proxy(upstream_url, name="up", era="legacy"))


def test_a_relayed_call_refused_for_a_stale_header_listing_is_called_again_after_listing_the_tools():
    """A 2026-07-28 upstream over HTTP starts wanting ``echo``'s ``text`` in an ``Mcp-Param-Text``
    header without telling (no list_changed): the relayed call is refused (-32020), and, as
    ``Client.call_tool`` does, the proxy lists the tools again and calls once more."""
    with mcpio_http(str(HERE / "upstream.py")) as (upstream_url, _):
        proxy = Server.proxy(upstream_url, name="up", era="modern")

        async def go():
            async with Client(proxy, era="legacy", timeout=30) as c:
                assert await relayed_call(c, "echo", text="before") == "before"
                assert await relayed_call(c, "header_text", tool="echo") == "ok"
                assert await relayed_call(c, "echo", text="after") == "after"

        arun(go(), timeout=60)


def legacy_session(http: httpx.Client, url: str) -> dict[str, str]:
    """A legacy session opened on ``url`` with raw requests (no GET stream): its request headers."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    opened = http.post(url, headers=accept, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def sse_data(lines: Iterator[str]) -> Iterator[dict]:
    """The messages of an SSE stream's ``data:`` lines, as they come."""
    for line in lines:
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def test_what_the_upstream_says_during_a_call_goes_on_that_call_s_own_stream():
    """A legacy HTTP client that opens no GET stream still gets the log message its upstream
    sends during its call: on the SSE stream of the POST carrying the call, though the proxy
    forwards it from a task of the upstream's, not the call's (Context relates what it sends)."""
    proxy = Server.proxy(UPSTREAM, name="up")
    with ServerThread(proxy.http_app()) as served, httpx.Client(timeout=30) as http:
        headers = legacy_session(http, served.url)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}}
        answered = http.post(served.url, headers=headers, json=call)
        assert answered.headers["content-type"].startswith("text/event-stream"), answered.text
        events = list(sse_data(iter(answered.text.splitlines())))
        said = [e["params"]["data"] for e in events if e.get("method") == "notifications/message"]
        assert said == ["hello from upstream"], events
        assert events[-1]["result"]["content"][0]["text"] == "said"


def test_the_upstream_s_progress_for_a_relayed_call_reaches_its_client_under_the_client_s_token():
    """A legacy HTTP client's call with a progress token is relayed, the token sent upstream
    with it: the upstream's progress comes to the client on the SSE stream of the POST carrying
    the call, under the client's own token, while the call runs; then its answer."""
    proxy = Server.proxy(UPSTREAM, name="up")
    with ServerThread(proxy.http_app()) as served, httpx.Client(timeout=30) as http:
        headers = legacy_session(http, served.url)
        params = {"name": "block", "arguments": {}, "_meta": {"progressToken": "mine"}}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        with http.stream("POST", served.url, headers=headers, json=call) as answered:
            events = sse_data(answered.iter_lines())
            assert next(events) == {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "mine", "progress": 1, "total": 2, "message": "waiting"},
            }
            unblock = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "unblock", "arguments": {}},
            }
            assert http.post(served.url, headers=headers, json=unblock).status_code == 200
            last = next(events)
            assert last["id"] == 2 and last["result"]["content"][0]["text"] == "released", last


@pytest.mark.parametrize("over", ["stdio", "stdio, 2026-07-28 client", "http", "http, heartbeats on"])
def test_a_proxy_keeps_nothing_of_the_calls_it_forwards(over):
    """A long-running proxy or bridge (``mcpio run URL``) forwards calls for ever: what it
    allocated for one is freed when the call is answered, so its memory does not grow with the
    calls. Half of them carry a progress token: relayed too, its callback going with the call;
    with heartbeats on, awaited through the engine. A 2026-07-28 client's are relayed as well
    (the flight of input_required rounds is made only when the upstream asks). Over HTTP, each
    relayed call's context was once kept for the answer's stream: ~600 bytes."""
    import gc
    import tracemalloc

    with contextlib.ExitStack() as stack:
        if over.startswith("http"):
            upstream_url, _ = stack.enter_context(mcpio_http(str(HERE / "upstream.py")))
            proxy = Server.proxy(upstream_url, name="up", era="legacy")
        else:
            proxy = proxy_for("modern" if "2026" in over else "legacy")
        if over.endswith("heartbeats on"):
            proxy.heartbeat = 3600  # a call with a progress token is awaited (Tool.call beats)

        async def with_token(c: Client, text: str) -> str:
            return (await c.call_tool("echo", {"text": text})).text

        async def calls(c: Client, n: int) -> None:
            for start in range(0, n, 50):
                texts = [f"t{i}" for i in range(start, start + 50)]
                sent = (relayed_call(c, "echo", text=t) if i % 2 else with_token(c, t) for i, t in enumerate(texts))
                assert await asyncio.gather(*sent) == texts

        async def go() -> tuple[int, int]:
            async with Client(proxy, era="modern" if "2026" in over else "legacy", timeout=30) as c:
                await calls(c, 200)  # warm: caches, the connection pool
                tracemalloc.start()
                try:
                    await calls(c, 200)  # what stays from the last calls is in both figures
                    gc.collect()
                    before = tracemalloc.get_traced_memory()[0]
                    await calls(c, 1000)
                    gc.collect()
                    return before, tracemalloc.get_traced_memory()[0]
                finally:
                    tracemalloc.stop()

        before, after = arun(go(), timeout=120)
        assert after - before < 50 * 1000, f"{(after - before) / 1000:.0f} bytes kept per call"
