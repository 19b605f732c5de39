"""The Client API in memory (``Client(server)``): errors, timeouts, cancellation, handlers, lists."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from mcpio import (
    Client,
    Context,
    InvalidParams,
    MCPError,
    MethodNotFound,
    MissingRequiredClientCapability,
    RemoteProtocolError,
    RequestTimeout,
    ResourceNotFound,
    Server,
)
from mcpio._client import _era
from mcpio._client._target import UnsupportedTarget
from mcpio._jsonrpc import decode, encode
from mcpio._transports._memory import memory_pair
from tests.client.support import RAW, arun, within


def make_server(events: dict[str, asyncio.Event] | None = None) -> Server:
    server = Server("api", version="3.0.0", instructions="for the client tests")
    ev = events if events is not None else {}

    @server.tool
    async def wait(seconds: float, ctx: Context) -> str:
        """Sleep (the work a slow tool does), reporting nothing."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            ev.setdefault("cancelled", asyncio.Event()).set()
            raise
        return "done"

    @server.tool
    async def steady(steps: int, every: float, ctx: Context) -> str:
        """Work for steps × every seconds, reporting progress after each step."""
        for i in range(steps):
            await asyncio.sleep(every)
            await ctx.report_progress(i + 1, steps)
        return "finished"

    @server.tool
    async def form(ctx: Context) -> dict:
        """Ask the user for a form and return what came back."""
        return await ctx.elicit(
            "Your details",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "colour": {"type": "string", "default": "blue"},
                    "lucky": {"type": "integer", "default": 7},
                },
                "required": ["name"],
            },
        )

    @server.tool
    async def think(ctx: Context) -> str:
        r = await ctx.sample("think")
        return f"{r['model']}: {r['content']['text']}"

    @server.tool
    async def roots(ctx: Context) -> list:
        return await ctx.list_roots()

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.warning({"disk": "low"}, logger="storage")
        return "ok"

    @server.on_notification("notifications/roots/list_changed")
    async def roots_changed(ctx: Context, params: dict) -> None:
        ev.setdefault("roots_changed", asyncio.Event()).set()

    @server.resource("data://{key}")
    def data(key: str) -> str:
        if key == "missing":
            from mcpio import ResourceNotFound as RNF

            raise RNF(f"data://{key}")
        return key.upper()

    return server


def test_server_errors_are_typed_with_code_message_and_data():
    async def go():
        async with Client(make_server()) as c:
            with pytest.raises(InvalidParams) as info:
                await c.call_tool("nope", {})
            assert info.value.code == -32602 and "nope" in info.value.message
            with pytest.raises(ResourceNotFound) as info:
                await c.read_resource("data://missing")
            # raised by the template's function: the era's not-found code (issue 34)
            not_found = -32002 if c.negotiated_era == "legacy" else -32602
            assert info.value.code == not_found and info.value.data == {"uri": "data://missing"}
            assert info.value.uri == "data://missing"
            assert isinstance(info.value, MCPError)
            # No prompts registered: the capability is absent, so the client does not even ask.
            assert await c.list_prompts() == []
            with pytest.raises(MethodNotFound, match="did not announce the 'prompts' capability"):
                await c.get_prompt("x")
            with pytest.raises(MethodNotFound) as info:  # a raw request is sent as is
                await c.request("prompts/get", {"name": "x"})
            assert info.value.code == -32601
            assert (await c.read_resource("data://abc"))[0]["text"] == "ABC"

    arun(go())


def test_a_timeout_cancels_the_request_on_the_server():
    events: dict[str, asyncio.Event] = {"cancelled": asyncio.Event()}

    async def go():
        events["cancelled"] = asyncio.Event()
        async with Client(make_server(events)) as c:
            with pytest.raises(RequestTimeout, match="no answer and no progress for 0.2 s"):
                await c.call_tool("wait", {"seconds": 30}, timeout=0.2)
            await within(events["cancelled"].wait(), 5)  # notifications/cancelled reached the tool
            assert (await c.call_tool("wait", {"seconds": 0}))["content"][0]["text"] == "done"

    arun(go())


