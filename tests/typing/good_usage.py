"""User code written against mcpio's typed client API: it must pass ``mypy --strict``.

It is also run by tests/unit/test_typing.py, so every line here works at run time too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from mcpio import Client, Context, Depends, ElicitResult, Server, SkillVerificationError, StateHandle
from mcpio.types import CallToolResult, ContentBlock, ResourceContents, SkillEntry, TextContent, Tool


class Sum(msgspec.Struct):
    total: int
    parts: list[int]


server = Server("typed-example")


@server.tool
def add(parts: list[int]) -> Sum:
    """Add the parts."""
    return Sum(sum(parts), parts)


@server.resource("memo://today", mime_type="text/plain")
def memo() -> str:
    return "stand-up at ten"


def base() -> int:
    return 10


@server.tool
async def confirm(ctx: Context, offset: int = Depends(base)) -> int:
    """A dependency and typed elicitation: the answer's data is a Sum (or None)."""
    answer: ElicitResult[Sum] = await ctx.elicit("Which parts?", response_type=Sum)
    raw: dict[str, Any] = await ctx.elicit("Anything else?", {"type": "object", "properties": {}})
    return offset + (answer.data.total if answer.data is not None else 0) + len(raw)


@server.tool
async def cart(item: str, handle: StateHandle, ctx: Context) -> dict[str, Any]:
    """State that outlives the call, under a handle the client passes back (minted when absent)."""
    items: list[str] = await ctx.session_state.get("items", [])
    await ctx.session_state.set("items", [*items, item], ttl=60)
    removed: bool = await ctx.session_state.delete("nothing")
    assert ctx.session_state.handle == handle and not removed
    return {"handle": handle, "items": [*items, item]}


async def main() -> None:
    async with Client(server) as client:
        tools: list[Tool] = await client.list_tools()
        names: list[str] = [t.name for t in tools]
        schema: dict[str, Any] = tools[0].input_schema
        raw_schema: Any = tools[0]["inputSchema"]  # the raw wire dict stays available
        assert schema == raw_schema and names == ["add", "confirm", "cart"]
        kept: CallToolResult[Any] = await client.call_tool("cart", {"item": "pen"})
        again = await client.call_tool("cart", {"item": "ink", "handle": kept.data["handle"]})
        assert again.data["items"] == ["pen", "ink"]

        result: CallToolResult[Sum] = await client.call_tool("add", {"parts": [1, 2, 3]}, result_type=Sum)
        total: int = result.data.total
        blocks: list[ContentBlock] = result.content
        first = blocks[0]
        if isinstance(first, TextContent):
            text: str = first.text
            assert text
        untyped: CallToolResult[Any] = await client.call_tool("add", {"parts": [4]})
        assert total == 6 and untyped.data["total"] == 4 and not untyped.is_error
        contents: list[ResourceContents] = await client.read_resource("memo://today")
        assert contents[0].text == "stand-up at ten"
        assert client.server_info.name == "typed-example"
        skills: list[SkillEntry] = await client.list_skills()
        for skill in skills:
            try:
                body: str = await client.load_skill(skill)
                assert body
            except SkillVerificationError as exc:
                print(exc.uri, exc.reason)


if __name__ == "__main__":
    asyncio.run(main())
