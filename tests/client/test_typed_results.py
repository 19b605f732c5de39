"""Typed client results: attributes for the typed way, the wire dict for the raw way, both eras."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import msgspec
import pytest

from mcpio import Client, Image, Server, Text
from mcpio.types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    ImageContent,
    Prompt,
    Resource,
    ResourceContents,
    ResourceTemplate,
    TextContent,
    Tool,
)
from tests.client.support import arun

ERAS = ["legacy", "modern"]


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    low: Point
    high: Point
    label: str = ""


def make_server() -> Server:
    server = Server("typed", "2.0.0", title="Typed results", instructions="be typed")

    @server.tool(title="Add")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def box(label: str) -> dict[str, Any]:
        """A box as a plain object."""
        return {"low": {"x": 0, "y": 1}, "high": {"x": 2, "y": 3}, "label": label}

    @server.tool
    def picture() -> list[Text | Image]:
        """Text and an image."""
        return [Text("a red dot"), Image(data=b"\x89PNG....", mime_type="image/png")]

    @server.tool
    def boom() -> str:
        """Always fails."""
        raise ValueError("nope")

    @server.resource("file:///notes.txt", mime_type="text/plain", description="notes")
    def notes() -> str:
        return "hello"

    @server.resource("users://{uid}/avatar", mime_type="application/octet-stream")
    def avatar(uid: str) -> bytes:
        return b"\x00\x01" + uid.encode()

    @server.prompt
    def greet(name: str, polite: bool = False) -> str:
        """Greet someone."""
        return f"{'Dear ' if polite else ''}{name}"

    return server


async def _session(era: str, fn: Any) -> Any:
    async with Client(make_server(), era=era) as client:
        return await fn(client)


@pytest.mark.parametrize("era", ERAS)
def test_tools_are_typed_and_stay_dicts(era: str) -> None:
    async def go(c: Client) -> None:
        tools = {t.name: t for t in await c.list_tools()}
        add = tools["add"]
        assert isinstance(add, Tool) and isinstance(add, dict)
        assert add.description == "Add two integers."
        assert add.input_schema["properties"]["a"] == add["inputSchema"]["properties"]["a"] == {"type": "integer"}
        assert add.output_schema is not None and add.output_schema["properties"]["result"]["type"] == "integer"
        assert add.title == add.get("title") == "Add"
        assert add.icons == [] and add.annotations is None
        assert "name" in add and sorted(add) == sorted(add.keys())
        assert json.loads(json.dumps(add)) == add.model_dump() == dict(add)
        assert type(add.model_dump()) is dict
        assert [t.name for t in await c.list_tools()] == [t["name"] for t in await c.list_tools()]
        info = c.server_info
        assert (info.name, info.version, info["name"]) == ("typed", "2.0.0", "typed")
        caps = c.server_capabilities
        assert caps.tools == caps["tools"] and caps.prompts is not None and caps.resources is not None
        assert caps.extensions == {} or "io.modelcontextprotocol/tasks" not in caps.extensions
        assert c.instructions == "be typed"

    arun(_session(era, go))


@pytest.mark.parametrize("era", ERAS)
def test_call_tool_content_data_and_result_type(era: str) -> None:
    async def go(c: Client) -> None:
        await c.list_tools()
        r = await c.call_tool("add", {"a": 2, "b": 40})
        assert isinstance(r, CallToolResult) and not r.is_error
        assert r.data == 42  # {"result": 42} unwrapped: the listed outputSchema is the wrapper
        assert r["structuredContent"] == {"result": 42} and r.structured_content == {"result": 42}
        assert isinstance(r.content[0], TextContent) and r.content[0].text == "42" and r.text == "42"
        assert (await c.call_tool("add", {"a": 1, "b": 1}, result_type=int)).data == 2
        b = await c.call_tool("box", {"label": "crate"}, result_type=Box)
        assert b.data == Box(Point(0, 1), Point(2, 3), "crate")
        assert (await c.call_tool("box", {"label": "x"}, result_type=dict)).data["high"] == {"x": 2, "y": 3}
        with pytest.raises(msgspec.ValidationError):
            _ = (await c.call_tool("box", {"label": "x"}, result_type=Point)).data
        p = await c.call_tool("picture")
        assert [type(b) for b in p.content] == [TextContent, ImageContent]
        img = p.content[1]
        assert isinstance(img, ImageContent) and img.mime_type == "image/png" and img.decoded() == b"\x89PNG...."
        assert p.data == p.text  # no structured content: its text (issue 34: one rule for .data)
        failed = await c.call_tool("boom")
        assert failed.is_error and "nope" in failed.text and failed["isError"] is True
        assert pickle.loads(pickle.dumps(b)).data == b.data

    arun(_session(era, go))


@pytest.mark.parametrize("era", ERAS)
def test_resources_prompts_completion(era: str) -> None:
    async def go(c: Client) -> None:
        (res,) = await c.list_resources()
        assert isinstance(res, Resource) and res.uri == "file:///notes.txt" and res.mime_type == "text/plain"
        assert res.description == "notes" and res.size is None
        (tmpl,) = await c.list_resource_templates()
        assert isinstance(tmpl, ResourceTemplate) and tmpl.uri_template == tmpl["uriTemplate"] == "users://{uid}/avatar"
        (text,) = await c.read_resource("file:///notes.txt")
        assert isinstance(text, ResourceContents) and text.text == "hello" and text.content_bytes() == b"hello"
        (blob,) = await c.read_resource("users://ann/avatar")
        assert blob.text is None and blob.blob is not None and blob.content_bytes() == b"\x00\x01ann"
        (prompt,) = await c.list_prompts()
        assert isinstance(prompt, Prompt) and prompt.name == "greet"
        assert [(a.name, a.required) for a in prompt.arguments] == [("name", True), ("polite", False)]
        got = await c.get_prompt("greet", {"name": "Ann"})
        assert isinstance(got, GetPromptResult) and got.messages[0].role == "user"
        msg = got.messages[0].content
        assert isinstance(msg, TextContent) and msg.text == "Ann" == got["messages"][0]["content"]["text"]
        done = await c.complete({"type": "ref/prompt", "name": "greet"}, "polite", "")
        assert isinstance(done, Completion) and done.suggestions == done["values"]

    arun(_session(era, go))


def test_unknown_fields_survive_and_absent_ones_read_as_none() -> None:
    raw = {"name": "future", "inputSchema": {"type": "object"}, "x-vendor": {"a": 1}, "_meta": {"k": "v"}}
    tool = Tool(raw)
    assert tool["x-vendor"] == {"a": 1} and tool.model_dump() == raw and tool.meta == {"k": "v"}
    assert tool.title is None and tool.output_schema is None and tool.execution is None
    assert Tool({"name": "bare"}).input_schema == {"type": "object"}  # tolerant of a server that omits it
    result = CallToolResult({"content": [{"type": "hologram", "depth": 3}], "newField": True})
    assert result.content[0].type == "hologram" and result.content[0]["depth"] == 3 and result["newField"]
    assert result.data is None and not result.is_error and repr(result).startswith("CallToolResult(")