def test_cancelling_the_caller_cancels_the_request_on_the_server():
    events: dict[str, asyncio.Event] = {}

    async def go():
        events["cancelled"] = asyncio.Event()
        async with Client(make_server(events)) as c:
            task = asyncio.ensure_future(c.call_tool("wait", {"seconds": 30}))
            await asyncio.sleep(0)  # let it send
            while not c.session._pending:
                await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await within(events["cancelled"].wait(), 5)

    arun(go())


def test_progress_restarts_the_timeout_up_to_the_cap():
    async def go():
        async with Client(make_server()) as c:
            seen: list[tuple] = []
            # 8 steps of 0.1 s = 0.8 s in all, but never 0.3 s without progress: it finishes.
            r = await c.call_tool(
                "steady",
                {"steps": 8, "every": 0.1},
                timeout=0.3,
                max_timeout=10,
                on_progress=lambda p, t, m: seen.append((p, t)),
            )
            assert r["content"][0]["text"] == "finished"
            assert seen == [(i, 8) for i in range(1, 9)]
            # The same call with a cap of 0.45 s stops at the cap despite the progress.
            with pytest.raises(RequestTimeout, match="reached its maximum of 0.45 s"):
                await c.call_tool("steady", {"steps": 8, "every": 0.1}, timeout=0.3, max_timeout=0.45)
            # Without resets (max_timeout=None) the plain timeout applies.
            with pytest.raises(RequestTimeout, match="got no answer within 0.3 s"):
                await c.call_tool("steady", {"steps": 8, "every": 0.1}, timeout=0.3, max_timeout=None)

    arun(go())


def test_async_progress_callbacks_run():
    async def go():
        got = asyncio.Event()

        async def on_progress(p, t, m):
            if p == t:
                got.set()

        async with Client(make_server()) as c:
            await c.call_tool("steady", {"steps": 2, "every": 0}, on_progress=on_progress)
            await within(got.wait(), 5)

    arun(go())


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"name": "Ada"}, {"action": "accept", "content": {"name": "Ada", "colour": "blue", "lucky": 7}}),
        (
            {"action": "accept", "content": {"name": "Bo", "lucky": 3}},
            {"action": "accept", "content": {"name": "Bo", "colour": "blue", "lucky": 3}},
        ),
        (None, {"action": "decline"}),
        ({"action": "cancel"}, {"action": "cancel"}),
    ],
)
def test_elicitation_answers_are_normalised_and_defaults_filled(answer, expected):
    asked: list[dict] = []

    async def elicitation(params):
        asked.append(params)
        return answer

    async def go():
        async with Client(make_server(), elicitation=elicitation) as c:
            r = await c.call_tool("form")
            assert r["structuredContent"] == expected
        assert asked[0]["message"] == "Your details"

    arun(go())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_sampling_handler_may_return_just_text_and_declares_the_capability(era):
    async def go():
        async with Client(make_server(), sampling=lambda params: "a thought", era=era) as c:
            r = await c.call_tool("think")
            assert r["content"][0]["text"] == "unknown: a thought"
        async with Client(make_server(), era=era) as c:  # no handler, no capability
            if era == "legacy":  # the tool reports it as its result
                r = await c.call_tool("think")
                assert r["isError"] and "sampling" in r["content"][0]["text"]
            else:  # 2026-07-28: -32021 with data.requiredCapabilities, typed
                with pytest.raises(MissingRequiredClientCapability) as info:
                    await c.call_tool("think")
                assert info.value.code == -32021 and info.value.required_capabilities == {"sampling": {}}
                assert "sampling" in info.value.message

    arun(go())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_roots_are_normalised_and_changes_are_announced(tmp_path, era):
    events: dict[str, asyncio.Event] = {}

    async def go():
        events["roots_changed"] = asyncio.Event()
        async with Client(make_server(events), roots=[tmp_path, "file:///srv/data"], era=era) as c:
            r = await c.call_tool("roots")
            assert r["structuredContent"]["result"] == [
                {"uri": tmp_path.resolve().as_uri(), "name": tmp_path.name},
                {"uri": "file:///srv/data", "name": "data"},
            ]
            await c.set_roots(lambda: [{"uri": "file:///other", "name": "other"}])
            if era == "legacy":  # notifications/roots/list_changed
                await within(events["roots_changed"].wait(), 5)
            else:  # no such notification in 2026-07-28: every call asks for the roots afresh
                await asyncio.sleep(0.05)
                assert not events["roots_changed"].is_set()
            r = await c.call_tool("roots")
            assert r["structuredContent"]["result"] == [{"uri": "file:///other", "name": "other"}]

    arun(go())


