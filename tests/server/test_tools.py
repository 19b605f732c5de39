"""Tools (spec: server/tools): definitions cut per version, calls, errors, content, concurrency.

Every message both ways is validated by the peer against the negotiated version's schema,
including a check that no member the version lacks is sent (tests/server/strict.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import TypedDict

import pytest

from mcpio import Audio, EmbeddedResource, Image, ResourceLink, Server, Text, ToolError, ToolResult
from tests.server.peer import LEGACY, Peer, arun, since, within

ICON = {"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png", "sizes": ["48x48"]}
PNG = b"\x89PNG\r\n\x1a\nfake"


def tool_server() -> Server:
    server = Server("tools", version="1.0.0")

    @server.tool(
        title="Delete a file",
        annotations={
            "title": "Delete",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        icons=[ICON],
        meta={"com.example/owner": "ops"},
    )
    def delete(path: str) -> str:
        """Delete the file at ``path``."""
        return f"deleted {path}"

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


# ---------------------------------------------------------------------------- definitions
@pytest.mark.parametrize("version", LEGACY)
def test_tool_definition_is_cut_per_version(version):
    async def go():
        async with Peer(tool_server(), version=version) as peer:
            tools = {t["name"]: t for t in (await peer.call("tools/list"))["tools"]}
            assert set(tools) == {"delete", "add"}
            d = tools["delete"]
            assert d["description"] == "Delete the file at ``path``."
            assert d["inputSchema"]["type"] == "object"
            assert d["inputSchema"]["required"] == ["path"]
            # title and _meta from 2025-06-18, annotations from 2025-03-26, icons from 2025-11-25
            assert ("title" in d) == since(version, "2025-06-18")
            assert ("_meta" in d) == since(version, "2025-06-18")
            assert ("annotations" in d) == since(version, "2025-03-26")
            assert ("icons" in d) == since(version, "2025-11-25")
            if since(version, "2025-03-26"):
                assert d["annotations"]["readOnlyHint"] is False
                assert d["annotations"]["destructiveHint"] is True
            if since(version, "2025-06-18"):
                assert d["title"] == "Delete a file"
                assert d["_meta"] == {"com.example/owner": "ops"}
                assert tools["add"]["outputSchema"]["type"] == "object"
            else:
                assert "outputSchema" not in tools["add"]
            if since(version, "2025-11-25"):
                assert d["icons"] == [ICON]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_call_returns_text_and_structured_content_from_2025_06_18(version):
    async def go():
        async with Peer(tool_server(), version=version) as peer:
            r = await peer.call_tool("add", {"a": 2, "b": 40})
            assert r["content"] == [{"type": "text", "text": "42"}]
            assert not r.get("isError")
            if since(version, "2025-06-18"):
                assert r["structuredContent"] == {"result": 42}
            else:
                assert "structuredContent" not in r

    arun(go())


# ---------------------------------------------------------------------------- errors
def test_bad_arguments_are_tool_errors_naming_the_argument():
    async def go():
        async with Peer(tool_server()) as peer:
            r = await peer.call_tool("add", {"a": "two", "b": 3})
            assert r["isError"] is True
            text = r["content"][0]["text"]
            assert "'a'" in text and "integer" in text and "Traceback" not in text
            r = await peer.call_tool("add", {"a": 1})
            assert r["isError"] is True
            assert "'b'" in r["content"][0]["text"] and "required" in r["content"][0]["text"]
            r = await peer.call_tool("add")  # no arguments at all
            assert r["isError"] is True and "required" in r["content"][0]["text"]

    arun(go())


def test_exceptions_become_error_results_without_traceback():
    server = Server("errors")

    @server.tool
    def boom(path: str) -> str:
        raise ValueError(f"disk full while writing {path}")

    @server.tool
    async def refuse() -> str:
        raise ToolError("refused: the quota is exhausted")

    @server.tool
    def bare() -> str:
        raise RuntimeError

    async def go():
        async with Peer(server) as peer:
            r = await peer.call_tool("boom", {"path": "/tmp/x"})
            assert r == {
                "content": [
                    {"type": "text", "text": "Error executing tool boom: ValueError: disk full while writing /tmp/x"}
                ],
                "isError": True,
            }
            r = await peer.call_tool("refuse")
            assert r == {"content": [{"type": "text", "text": "refused: the quota is exhausted"}], "isError": True}
            r = await peer.call_tool("bare")
            assert r["isError"] is True and r["content"][0]["text"] == "Error executing tool bare: RuntimeError"
            assert not any("Traceback" in str(m) for _, m in peer.frames)

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_unknown_tool_is_invalid_params(version):
    async def go():
        async with Peer(tool_server(), version=version) as peer:
            err = await peer.error("tools/call", {"name": "nope", "arguments": {}})
            assert err["code"] == -32602
            assert "nope" in err["message"]

    arun(go())


# ---------------------------------------------------------------------------- content
def content_server() -> Server:
    server = Server("content")

    @server.tool
    def everything():
        return [
            Text(
                "hello",
                annotations={"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"},
                meta={"com.example/k": 1},
            ),
            Image(data=PNG, mime_type="image/png"),
            Audio(data=b"RIFFfake", mime_type="audio/wav"),
            EmbeddedResource(uri="file:///notes.txt", text="notes", mime_type="text/plain"),
            EmbeddedResource(uri="file:///blob.bin", blob=b"\x00\x01", mime_type="application/octet-stream"),
            ResourceLink(
                uri="file:///big.csv",
                name="big.csv",
                title="Big table",
                description="all rows",
                mime_type="text/csv",
                size=1234,
            ),
            "and a plain string",
        ]

    @server.tool
    def picture() -> Image:
        return Image(data=PNG, mime_type="image/png")

    @server.tool
    def full() -> ToolResult:
        return ToolResult(content=[Text("partial")], structured_content={"rows": 3}, is_error=True)

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_content_helpers_are_downgraded_to_what_the_version_has(version):
    async def go():
        async with Peer(content_server(), version=version) as peer:
            r = await peer.call_tool("everything")
            blocks = r["content"]
            types = [b["type"] for b in blocks]
            audio = "audio" if since(version, "2025-03-26") else "text"
            link = "resource_link" if since(version, "2025-06-18") else "text"
            assert types == ["text", "image", audio, "resource", "resource", link, "text"]
            assert blocks[0]["text"] == "hello"
            assert blocks[0]["annotations"]["audience"] == ["user"]
            assert ("_meta" in blocks[0]) == since(version, "2025-06-18")
            assert ("lastModified" in blocks[0]["annotations"]) == since(version, "2025-06-18")
            assert blocks[1]["mimeType"] == "image/png" and blocks[1]["data"] == "iVBORw0KGgpmYWtl"
            assert blocks[3]["resource"] == {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}
            assert blocks[4]["resource"]["blob"] == "AAE="
            if link == "text":
                assert "file:///big.csv" in blocks[5]["text"]
            else:
                assert blocks[5]["uri"] == "file:///big.csv" and blocks[5]["title"] == "Big table"
            if audio == "text":
                assert "audio" in blocks[2]["text"]
            assert blocks[6] == {"type": "text", "text": "and a plain string"}
            assert "structuredContent" not in r

            r = await peer.call_tool("picture")
            assert [b["type"] for b in r["content"]] == ["image"]
            assert "structuredContent" not in r

            r = await peer.call_tool("full")
            assert r["isError"] is True and r["content"] == [{"type": "text", "text": "partial"}]
            assert ("structuredContent" in r) == since(version, "2025-06-18")

    arun(go())


def test_a_tool_result_without_content_has_no_blocks_not_the_text_of_an_empty_list():
    """``ToolResult(structured_content=...)`` (content left at its default) and ``content=[]`` give
    ``content: []`` (a valid, empty CallToolResult content), not a text block "[]"."""
    server = Server("empty")

    @server.tool
    def data_only() -> ToolResult:
        return ToolResult(structured_content={"rows": 3})

    @server.tool
    def nothing() -> ToolResult:
        return ToolResult(content=[])

    async def go():
        async with Peer(server, version="2025-11-25") as peer:
            r = await peer.call_tool("data_only")
            assert r["content"] == [] and r["structuredContent"] == {"rows": 3}
            assert (await peer.call_tool("nothing"))["content"] == []

    arun(go())


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float


class Point(TypedDict):
    x: int
    y: int


@pytest.mark.parametrize("version", LEGACY)
def test_dataclass_and_typeddict_returns_are_structured_objects(version):
    server = Server("structured")

    @server.tool
    def weather(city: str) -> Weather:
        return Weather(city=city, celsius=21.5)

    @server.tool
    def origin() -> Point:
        return {"x": 0, "y": 0}

    async def go():
        async with Peer(server, version=version) as peer:
            tools = {t["name"]: t for t in (await peer.call("tools/list"))["tools"]}
            r = await peer.call_tool("weather", {"city": "Oslo"})
            assert r["content"][0]["type"] == "text"
            assert '"city":"Oslo"' in r["content"][0]["text"].replace(" ", "")
            o = await peer.call_tool("origin")
            if since(version, "2025-06-18"):
                schema = tools["weather"]["outputSchema"]
                assert schema["type"] == "object" and set(schema["properties"]) == {"city", "celsius"}
                assert r["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
                assert set(tools["origin"]["outputSchema"]["properties"]) == {"x", "y"}
                assert o["structuredContent"] == {"x": 0, "y": 0}
            else:
                assert "outputSchema" not in tools["weather"] and "structuredContent" not in r

    arun(go())


# ---------------------------------------------------------------------------- concurrency
def test_sync_tools_run_in_a_worker_thread_and_never_block_the_loop():
    server = Server("threads")
    gate = threading.Event()
    main = threading.get_ident()

    @server.tool
    def wait_for_gate() -> str:
        """Blocks its thread until open_gate runs: impossible if it blocked the event loop."""
        if not gate.wait(5):
            return "gate never opened"
        return "in a worker" if threading.get_ident() != main else "on the loop thread"

    @server.tool
    async def open_gate() -> str:
        gate.set()
        return "opened"

    async def go():
        async with Peer(server) as peer:
            _, blocked = await peer.start("tools/call", {"name": "wait_for_gate", "arguments": {}})
            assert (await peer.call_tool("open_gate"))["content"][0]["text"] == "opened"
            resp = await within(blocked)
            assert resp["result"]["content"][0]["text"] == "in a worker"

    arun(go())


def test_many_requests_in_flight_at_once():
    server = Server("many")
    n = 25
    arrived = 0
    everyone = asyncio.Event()

    @server.tool
    async def rendezvous(i: int) -> int:
        """Returns only once all n calls are running together."""
        nonlocal arrived
        arrived += 1
        if arrived == n:
            everyone.set()
        await everyone.wait()
        return i

    async def go():
        async with Peer(server) as peer:
            started = [await peer.start("tools/call", {"name": "rendezvous", "arguments": {"i": i}}) for i in range(n)]
            results = await within(asyncio.gather(*(f for _, f in started)))
            assert [r["result"]["content"][0]["text"] for r in results] == [str(i) for i in range(n)]

    arun(go())


def test_a_return_value_that_breaks_the_output_schema_is_a_tool_error():
    server = Server("liar")

    @server.tool
    def origin() -> Point:
        return "not a point"  # type: ignore[return-value]

    async def go():
        async with Peer(server) as peer:
            r = await peer.call_tool("origin")
            assert r["isError"] is True and "origin" in r["content"][0]["text"]
            assert "structuredContent" not in r

    arun(go())


def test_inline_sync_tool_runs_on_the_event_loop_thread():
    """``inline=True``: no worker thread (the loop's own thread runs it); the default uses one."""
    server = Server("inline")

    @server.tool(inline=True)
    def where_inline() -> str:
        return threading.current_thread().name

    @server.tool
    def where_default() -> str:
        return threading.current_thread().name

    async def main():
        async with Peer(server, version="2025-11-25") as peer:
            loop_thread = threading.current_thread().name
            inline = (await peer.call_tool("where_inline"))["content"][0]["text"]
            default = (await peer.call_tool("where_default"))["content"][0]["text"]
            return loop_thread, inline, default

    loop_thread, inline, default = arun(main())
    assert inline == loop_thread
    assert default.startswith("mcpio-worker-")
