"""What a POST costs the ASGI app (issue 17), seen from the ASGI server's side, in process.

A POST answered as plain JSON reads its request and never waits on ``receive()`` again (no
task watches a connection whose answer needs none); the hang-up of a client is still noticed
where it matters: at once for a client that accepts only JSON (nothing bounds its wait), and
for the others when their answer would turn into an event stream (``sse_after``); a modern
request is cancelled then (closing the stream is cancellation, 2026-07-28).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any

from mcpio import Server

HOST = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
BOTH = [(b"accept", b"application/json, text/event-stream")]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


class Client:
    """One POST as uvicorn runs it: the body, then ``receive()`` blocks until the response is
    complete or the client leaves (``leave``), and says ``http.disconnect``."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = json.dumps(body).encode()
        self.receives = 0
        self.left = asyncio.Event()
        self.done = asyncio.Event()
        self.messages: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        self.receives += 1
        if self.receives == 1:
            return {"type": "http.request", "body": self.body, "more_body": False}
        waits = [asyncio.ensure_future(self.left.wait()), asyncio.ensure_future(self.done.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if self.left.is_set():
            return  # dropped, as uvicorn does for a client that has gone
        self.messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.done.set()

    def status(self) -> int:
        return self.messages[0]["status"]

    def header(self, name: bytes) -> bytes | None:
        return dict(self.messages[0]["headers"]).get(name)

    def json(self) -> Any:
        return json.loads(b"".join(m.get("body", b"") for m in self.messages[1:]))


def add_wait_forever(server: Server, started: asyncio.Event, cancelled: asyncio.Event) -> None:
    """Register ``wait_forever``: sets ``started``, waits until cancelled, then sets ``cancelled``."""

    @server.tool
    async def wait_forever() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"


def make_server(started: asyncio.Event, cancelled: asyncio.Event) -> Server:
    server = Server("cost")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    add_wait_forever(server, started, cancelled)
    return server


def call_body(id_: int, name: str, arguments: dict[str, Any], modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def modern_headers(name: str, accept: list[tuple[bytes, bytes]] = BOTH) -> list[tuple[bytes, bytes]]:
    return (
        HOST
        + accept
        + [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", name.encode())]
    )


async def open_legacy_session(app: Any) -> list[tuple[bytes, bytes]]:
    """Initialize a legacy session on ``app`` (initialize, then initialized); its POST headers."""
    init = Client(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
        }
    )
    await app(scope(HOST + BOTH), init.receive, init.send)
    sid = init.header(b"mcp-session-id")
    assert init.status() == 200 and sid
    legacy = HOST + BOTH + [(b"mcp-session-id", sid), (b"mcp-protocol-version", b"2025-11-25")]
    note = Client({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await app(scope(legacy), note.receive, note.send)
    assert note.status() == 202
    return legacy


def test_a_post_answered_as_json_never_waits_on_receive_again() -> None:
    async def go() -> None:
        app = make_server(asyncio.Event(), asyncio.Event()).http_app("/mcp")
        try:
            legacy = await open_legacy_session(app)
            for i, (headers, modern) in enumerate([(legacy, False), (modern_headers("add"), True)] * 3):
                c = Client(call_body(i + 1, "add", {"a": i, "b": 2}, modern))
                await app(scope(headers), c.receive, c.send)
                assert c.status() == 200 and c.header(b"content-type") == b"application/json"
                assert c.json()["result"]["structuredContent"] == {"result": i + 2}
                assert c.receives == 1, f"the app waited on receive() {c.receives - 1} more time(s)"
        finally:
            await app.aclose()

    asyncio.run(go())


def hang_up_cancels(accept: list[tuple[bytes, bytes]], sse_after: float) -> None:
    async def go() -> None:
        started, cancelled = asyncio.Event(), asyncio.Event()
        app = make_server(started, cancelled).http_app("/mcp", sse_after=sse_after)
        try:
            c = Client(call_body(1, "wait_forever", {}, modern=True))
            served = asyncio.ensure_future(app(scope(modern_headers("wait_forever", accept)), c.receive, c.send))
            await asyncio.wait_for(started.wait(), 10)
            c.left.set()  # the client hangs up before any answer
            await asyncio.wait_for(cancelled.wait(), 10)  # a bound against hanging, not a timing check
            await asyncio.wait_for(served, 10)
        finally:
            await app.aclose()

    asyncio.run(go())


def inline_add_server(name: str) -> Server:
    """A server whose one tool, ``add``, is a sync tool run inline (answered at once)."""
    server = Server(name)

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return server


@contextlib.contextmanager
def tasks_created() -> Iterator[list[str]]:
    """The names of the coroutines the running loop makes tasks of, while inside."""
    created: list[str] = []
    loop = asyncio.get_running_loop()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
        created.append(getattr(coro, "__qualname__", "?"))
        return asyncio.Task(coro, loop=loop, **kw)

    loop.set_task_factory(factory)
    try:
        yield created
    finally:
        loop.set_task_factory(None)


def test_a_json_only_client_that_hangs_up_cancels_its_modern_request() -> None:
    # sse_after is an hour: only the watcher started for the unbounded JSON wait can notice.
    hang_up_cancels([(b"accept", b"application/json")], sse_after=3600.0)


def test_a_hang_up_before_the_json_answer_is_noticed_when_the_stream_would_start() -> None:
    hang_up_cancels(BOTH, sse_after=0.05)


def test_a_modern_call_of_an_inline_tool_is_answered_without_a_task() -> None:
    # The server starts such a request at once on the POST's stack (issue 17): no task, no timer.
    # A request that may wait still gets a task of its own, so what it binds to "the current
    # task" (asyncio.timeout) is its own: an expiring timeout cancels the tool, not the POST.
    async def go() -> None:
        server = inline_add_server("eager")

        @server.tool
        async def bounded() -> str:
            """Wait on nothing within a timeout that expires at once."""
            try:
                async with asyncio.timeout(0):
                    await asyncio.Event().wait()
            except TimeoutError:
                return "timed out"
            return "never"

        app = server.http_app("/mcp")
        try:
            warm = Client(call_body(0, "add", {"a": 0, "b": 0}, modern=True))
            await app(scope(modern_headers("add")), warm.receive, warm.send)  # the app has started
            with tasks_created() as created:
                for i in range(3):
                    c = Client(call_body(i + 1, "add", {"a": i, "b": 40}, modern=True))
                    await app(scope(modern_headers("add")), c.receive, c.send)
                    assert c.status() == 200 and c.json()["result"]["structuredContent"] == {"result": i + 40}
                assert created == [], created
                c = Client(call_body(9, "bounded", {}, modern=True))
                await app(scope(modern_headers("bounded")), c.receive, c.send)
                assert c.status() == 200 and c.json()["result"]["content"][0]["text"] == "timed out"
                assert len(created) == 1, created
        finally:
            await app.aclose()

    asyncio.run(go())


def test_a_legacy_call_of_an_inline_tool_runs_on_the_sessions_reader_without_a_task() -> None:
    # The session starts it on its reader's stack (Session eager, issue 17): the in-memory
    # event store awaits nothing bound to a task, so the legacy transport allows it.
    async def go() -> None:
        server = inline_add_server("eager-legacy")
        app = server.http_app("/mcp")
        try:
            legacy = await open_legacy_session(app)
            with tasks_created() as created:
                for i in range(3):
                    c = Client(call_body(i + 1, "add", {"a": i, "b": 40}, modern=False))
                    await app(scope(legacy), c.receive, c.send)
                    assert c.status() == 200 and c.json()["result"]["structuredContent"] == {"result": i + 40}
                assert created == [], created
        finally:
            await app.aclose()

    asyncio.run(go())