def test_logs_go_to_on_log_or_to_the_logging_module(caplog):
    async def go():
        got: list[dict] = []
        async with Client(make_server(), on_log=got.append) as c:
            await c.call_tool("chatty")
        assert got == [{"level": "warning", "logger": "storage", "data": {"disk": "low"}}]
        with caplog.at_level(logging.INFO, logger="mcpio.server"):
            async with Client(make_server()) as c:
                await c.call_tool("chatty")
        rec = [r for r in caplog.records if r.name == "mcpio.server.api"]
        assert rec and rec[0].levelno == logging.WARNING and "[storage]" in rec[0].getMessage()

    arun(go())


def test_server_description_and_eras():
    async def go():
        server = make_server()
        async with Client(server, protocol_version="2025-03-26", name="tests", version="9") as c:
            assert c.server_info == {"name": "api", "version": "3.0.0"}
            assert c.instructions == "for the client tests"
            assert c.negotiated_version == "2025-03-26"
            assert c.negotiated_era == "legacy"  # a legacy protocol_version means the legacy era
            assert "tools" in c.server_capabilities
            await c.ping()
            assert _era.ERA_CACHE[c._transport.abilities.key] == "legacy"  # remembered per server
        for era in ("modern", "auto"):
            async with Client(server, era=era, name="tests", version="9") as c:
                assert c.negotiated_era == "modern" and c.negotiated_version == "2026-07-28"
                assert c.server_info == {"name": "api", "version": "3.0.0"}
                assert c.instructions == "for the client tests"
                assert {"tools", "resources"} <= set(c.server_capabilities)
                assert "2025-11-25" in c.server_result["supportedVersions"]
                await c.ping()  # no ping in 2026-07-28: nothing is sent
                r = await c.call_tool("wait", {"seconds": 0})
                assert "resultType" not in r and r["content"][0]["text"] == "done"
                assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "api"
                assert _era.ERA_CACHE[c._transport.abilities.key] == "modern"
        with pytest.raises(ValueError, match="era must be"):
            Client(server, era="future")
        with pytest.raises(ValueError, match="does not belong to the modern era"):
            Client(server, era="modern", protocol_version="2025-06-18")
        with pytest.raises(ValueError, match="protocol_version must be"):
            Client(server, protocol_version="1999-01-01")

    arun(go())


def test_url_targets_use_streamable_http():
    from mcpio._client._target import make_transport
    from mcpio._transports._http_client import HTTPClientTransport

    transport = make_transport(
        "https://example.com/mcp", {"headers": {"Authorization": "Bearer x"}, "env": {"A": "1"}}, []
    )
    assert isinstance(transport, HTTPClientTransport) and transport.abilities.key == "http:https://example.com/mcp"
    assert transport.headers == {"Authorization": "Bearer x"}  # subprocess options are not for HTTP
    with pytest.raises(UnsupportedTarget, match="give an mcpio Server"):
        make_transport(42, {}, [])


