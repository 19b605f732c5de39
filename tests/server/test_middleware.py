"""Middleware around every client request: order, seeing and changing requests and results,
refusing (JSON-RPC errors, or isError results for tools/call), in both eras, every frame
validated (tests/server/peer.py), and the modern era through the mcpio client."""

from __future__ import annotations

import pytest

from mcpio import Client, MCPError, Request, Server, ToolError
from tests.server.peer import Peer, arun


def make_server(log: list) -> Server:
    server = Server("mw")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def secret() -> str:
        return "hidden"

    @server.middleware
    async def audit(request: Request, call_next):
        log.append(("in", request.method, request.name, request.arguments))
        try:
            result = await call_next(request)
        except MCPError as exc:
            log.append(("error", request.method, exc.code))
            raise
        log.append(("out", request.method))
        return result

    @server.middleware
    async def policy(request: Request, call_next):
        if request.method == "tools/call" and request.name == "secret":
            raise ToolError("secret is not available to this client")
        if request.method == "prompts/list":
            raise MCPError("prompts are switched off here", -32601)
        if request.method == "tools/call" and request.name == "add":
            request.params = {**request.params, "arguments": {**request.arguments, "b": 100}}  # rewritten input
        result = await call_next(request)
        if request.method == "tools/list":  # filtered output
            result = {**result, "tools": [t for t in result["tools"] if t["name"] != "secret"]}
        return result

    return server


def test_middleware_sees_changes_and_refuses_requests_legacy():
    log: list = []

    async def go():
        async with Peer(make_server(log)) as peer:
            tools = await peer.call("tools/list")
            assert [t["name"] for t in tools["tools"]] == ["add"]
            added = await peer.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            assert added["structuredContent"] == {"result": 101}
            refused = await peer.call("tools/call", {"name": "secret", "arguments": {}})
            assert refused == {
                "content": [{"type": "text", "text": "secret is not available to this client"}],
                "isError": True,
            }
            error = await peer.request("prompts/list")
            assert error["error"]["code"] == -32601

    arun(go())
    assert log[0] == ("in", "initialize", None, {})
    assert ("in", "tools/call", "add", {"a": 1, "b": 2}) in log  # the outer one saw the original
    assert ("error", "prompts/list", -32601) in log
    assert log.count(("out", "tools/call")) == 2  # the refused call is a result too


def test_middleware_runs_in_the_modern_era_too():
    log: list = []

    async def go():
        async with Client(make_server(log), era="modern") as c:
            assert [t["name"] for t in await c.list_tools()] == ["add"]
            r = await c.call_tool("add", {"a": 1, "b": 2})
            assert r["structuredContent"] == {"result": 101} and "resultType" not in r

    arun(go())
    assert ("in", "server/discover", None, {}) in log


def test_middleware_must_be_async():
    server = Server("x")
    with pytest.raises(TypeError, match="async function"):
        server.middleware(lambda request, call_next: None)


def test_a_middleware_editing_list_results_deep_in_place_changes_nothing_the_next_request_sees():
    # The list handlers answer with the definitions the server keeps (made once per version);
    # middleware gets its own copy, so edits at any depth stay in the one answer it edits.
    server = Server("edits")

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        return a + b

    @server.prompt
    def greet(name: str) -> str:
        return f"hello {name}"

    @server.middleware
    async def vandal(request: Request, call_next):
        result = await call_next(request)
        if not (request.params.get("_meta") or {}).get("edit"):
            return result
        if request.method == "tools/list":
            tool = result["tools"][0]
            tool["inputSchema"]["properties"]["a"]["type"] = "string"
            tool["inputSchema"]["required"].append("c")
            tool["annotations"]["readOnlyHint"] = False
            tool["name"] = "vandalised"
        elif request.method == "prompts/list":
            result["prompts"][0]["arguments"][0]["name"] = "vandalised"
        return result

    async def go() -> None:
        for _ in range(2):  # a client after another one's edits too
            async with Peer(server) as peer:
                edited = await peer.call("tools/list", {"_meta": {"edit": True}})
                assert edited["tools"][0]["name"] == "vandalised"
                await peer.call("prompts/list", {"_meta": {"edit": True}})
                tool = (await peer.call("tools/list"))["tools"][0]
                assert tool["name"] == "add"
                assert tool["inputSchema"]["properties"]["a"]["type"] == "integer"
                assert tool["inputSchema"]["required"] == ["a", "b"]
                assert tool["annotations"] == {"readOnlyHint": True}
                prompt = (await peer.call("prompts/list"))["prompts"][0]
                assert prompt["arguments"][0]["name"] == "name"

    arun(go())
