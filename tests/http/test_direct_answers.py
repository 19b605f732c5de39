"""A 2026-07-28 ``tools/call`` of a tool that cannot wait is answered without a Session
(``_server/_direct``, issue 17), and its answer is byte for byte the one a session gives.

Each request below goes to two apps of the same server: one as users get it (the direct
answer applies) and one with a pass-through middleware, which keeps every request on the
session (``answers_at_once`` is false under middleware). The two HTTP answers must be equal:
status, content type and JSON body — results, isError results, the size cap, the era's
``_meta``, and every error object (admission of ``_meta``, arguments, the tool's own errors,
unexpected exceptions with and without ``expose_errors``).

And a legacy session's request is served on its POST's own task when nothing is queued ahead
of it (``Session.feed``), and queued, in order, when the session is busy; one the connection
admits from memory and an inline tool answers is answered without the engine's bookkeeping
(``Session.answer_at_once``), with the same answers as a session behind a middleware gives.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from mcpio import Server, ToolResult
from tests.support.differential_tools import add_differential_tools

from .test_http_cost import BOTH, HOST, MODERN_META, Client, scope

PROTOCOL = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LEVEL = "io.modelcontextprotocol/logLevel"


def build(*, expose_errors: bool | None = None, via_session: bool) -> Server:
    server = Server("direct", expose_errors=expose_errors)
    add_differential_tools(server)

    if via_session:

        @server.middleware
        async def passthrough(request: Any, call_next: Any) -> Any:
            return await call_next(request)

    return server


def request(params: dict[str, Any], id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def call(name: str, arguments: Any, meta: Any = MODERN_META, id_: Any = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return request(params, id_)


CASES = {
    "result": call("add", {"a": 2, "b": 40}),
    "string id": call("add", {"a": 1, "b": 1}, id_="req-7"),
    "string result": call("echo", {"text": "héllo"}),
    "arguments wrong": call("add", {"a": "two", "b": 40}),
    "arguments missing": call("add", {"a": 1}),
    "arguments not an object": call("add", [1, 2]),
    "no arguments": request({"name": "add", "_meta": MODERN_META}),
    "result over the cap": call("big", {"n": 500}),
    "ToolError": call("fails", {"kind": "tool"}),
    "MCPError": call("fails", {"kind": "protocol"}),
    "unexpected exception": call("fails", {"kind": "bug"}),
    "result breaks the output schema": call("wrong_type", {}),
    "unknown tool": call("nope", {}),
    "no clientCapabilities": call("add", {"a": 1, "b": 2}, meta={PROTOCOL: "2026-07-28"}),
    "clientCapabilities not an object": call("add", {"a": 1, "b": 2}, meta={PROTOCOL: "2026-07-28", CAPS: []}),
    "bad log level": call("add", {"a": 1, "b": 2}, meta={**MODERN_META, LEVEL: "loud"}),
    "a log level": call("add", {"a": 1, "b": 2}, meta={**MODERN_META, LEVEL: "debug"}),
    "a progress token": call("add", {"a": 1, "b": 2}, meta={**MODERN_META, "progressToken": "p1"}),
    "an MRTR retry": request({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META, "requestState": "x"}),
}


# What the client accepts: the direct answer is sent as the whole JSON response when it may be,
# else on an event stream (a client that accepts only SSE), as the session's answer is.
ACCEPTS = {"both": BOTH, "json": [(b"accept", b"application/json")], "sse": [(b"accept", b"text/event-stream")]}


def headers_for(body: dict[str, Any], accept: list[tuple[bytes, bytes]] = BOTH) -> list[tuple[bytes, bytes]]:
    name = str(body["params"].get("name", ""))
    return (
        HOST
        + accept
        + [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", name.encode())]
    )


async def answer(app: Any, body: dict[str, Any], accept: list[tuple[bytes, bytes]]) -> tuple[int, bytes | None, Any]:
    c = Client(body)
    await app(scope(headers_for(body, accept)), c.receive, c.send)
    ctype = c.header(b"content-type")
    if ctype == b"text/event-stream":  # the answer is the stream's one event (a session's stream
        # opens with a comment first: its answer comes after the response has started)
        raw = b"".join(m.get("body", b"") for m in c.messages[1:])
        data = [line[5:] for line in raw.split(b"\n") if line.startswith(b"data:")]
        assert len(data) == 1, raw
        return c.status(), ctype, json.loads(data[0])
    return c.status(), ctype, c.json()


def answers(
    expose_errors: bool | None, bodies: list[dict[str, Any]], accept: list[tuple[bytes, bytes]] = BOTH
) -> tuple[list[Any], list[Any], list[int]]:
    """The answers of the direct app and of the session app, and how many sessions the direct
    app built for each request."""

    async def go() -> tuple[list[Any], list[Any], list[int]]:
        direct_server = build(expose_errors=expose_errors, via_session=False)
        built: list[int] = []
        session = direct_server.session

        def counting(*args: Any, **kwargs: Any) -> Any:  # a spy: the real method runs
            built[-1] += 1
            return session(*args, **kwargs)

        direct_server.session = counting  # type: ignore[method-assign]
        direct = direct_server.http_app("/mcp")
        viaSession = build(expose_errors=expose_errors, via_session=True).http_app("/mcp")
        out_direct, out_session = [], []
        try:
            for body in bodies:
                built.append(0)
                out_direct.append(await answer(direct, body, accept))
                out_session.append(await answer(viaSession, body, accept))
        finally:
            await direct.aclose()
            await viaSession.aclose()
        return out_direct, out_session, built

    return asyncio.run(go())


@pytest.mark.parametrize("accept", list(ACCEPTS))
@pytest.mark.parametrize("expose_errors", [None, True], ids=["default", "expose_errors"])
def test_the_direct_answer_is_the_sessions_answer(expose_errors: bool | None, accept: str, caplog: Any) -> None:
    names = list(CASES)
    with caplog.at_level(logging.ERROR, logger="mcpio"):
        direct, via_session, built = answers(expose_errors, [CASES[n] for n in names], ACCEPTS[accept])
    for name, d, s in zip(names, direct, via_session, strict=True):
        assert d == s, f"{name}: direct {d} != session {s}"
    sse = accept == "sse"
    assert {d[1] for d in direct} == {b"text/event-stream" if sse else b"application/json"}
    # The case list is not vacuous: it has results, isError results and JSON-RPC errors.
    bodies = dict(zip(names, (d[2] for d in direct), strict=True))
    assert bodies["result"]["result"]["structuredContent"] == {"result": 42}
    assert "max_result_bytes" in str(bodies["result over the cap"]["result"]["content"])
    assert bodies["ToolError"]["result"]["isError"] is True
    assert bodies["MCPError"]["error"]["code"] == -32602
    assert bodies["bad log level"]["error"]["code"] == -32602
    assert bodies["no clientCapabilities"]["error"]["code"] == -32602
    unexpected = bodies["unexpected exception"]["result"]["content"][0]["text"]
    assert ("secret detail" in unexpected) is (expose_errors is True)
    # What the direct answer serves, it serves without a session; the rest goes to one.
    sessions = dict(zip(names, built, strict=True))
    on_session = {"unknown tool", "a progress token", "an MRTR retry"}
    assert {n for n, count in sessions.items() if count} == on_session, sessions
    # The unexpected exception was logged by both apps, with its traceback.
    logged = [r for r in caplog.records if "tool fails raised" in r.getMessage()]
    assert len(logged) == 2 and all(r.exc_info for r in logged)


def test_telemetry_keeps_the_request_on_the_session() -> None:
    pytest.importorskip("opentelemetry", reason="the otel extra")
    server = Server("direct-otel", telemetry=True)

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    from mcpio._server import _http

    assert not _http.direct(server, CASES["result"])
    assert _http.direct(build(via_session=False), CASES["result"])


async def legacy_session_feeds(app: Any, server: Server) -> tuple[list[tuple[bytes, bytes]], Any, list[Any]]:
    """A legacy session opened on ``app`` (of ``server``), once its reader waits: its POST headers,
    its Session, and the ids of the requests fed to it from then on (``Session.feed``, spied on)."""
    from .test_http_cost import open_legacy_session

    headers = await open_legacy_session(app)
    (session,) = [s for s in server._sessions if not s.closed]
    fed: list[Any] = []
    feed = session.feed

    def counting(message: Any) -> Any:  # a spy: the real method runs
        fed.append(message["id"])
        return feed(message)

    session.feed = counting  # type: ignore[method-assign]
    while not session.reading():  # notifications/initialized went through the queue
        await asyncio.sleep(0)
    return headers, session, fed


def test_a_legacy_sessions_requests_are_served_on_their_posts_tasks_in_order() -> None:
    # A legacy POST's one request is served on the POST's own task when the session's reader
    # waits on an empty queue (Session.feed: no queue hop, issue 17); when the session is busy
    # (here: max_in_flight=1 and a request holds it), the next ones queue, and are served in the
    # order they came once there is room.
    from .test_http_cost import call_body

    async def go() -> None:
        server = Server("fed", max_in_flight=1)
        order: list[str] = []
        release = asyncio.Event()

        @server.tool
        async def hold() -> str:
            """Hold the session's one slot until released."""
            order.append("hold")
            await release.wait()
            return "held"

        @server.tool(inline=True)
        def mark(tag: str) -> str:
            """Record ``tag``."""
            order.append(tag)
            return tag

        app = server.http_app("/mcp")
        try:
            legacy, session, fed = await legacy_session_feeds(app, server)
            for i in range(3):
                c = Client(call_body(i + 1, "mark", {"tag": f"fed-{i}"}, modern=False))
                await app(scope(legacy), c.receive, c.send)
                assert c.json()["result"]["content"][0]["text"] == f"fed-{i}"
            assert fed == [1]  # the first fed; the others answered at once (admitted from memory)
            held = Client(call_body(10, "hold", {}, modern=False))
            posts = [asyncio.ensure_future(app(scope(legacy), held.receive, held.send))]
            while "hold" not in order:
                await asyncio.sleep(0)  # until the slot is taken (no timing: a loop turn at a time)
            queued = [Client(call_body(11 + i, "mark", {"tag": f"queued-{i}"}, modern=False)) for i in range(3)]
            for c in queued:
                posts.append(asyncio.ensure_future(app(scope(legacy), c.receive, c.send)))
                for _ in range(5):
                    await asyncio.sleep(0)
            assert order == ["fed-0", "fed-1", "fed-2", "hold"], order  # nothing ran past the held slot
            release.set()
            await asyncio.wait_for(asyncio.gather(*posts), 10)
            assert order == ["fed-0", "fed-1", "fed-2", "hold", "queued-0", "queued-1", "queued-2"], order
            assert fed == [1, 10], fed  # the slot was free for "hold"; the queued ones were queued
            assert [c.json()["result"]["content"][0]["text"] for c in queued] == ["queued-0", "queued-1", "queued-2"]
        finally:
            await app.aclose()

    asyncio.run(go())


