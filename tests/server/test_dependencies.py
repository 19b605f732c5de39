"""Dependencies (``mcpio.Depends``) on the wire: over stdio (a real subprocess) and Streamable
HTTP (real uvicorn on 127.0.0.1), in both eras, with the mcpio Client. Providers write what
they do to a file ($DEPS_LOG), so cleanup after an error and after a cancellation is seen from
outside the server, not by looking at its internals."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpio import Client, Context, Depends, RequestTimeout, Server
from tests.server.peer import arun

SERVER = Path(__file__).resolve().parents[1] / "servers" / "deps_server.py"
ROUTES = [("stdio", "legacy"), ("stdio", "modern"), ("http", "legacy"), ("http", "modern")]


@pytest.fixture(params=ROUTES, ids=lambda r: f"{r[0]}-{r[1]}")
def route(request: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, Path]]:
    """(client target, era, provider log): the deps server over one transport."""
    log = tmp_path / "deps.log"
    log.write_text("")
    monkeypatch.setenv("DEPS_LOG", str(log))
    transport, era = request.param
    if transport == "stdio":
        yield [sys.executable, str(SERVER)], era, log
        return
    from tests.support.http import ServerThread

    with ServerThread(_load(SERVER).http_app()) as srv:
        yield srv.url, era, log


def _load(path: Path) -> Server:
    """The ``server`` of the file at ``path``, imported as a module of its own (in sys.modules:
    its dataclasses resolve their annotations there)."""
    import importlib.util

    name = f"loaded_{path.stem}_{id(path)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.server  # type: ignore[no-any-return]


def answer(account: str) -> Any:
    return lambda params: {"action": "accept", "content": {"account": account}}


@contextlib.asynccontextmanager
async def client(target: Any, era: str, **options: Any) -> AsyncIterator[Client]:
    async with Client(target, era=era, env=dict(os.environ), **options) as c:
        yield c


async def until(log: Path, line: str, timeout: float = 10.0) -> list[str]:
    """The provider log once it has ``line`` (written by the server process)."""
    async with asyncio.timeout(timeout):
        while line not in log.read_text().splitlines():
            await asyncio.sleep(0.02)
    return log.read_text().splitlines()


def test_dependencies_are_resolved_per_call_and_hidden_from_the_schema(route: Any) -> None:
    target, era, log = route

    async def go() -> None:
        async with client(target, era) as c:
            tools = {t.name: t for t in await c.list_tools()}
            assert tools["lookup"].input_schema["properties"].keys() == {"key"}
            assert tools["fail"].input_schema["properties"] == {}
            result = await c.call_tool("lookup", {"key": "k"})
            assert result.content[0].text == "k from db(memory://) (memory://)"
            lines = log.read_text().splitlines()
            # settings ran once although both lookup and get_db depend on it; the db was closed
            assert lines[0] == "settings" and lines[1].startswith("open db") and lines[2].startswith("close db")
            assert len(lines) == 3
            assert (await c.call_tool("pool", {})).content[0].text == "the pool"  # deps.lifespan
            assert (await c.call_tool("plain", {"a": 1})).data == 2
            contents = await c.read_resource("deps://item/x")
            assert contents[0].text == "x in db(memory://)"
            prompt = await c.get_prompt("greet", {"who": "you"})
            assert prompt.messages[0].content.text == "hello you (cache)"

    arun(go())


def test_a_failing_tool_closes_its_dependencies(route: Any) -> None:
    target, era, log = route

    async def go() -> None:
        async with client(target, era) as c:
            result = await c.call_tool("fail", {})
            assert result.is_error and "failed with db(memory://) and cache" in result.content[0].text
            lines = await until(log, "close cache")
            assert "db saw ToolError" in lines and any(x.startswith("close db") for x in lines)
            # closed in reverse order of opening: the cache (opened last) first
            assert lines.index("close cache") < lines.index("db saw ToolError")

    arun(go())


def test_a_cancelled_call_closes_its_dependencies(route: Any) -> None:
    target, era, log = route

    async def go() -> None:
        async with client(target, era) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("hang", {}, timeout=0.5)  # the client gives up: notifications/cancelled
            lines = await until(log, "db saw CancelledError")
            assert "hanging" in lines
            await until(log, next(x for x in lines if x.startswith("open db")).replace("open", "close"))
            assert (await c.call_tool("plain", {"a": 41})).data == 42  # the server goes on

    arun(go())


def test_a_provider_may_ask_the_user(route: Any) -> None:
    """ctx.elicit in a provider: a request to the client (legacy) or an input_required round (2026-07-28)."""
    target, era, _ = route

    async def go() -> None:
        async with client(target, era, elicitation=answer("savings")) as c:
            assert (await c.call_tool("account", {})).content[0].text == "using savings"

    arun(go())


def test_middleware_fills_the_request_state_the_handler_reads(route: Any) -> None:
    """ctx.state: one dict for the whole request (middleware, provider, tool), fresh per request."""
    target, era, _ = route

    async def go() -> None:
        async with client(target, era, name="acme") as c:
            for _ in range(2):
                text = (await c.call_tool("tenant", {})).content[0].text
                assert text == "acme (request 1), state keys ['requests', 'tenant']"

    arun(go())


def test_typed_elicitation_asks_a_form_made_from_the_type_and_converts_the_answer(route: Any) -> None:
    target, era, _ = route
    asked: list[dict[str, Any]] = []

    def user(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["requestedSchema"])
        if "value" in params["requestedSchema"]["properties"]:
            return {"action": "accept", "content": {"value": "large"}}
        return {"action": "accept", "content": {"name": "Ada", "seats": "2"}}  # "2": converted, lax

    async def go() -> None:
        async with client(target, era, elicitation=user) as c:
            text = (await c.call_tool("book", {})).content[0].text
            assert text == "2 seats for Ada (vip=False) in the large room"
        assert asked[0] == {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "seats": {"type": "integer"},
                "vip": {"type": "boolean", "default": False},
            },
            "required": ["name", "seats"],
        }
        assert asked[-1]["properties"]["value"] == {"type": "string", "enum": ["small", "large"]}
        async with client(target, era, elicitation=lambda p: {"action": "decline"}) as c:
            assert (await c.call_tool("book", {})).content[0].text == "not booked (decline)"
        async with client(target, era, elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}}) as c:
            bad = await c.call_tool("book", {})
            assert (
                bad.is_error
                and "does not fit the requested form" in bad.content[0].text
                and "seats" in bad.content[0].text
            )

    arun(go())


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("tool", ["book", "account"])
def test_an_elicitation_answer_with_an_action_outside_the_protocol_is_the_clients_error(era: str, tool: str) -> None:
    # ElicitResult.action is "accept", "decline" or "cancel" (schema): a client answering anything
    # else broke the protocol, and a raw client over stdio answers "maybe". Legacy era: the call is
    # an isError naming the client's fault, the handler never sees a made-up action (typed and
    # untyped alike). 2026-07-28: the answer is malformed input, asked for again (MRTR).
    import json

    from tests.support.stdio_peer import StdioPeer

    wrong = {"action": "maybe"}
    with StdioPeer.spawn([sys.executable, str(SERVER)]) as peer:
        caps = {"elicitation": {"form": {}}}
        if era == "legacy":
            peer.initialize("2025-11-25", capabilities=caps)
            call = peer.request_msg("tools/call", {"name": tool, "arguments": {}})
            peer.send(call)
            ask = peer.wait_for(lambda m: m.get("method") == "elicitation/create")
            peer.send_raw(json.dumps({"jsonrpc": "2.0", "id": ask["id"], "result": wrong}).encode() + b"\n")
            result = peer.response(call["id"])["result"]
            assert result.get("isError") is True, result
            text = result["content"][0]["text"]
            assert "'maybe'" in text and "accept, decline or cancel" in text, text
            return
        peer.modern(capabilities=caps)
        first = peer.call("tools/call", {"name": tool, "arguments": {}})
        assert first["resultType"] == "input_required", first
        (key,) = first["inputRequests"]
        params = {"name": tool, "arguments": {}, "inputResponses": {key: wrong}, "requestState": first["requestState"]}
        retry = peer.request_msg("tools/call", params)
        peer.send_raw(json.dumps(retry).encode() + b"\n")
        again = peer.response(retry["id"])["result"]
        assert again["resultType"] == "input_required" and again["inputRequests"] == first["inputRequests"], again


@dataclasses.dataclass
class Inner:
    x: int


@dataclasses.dataclass
class Nested:
    inner: Inner


def test_typed_elicitation_refuses_types_a_form_cannot_hold() -> None:
    from mcpio._server._elicit import form

    with pytest.raises(TypeError, match=r"property 'inner' .* is not one elicitation can ask for"):
        form(Nested)
    with pytest.raises(TypeError, match=r"property 'value' .* is not one elicitation can ask for"):
        form(list[int])
    assert form(["low", "high"]).schema["properties"]["value"]["enum"] == ["low", "high"]


def test_ctx_http_shows_the_current_http_request_with_credentials_redacted(route: Any) -> None:
    target, era, _ = route
    if isinstance(target, str):
        target += "?region=eu"

    async def go() -> None:
        for tenant in ("t1", "t2"):  # each request its own, never the one that opened the session
            headers = {"X-Tenant": tenant, "Authorization": "Bearer not-checked-here"}
            options = {"headers": headers} if isinstance(target, str) else {}
            async with client(target, era, **options) as c:
                for _ in range(2):
                    data = (await c.call_tool("http_info", {})).data
                    if not isinstance(target, str):
                        assert data == {"http": None}  # stdio
                        return
                    printed = data.pop("printed")
                    assert "not-checked-here" not in printed
                    assert data.pop("session") == ("[redacted]" if era == "legacy" else None)
                    assert data.pop("session_sent") is (era == "legacy")
                    assert data == {
                        "method": "POST",
                        "path": "/mcp",
                        "query": {"region": "eu"},
                        "tenant": tenant,
                        "authorization": "[redacted]",
                        "secret": "Bearer not-checked-here",
                        "client": "127.0.0.1",
                        "middleware": tenant,
                    }

    arun(go())


def test_a_task_sees_the_http_request_that_started_it(route: Any) -> None:
    target, era, _ = route
    if not isinstance(target, str) or era != "legacy":
        pytest.skip("core tasks (2025-11-25) over HTTP: the request that started the task")

    async def go() -> None:
        async with client(target, era, headers={"X-Tenant": "t9"}) as c:
            created = await c.request("tools/call", {"name": "task_tenant", "arguments": {}, "task": {}})
            task_id = created["task"]["taskId"]
            result = await c.request("tasks/result", {"taskId": task_id})
            assert result["content"][0]["text"] == "task=True tenant=t9"

    arun(go())


def test_the_http_view_is_a_read_only_case_insensitive_mapping() -> None:
    from mcpio._server._http_view import REDACTED, HttpRequest

    view = HttpRequest(
        {
            "method": "POST",
            "path": "/mcp",
            "query_string": b"a=1&a=2&b=",
            "headers": [(b"x-a", b"1"), (b"x-a", b"2"), (b"cookie", b"sid=s"), (b"proxy-authorization", b"p")],
            "client": ("10.0.0.1", 5000),
        }
    )
    assert view.headers["X-A"] == "1, 2" and "x-a" in view.headers and len(view.headers) == 3
    assert view.headers["Cookie"] == REDACTED and view.headers.get("proxy-authorization") == REDACTED
    assert REDACTED in repr(view.headers) and "sid=s" not in repr(view.headers)
    assert view.secret_header("COOKIE") == "sid=s" and view.secret_header("absent") is None
    assert view.query == {"a": "1", "b": ""} and view.client == ("10.0.0.1", 5000)
    with pytest.raises(TypeError):
        view.headers["x-a"] = "3"  # type: ignore[index]


# ---- in memory: overrides, the graph's rules, registration errors ----------------------------------


def test_override_replaces_a_provider_and_undo_restores_it() -> None:
    from tests.servers import deps_server as mod

    server = mod.server

    async def go() -> None:
        async with Client(server) as c:
            handle = server.override(mod.get_db, lambda: "fake db")
            assert (await c.call_tool("lookup", {"key": "k"})).content[0].text == "k from fake db (memory://)"
            handle.undo()
            assert (await c.call_tool("lookup", {"key": "k"})).content[0].text == "k from db(memory://) (memory://)"
            with server.override(mod.settings, lambda: {"dsn": "test://"}):
                assert "db(test://) (test://)" in (await c.call_tool("lookup", {"key": "k"})).content[0].text
            assert "db(memory://)" in (await c.call_tool("lookup", {"key": "k"})).content[0].text

    arun(go())


def test_bad_providers_are_refused_at_registration() -> None:
    server = Server("bad")

    def needs_arg(x: int) -> int:
        return x

    with pytest.raises(TypeError, match=r"provider .*needs_arg\(\): parameter 'x' is neither a Context nor a Depends"):

        @server.tool
        def t(v: int = Depends(needs_arg)) -> int:
            return v

    def a(v: int = Depends(lambda: 0)) -> int:
        return v

    def b(v: int = Depends(a)) -> int:
        return v

    a.__defaults__ = (Depends(b),)  # a -> b -> a
    with pytest.raises(TypeError, match="dependency cycle"):

        @server.tool
        def u(v: int = Depends(a)) -> int:
            return v

    with pytest.raises(TypeError, match="callable provider"):
        Depends(3)  # type: ignore[arg-type]


def test_a_provider_gets_the_context_and_a_class_context_manager_is_closed() -> None:
    server = Server("ctx")
    events: list[str] = []

    class Conn:
        def __init__(self, ctx: Context) -> None:
            self.version = ctx.protocol_version

        async def __aenter__(self) -> str:
            events.append("enter")
            return f"conn for {self.version}"

        async def __aexit__(self, *exc: object) -> None:
            events.append("exit")

    @server.tool
    async def use(conn: str = Depends(Conn)) -> str:
        return conn

    async def go() -> None:
        async with Client(server, era="legacy") as c:
            assert (await c.call_tool("use", {})).content[0].text.startswith("conn for 20")
        assert events == ["enter", "exit"]

    arun(go())


# ---- per-tool timeouts ---------------------------------------------------------------------------

TIMEOUTS = Path(__file__).resolve().parents[1] / "servers" / "timeout_server.py"


@pytest.fixture(params=ROUTES, ids=lambda r: f"{r[0]}-{r[1]}")
def timed(request: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, Path]]:
    log = tmp_path / "timeouts.log"
    log.write_text("")
    monkeypatch.setenv("DEPS_LOG", str(log))
    transport, era = request.param
    if transport == "stdio":
        yield [sys.executable, str(TIMEOUTS)], era, log
        return
    from tests.support.http import ServerThread

    with ServerThread(_load(TIMEOUTS).http_app()) as srv:
        yield srv.url, era, log


def test_a_tool_past_its_timeout_is_stopped_and_answered_with_an_error(timed: Any) -> None:
    target, era, log = timed

    async def go() -> None:
        async with client(target, era) as c:
            # more timed-out calls than the server's max_in_flight (2): each frees its slot
            for _ in range(3):
                result = await c.call_tool("wait_forever", {})
                assert result.is_error
                text = result.content[0].text
                assert "tool wait_forever" in text and "time limit of 0.2 s" in text
            await until(log, "async cancelled")
            result = await c.call_tool("crunch", {})  # the server's default, 0.4 s
            assert result.is_error and "tool crunch" in result.content[0].text and "0.4 s" in result.content[0].text
            await until(log, "sync saw cancelled")
            own = await c.call_tool("own_timeout", {})
            assert own.is_error and "time limit" not in own.content[0].text
            assert (await c.call_tool("quick", {"a": 1})).data == 2

    arun(go())


def test_a_timed_out_sync_tool_keeps_its_dependencies_until_its_thread_ends(timed: Any) -> None:
    """A sync tool's thread cannot be stopped: past its timeout the call is answered at once, but
    what its providers gave it (a pooled connection) is closed only once the thread is done with
    it, never under it (the next call would be handed a connection still in use)."""
    target, era, log = timed

    async def go() -> None:
        async with client(target, era) as c:
            result = await c.call_tool("query", {})
            assert result.is_error and "time limit of 0.2 s" in result.content[0].text
            assert (await c.call_tool("proceed", {})).content[0].text == "proceeding"
            lines = await until(log, "connection returned")
            assert lines == ["query used its own connection", "connection returned"]

    arun(go())


def test_timeouts_are_checked_at_registration() -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="timeout must be seconds > 0"):
        server.tool(lambda: 1, name="a", timeout=0)
    with pytest.raises(ValueError, match="inline=True cannot be combined with timeout"):
        server.tool(lambda: 1, name="b", timeout=1, inline=True)
    with pytest.raises(ValueError, match="timeout must be seconds > 0"):
        Server("t", tool_timeout=-1)
    # the server's default leaves alone a tool that runs on the event loop on purpose
    assert Server("t", tool_timeout=5).add_tool(lambda: 1, name="c", inline=True).timeout is None
