"""The kit's finer rules, on a Server served in memory to real Clients (public API only): the
cache's copies, scopes and hints, what it never keeps; RateLimit's keys and methods."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpio import Client, MCPError, Server, ToolError
from mcpio.middleware import RATE_LIMITED, RateLimit, ResponseCache, Timing


def text(result: dict) -> str:
    return result["content"][0]["text"]


def counting_server(**options: Any) -> tuple[Server, dict[str, int]]:
    server = Server("rules", **options)
    runs = {"n": 0}

    def run() -> str:
        runs["n"] += 1
        return str(runs["n"])

    @server.tool(annotations={"readOnlyHint": True})
    def look() -> str:
        return run()

    @server.tool(annotations={"readOnlyHint": True})
    def flaky() -> str:
        n = run()
        if n == "1":
            raise ToolError("not yet")
        return n

    @server.tool
    def write() -> str:
        return run()

    @server.resource("memo://plain")
    def plain() -> str:
        return run()

    @server.resource("memo://shared", cache_scope="public")
    def shared() -> str:
        return run()

    @server.resource("memo://minute", ttl_ms=60_000, cache_scope="public")
    def minute() -> str:
        return run()

    return server, runs


def test_an_answer_edited_by_an_outer_middleware_never_changes_what_is_kept():
    server, _ = counting_server()

    @server.middleware
    async def shout(request, call_next):  # registered first: outside the cache
        result = await call_next(request)
        if request.method == "tools/call":
            result["content"][0]["text"] += "!"
        return result

    server.middleware(ResponseCache())

    async def main():
        async with Client(server, era="legacy") as c:
            return [text(await c.call_tool("look", {})) for _ in range(3)]

    assert asyncio.run(main()) == ["1!", "1!", "1!"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_private_answers_stay_with_their_connection_public_ones_are_shared(era):
    server, runs = counting_server()  # cache_scope "private" by default
    server.middleware(ResponseCache())

    async def main():
        async with Client(server, era=era) as one, Client(server, era=era) as two:
            plain = [(await c.read_resource("memo://plain"))[0]["text"] for c in (one, one, two, two)]
            shared = [(await c.read_resource("memo://shared"))[0]["text"] for c in (one, two)]
            looks = [text(await c.call_tool("look", {})) for c in (one, two)]
            return plain, shared, looks

    plain, shared, looks = asyncio.run(main())
    assert plain == ["1", "1", "2", "2"]  # without auth each connection is a caller of its own
    assert shared == ["3", "3"]
    assert looks == ["4", "5"]  # a tool call is always private


def test_a_cached_read_carries_what_is_left_of_the_servers_ttl():
    server, _ = counting_server()
    server.middleware(ResponseCache(ttl=600))

    async def main():
        async with Client(server, era="modern") as c:
            return [await c.request("resources/read", {"uri": "memo://minute"}) for _ in range(2)]

    first, second = asyncio.run(main())
    assert first["contents"] == second["contents"]  # one execution
    assert first["ttlMs"] == 60_000 and 0 < second["ttlMs"] <= 60_000
    assert first["cacheScope"] == second["cacheScope"] == "public"


def test_errors_tool_errors_and_writes_are_never_kept():
    server, _ = counting_server()
    server.middleware(ResponseCache())

    async def main():
        async with Client(server, era="legacy") as c:
            flaky = [await c.call_tool("flaky", {}) for _ in range(3)]
            writes = [text(await c.call_tool("write", {})) for _ in range(2)]
            return flaky, writes

    flaky, writes = asyncio.run(main())
    assert flaky[0]["isError"] and text(flaky[1]) == text(flaky[2]) == "2"
    assert writes == ["3", "4"]


def test_rate_limit_per_tool_with_a_key_function_and_ping_never_limited():
    server, _ = counting_server()
    server.middleware(RateLimit("1/hour", 1, per=lambda request: request.name, methods=["tools/call"]))

    async def main():
        async with Client(server, era="legacy") as c:
            await c.call_tool("look", {})
            await c.call_tool("write", {})  # its own bucket
            with pytest.raises(MCPError) as refused:
                await c.call_tool("look", {})
            await c.ping()
            return refused.value

    refused = asyncio.run(main())
    assert refused.code == RATE_LIMITED and 3590 < refused.data["retryAfter"] <= 3600


def test_by_default_every_request_but_initialize_and_ping_is_limited():
    server, _ = counting_server()
    server.middleware(RateLimit(1, 2))

    async def main():
        async with Client(server, era="legacy") as c:
            await c.ping()
            await c.list_tools()
            await c.read_resource("memo://plain")
            with pytest.raises(MCPError) as refused:
                await c.list_tools()
            await c.ping()
            return refused.value

    assert asyncio.run(main()).code == RATE_LIMITED


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: RateLimit(0), "more than 0"),
        (lambda: RateLimit("3/fortnight"), "like '100/minute'"),
        (lambda: RateLimit(1, 0), "burst must be at least 1"),
        (lambda: RateLimit(1, per="ip"), "per must be"),
        (lambda: ResponseCache(ttl=0), "ttl must be"),
        (lambda: ResponseCache(methods=["tools/call", "prompts/get"]), "cannot cache prompts/get"),
    ],
)
def test_bad_settings_say_what_is_wrong(make, said):
    with pytest.raises(ValueError, match=said):
        make()


def test_timing_keeps_the_eras_meta():
    server, _ = counting_server()
    server.middleware(Timing())

    async def main():
        async with Client(server, era="modern") as c:
            return await c.call_tool("look", {})

    meta = asyncio.run(main())["_meta"]
    assert meta["io.modelcontextprotocol/serverInfo"]["name"] == "rules"
    assert meta["io.mcpio/durationMs"] >= 0


def test_an_answer_computed_while_the_server_changed_is_not_kept():
    server, runs = counting_server()
    server.middleware(ResponseCache())

    @server.tool(annotations={"readOnlyHint": True})
    async def racing() -> str:
        runs["n"] += 1
        server.add_tool(lambda: "new", name=f"tool{runs['n']}")  # a change while this answer is made
        return str(runs["n"])

    async def main():
        async with Client(server, era="legacy") as c:
            return [text(await c.call_tool("racing", {})) for _ in range(2)]

    assert asyncio.run(main()) == ["1", "2"]  # the first answer may be stale already: not kept