def legacy(case: dict[str, Any], id_: int) -> dict[str, Any]:
    """``case`` as a legacy session's request: without the modern ``_meta`` (other ``_meta`` kept)."""
    params = {k: v for k, v in case["params"].items() if k != "_meta"}
    meta = {k: v for k, v in case["params"].get("_meta", {}).items() if not k.startswith("io.modelcontextprotocol/")}
    if meta:
        params["_meta"] = meta
    return request(params, id_)


@pytest.mark.parametrize("expose_errors", [None, True], ids=["default", "expose_errors"])
def test_a_legacy_request_answered_at_once_is_the_sessions_answer(expose_errors: bool | None, caplog: Any) -> None:

    names = [n for n in CASES if "log level" not in n and "clientCapabilities" not in n]  # modern _meta only
    bodies = [legacy(CASES[n], 100 + i) for i, n in enumerate(names)]

    async def answers(app: Any, server: Server) -> tuple[list[Any], list[Any]]:
        headers, _, fed = await legacy_session_feeds(app, server)
        out = []
        for body in [request({"name": "add", "arguments": {"a": 0, "b": 0}}, 99), *bodies]:
            c = Client(body)
            await app(scope(headers), c.receive, c.send)
            out.append((c.status(), c.header(b"content-type"), c.json()))
        return out, fed

    async def go() -> None:
        direct_server = build(expose_errors=expose_errors, via_session=False)
        session_server = build(expose_errors=expose_errors, via_session=True)
        direct, session = direct_server.http_app("/mcp"), session_server.http_app("/mcp")
        try:
            with caplog.at_level(logging.ERROR, logger="mcpio"):
                got, fed = await answers(direct, direct_server)
                want, _ = await answers(session, session_server)
        finally:
            await direct.aclose()
            await session.aclose()
        for name, d, w in zip(["warm-up", *names], got, want, strict=True):
            assert d == w, f"{name}: answered at once {d} != session {w}"
        by_name = dict(zip(names, (g[2] for g in got[1:]), strict=True))
        assert by_name["result"]["result"]["structuredContent"] == {"result": 42}
        assert by_name["ToolError"]["result"]["isError"] is True
        assert by_name["MCPError"]["error"]["code"] == -32602
        assert by_name["unknown tool"]["error"]["code"] == -32602
        unexpected = by_name["unexpected exception"]["result"]["content"][0]["text"]
        assert ("secret detail" in unexpected) is (expose_errors is True)
        # The first call went through the engine (fed, or queued behind notifications/initialized;
        # it admits tools/call to memory); after it, only what answer_at_once does not take: an
        # unknown tool, a _meta (progress token), an MRTR retry.
        on_session = {"unknown tool", "a progress token", "an MRTR retry"}
        assert [i for i in fed if i != 99] == [100 + i for i, n in enumerate(names) if n in on_session], fed
        logged = [r for r in caplog.records if "tool fails raised" in r.getMessage()]
        assert len(logged) == 2 and all(r.exc_info for r in logged)

    asyncio.run(go())


