"""The mcpio client against mcpio's own examples, over stdio and in memory (the same assertions)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from mcpio import Client, ResourceNotFound
from tests.client.support import EXAMPLES, arun, within

TRANSPORTS = ["stdio", "memory"]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def target(name: str, transport: str):
    """The example as a subprocess command, or its Server object (a fresh import each time)."""
    if transport == "stdio":
        return [sys.executable, str(EXAMPLES / f"{name}.py")]
    return _module(name).server


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_quickstart(transport, era):
    logs: list[str] = []

    async def go():
        async with Client(target("quickstart", transport), on_log=lambda p: logs.append(p["data"]), era=era) as c:
            # mcpio's examples serve both eras: "auto" finds server/discover and speaks 2026-07-28.
            assert c.negotiated_era == ("legacy" if era == "legacy" else "modern")
            assert c.server_info == {"name": "demo", "version": "1.0.0"}
            assert c.instructions == "Arithmetic and greetings."
            assert {t["name"] for t in await c.list_tools()} == {"add", "slow_sum"}
            r = await c.call_tool("add", {"a": 20, "b": 22})
            assert r["content"] == [{"type": "text", "text": "42"}] and r["structuredContent"] == {"result": 42}
            assert [t["uriTemplate"] for t in await c.list_resource_templates()] == ["greeting://{name}"]
            assert await c.list_resources() == []
            assert (await c.read_resource("greeting://Ada"))[0]["text"] == "Hello, Ada!"
            prompt = await c.get_prompt("review_code", {"code": "x = 1"})
            assert prompt["messages"][0]["content"]["text"].endswith("x = 1")
            progress: list[tuple] = []
            r = await c.call_tool(
                "slow_sum", {"values": [1.5, 2.5, 3]}, on_progress=lambda p, t, m: progress.append((p, t))
            )
            assert r["structuredContent"] == {"result": 7.0}
            assert progress == [(0, 3), (1, 3), (2, 3)]
            assert logs == ["step 0", "step 1", "step 2"]
            r = await c.call_tool("add", {"a": "x", "b": 1})
            assert r["isError"] is True
            done = await c.complete({"type": "ref/resource", "uri": "greeting://{name}"}, "name", "A")
            assert "values" in done
            await c.set_logging_level("error")
            await c.call_tool("slow_sum", {"values": [1]})
            assert logs == ["step 0", "step 1", "step 2"]  # info is below the level now
            await c.ping()

    arun(go())


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_workshop_roots_pagination_and_resources(transport, era, tmp_path):
    docs = Path(EXAMPLES / "docs")
    (tmp_path / "a.txt").write_text("keyword keyword\n")
    (tmp_path / "b.txt").write_text("nothing here\n")
    asked: list[list[Path]] = []
    current = [docs]

    async def go():
        refreshed = asyncio.Event()

        def roots():  # called for every roots/list the server sends
            asked.append(list(current))
            refreshed.set()
            return current

        async with Client(target("workshop", transport), roots=roots, on_log=lambda p: None, era=era) as c:
            if era == "legacy":
                await within(refreshed.wait())  # the server asked roots/list after initialized
            tools = await c.list_tools()
            assert [t["name"] for t in tools] == ["key_word_search"]
            assert tools[0]["annotations"]["readOnlyHint"] is True
            r = await c.call_tool("key_word_search", {"keyword": "keyword"})
            assert not r.get("isError") and r["structuredContent"]
            assert set(r["structuredContent"]) <= {p.name for p in docs.iterdir()}

            refreshed.clear()
            current[:] = [tmp_path]
            await c.roots_changed()  # legacy: notifications/roots/list_changed -> roots/list again
            if era == "legacy":
                await within(refreshed.wait())  # (modern: the next call asks in an input round)
            r = await c.call_tool("key_word_search", {"keyword": "keyword"})
            assert r["structuredContent"] == {"a.txt": 2}

            resources = await c.list_resources()  # 5 per page: the client follows the cursors
            names = sorted(p.name for p in docs.iterdir() if p.is_file())
            assert sorted(r["name"] for r in resources) == names and len(names) > 10
            text = (await c.read_resource(f"doc://{names[0]}"))[0]["text"]
            assert text == (docs / names[0]).read_text()
            with pytest.raises(ResourceNotFound):
                await c.read_resource("doc://nope.md")
            assert [p["name"] for p in await c.list_prompts()] == ["search_keyword"]
            r = await c.call_tool("key_word_search", {"keyword": " "})
            assert r["isError"] and "must not be empty" in r["content"][0]["text"]

    arun(go())
    assert asked[0] == [docs] and asked[-1] == [tmp_path]