class ScriptedServer:
    """A server at the far end of a memory pair, answering each method from a script."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.ours, self.theirs = memory_pair()
        self.seen: list[dict] = []

    async def serve(self) -> None:
        try:
            while True:
                msg = decode(await self.theirs.receive())
                self.seen.append(msg)
                if "id" not in msg:
                    continue
                if msg["method"] not in self.answers:
                    await self.theirs.send(
                        encode(
                            {
                                "jsonrpc": "2.0",
                                "id": msg["id"],
                                "error": {"code": -32601, "message": "Method not found"},
                            }
                        )
                    )
                    continue
                answer = self.answers[msg["method"]]
                result = answer(msg.get("params") or {}) if callable(answer) else answer
                await self.theirs.send(encode({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        except Exception:
            await self.theirs.aclose()


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}


def test_lists_stop_on_a_repeated_cursor_and_drop_duplicates():
    async def go():
        loop_server = ScriptedServer({"initialize": INIT, "tools/list": {"tools": [], "nextCursor": "again"}})
        task = asyncio.ensure_future(loop_server.serve())
        async with Client(transport=loop_server.ours) as c:
            with pytest.raises(RemoteProtocolError, match="cursor 'again' twice"):
                await c.list_tools()
        task.cancel()

        pages = {None: {"tools": [{"name": "a"}], "nextCursor": "2"}, "2": {"tools": [{"name": "a"}, {"name": "b"}]}}
        dup_server = ScriptedServer({"initialize": INIT, "tools/list": lambda p: pages[p.get("cursor")]})
        task = asyncio.ensure_future(dup_server.serve())
        async with Client(transport=dup_server.ours, max_pages=5) as c:
            assert [t["name"] for t in await c.list_tools()] == ["a", "b"]
        task.cancel()

        endless = ScriptedServer(
            {
                "initialize": INIT,
                "tools/list": lambda p: {"tools": [], "nextCursor": str(int(p.get("cursor") or 0) + 1)},
            }
        )
        task = asyncio.ensure_future(endless.serve())
        async with Client(transport=endless.ours, max_pages=3) as c:
            with pytest.raises(RemoteProtocolError, match="more than 3 pages"):
                await c.list_tools()
        task.cancel()

    arun(go())


def test_a_server_offering_an_unknown_version_is_refused():
    async def go():
        odd = ScriptedServer({"initialize": {**INIT, "protocolVersion": "1999-01-01"}})
        task = asyncio.ensure_future(odd.serve())
        with pytest.raises(MCPError, match="1999-01-01"):
            async with Client(transport=odd.ours):
                pass
        task.cancel()
        init = odd.seen[1]
        assert init["params"]["protocolVersion"] == "2025-11-25"
        # The probe found no server/discover (-32601), then no initialized after a refusal.
        assert [m.get("method") for m in odd.seen] == ["server/discover", "initialize"]

    arun(go())


def test_initialize_declares_only_the_capabilities_with_handlers():
    async def go():
        s = ScriptedServer({"initialize": INIT})
        task = asyncio.ensure_future(s.serve())
        async with Client(transport=s.ours, roots=[], sampling=lambda p: "x", elicitation=lambda p: None, era="legacy"):
            pass
        task.cancel()
        assert s.seen[0]["params"]["capabilities"] == {
            "roots": {"listChanged": True},
            "sampling": {},
            "elicitation": {},
        }
        assert s.seen[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
        s2 = ScriptedServer({"initialize": {**INIT, "protocolVersion": "2025-03-26"}})
        task = asyncio.ensure_future(s2.serve())
        async with Client(transport=s2.ours, protocol_version="2025-03-26", elicitation=lambda p: None):
            pass  # elicitation did not exist in 2025-03-26: not declared
        task.cancel()
        assert s2.seen[0]["params"]["capabilities"] == {}

    arun(go())


def test_the_stdio_constructor_and_raw_server():
    async def go():
        async with Client.stdio(RAW[0], RAW[1:]) as c:
            assert [t["name"] for t in await c.list_tools()] == ["ok"]
            assert json.dumps(await c.call_tool("ok")) == '{"content": [{"type": "text", "text": "ok"}]}'

    arun(go())