def test_a_request_id_in_flight_is_refused_not_answered_at_once() -> None:
    # A request whose id is still in flight in the session is refused (JSON-RPC ids are unique
    # among a peer's unanswered requests), never answered at once beside it.
    from .test_http_cost import call_body, open_legacy_session

    async def go() -> None:
        server = Server("in-flight")
        release = asyncio.Event()
        started = asyncio.Event()

        @server.tool
        async def hold() -> str:
            """Wait until released."""
            started.set()
            await release.wait()
            return "held"

        add_differential_tools(server)
        app = server.http_app("/mcp")
        try:
            headers = await open_legacy_session(app)
            warm = Client(call_body(1, "add", {"a": 1, "b": 1}, modern=False))
            await app(scope(headers), warm.receive, warm.send)
            held = Client(call_body(7, "hold", {}, modern=False))
            post = asyncio.ensure_future(app(scope(headers), held.receive, held.send))
            await started.wait()
            dup = Client(call_body(7, "add", {"a": 1, "b": 2}, modern=False))
            await app(scope(headers), dup.receive, dup.send)
            assert dup.status() == 400 and "already in flight" in dup.json()["error"]["message"]
            release.set()
            await asyncio.wait_for(post, 10)
            assert "held" in str(b"".join(m.get("body", b"") for m in held.messages))
            again = Client(call_body(7, "add", {"a": 1, "b": 2}, modern=False))  # answered: the id is free
            await app(scope(headers), again.receive, again.send)
            assert again.json()["result"]["structuredContent"] == {"result": 3}
        finally:
            await app.aclose()

    asyncio.run(go())


def test_a_result_that_cannot_be_encoded_is_answered_as_the_handlers_fault(caplog: Any) -> None:
    # Answered at once, a result the JSON encoder refuses (here a _meta value that is no JSON)
    # is answered -32603, logged with its traceback, rather than left without an answer.
    async def go() -> None:
        server = Server("unencodable")

        @server.tool(inline=True)
        def odd() -> ToolResult:
            """A result whose _meta holds an object JSON cannot carry."""
            return ToolResult(content="x", meta={"k": object()})

        add_differential_tools(server)
        app = server.http_app("/mcp")
        try:
            headers, _, fed = await legacy_session_feeds(app, server)
            for body in (request({"name": "add", "arguments": {"a": 1, "b": 1}}, 1), request({"name": "odd"}, 2)):
                c = Client(body)
                await app(scope(headers), c.receive, c.send)
            assert 2 not in fed  # answered at once
            assert c.status() == 200 and c.json()["error"]["code"] == -32603
        finally:
            await app.aclose()

    with caplog.at_level(logging.ERROR, logger="mcpio"):
        asyncio.run(go())
    assert any("handler for tools/call failed" in r.getMessage() and r.exc_info for r in caplog.records)
