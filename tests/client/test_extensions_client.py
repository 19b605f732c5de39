"""Custom methods and MCP Apps with mcpio's Client, over stdio (a real subprocess of
``examples/apps_calculator.py``) and Streamable HTTP (a real server on 127.0.0.1), both eras."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from typing import Any

import msgspec
import pytest

from mcpio import Client, InvalidParams, MethodNotFound, Server
from tests.client.support import EXAMPLES, arun
from tests.support.http import ServerThread

UI = "io.modelcontextprotocol/ui"
APPS = {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}


class History(msgspec.Struct):
    sums: list[int]


def example_server() -> Any:
    spec = importlib.util.spec_from_file_location(f"apps_example_{id(object())}", EXAMPLES / "apps_calculator.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def exercise(client_target: Any, era: str, expected_era: str) -> None:
    async with Client(client_target, era=era, extensions=APPS) as c:
        assert c.negotiated_era == expected_era
        assert {t.name for t in await c.list_tools()} == {"add", "double"}  # we declared apps
        result = await c.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0]["text"] == "5"
        assert (await c.request("acme/history", {"last": 5}))["sums"] == [5]
        assert (await c.call_method("acme/history", {}, History)).sums == [5]
        with pytest.raises(InvalidParams, match="last"):
            await c.request("acme/history", {"last": "all"})
        with pytest.raises(MethodNotFound):
            await c.request("acme/unknown", {})
        [view] = await c.read_resource("ui://calculator/view")
        assert view["mimeType"] == "text/html;profile=mcp-app" and "ui/initialize" in view["text"]
        if expected_era == "modern":
            assert c.server_capabilities.extensions == {"com.example/history": {}, UI: {}}
    async with Client(client_target, era=era) as plain:  # no apps: the app-only tool is not listed
        assert {t.name for t in await plain.list_tools()} == {"add"}
        assert (await plain.call_tool("add", {"a": 1, "b": 1})).content[0]["text"] == "2"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_stdio_subprocess(era: str) -> None:
    arun(exercise([sys.executable, str(EXAMPLES / "apps_calculator.py")], era, era))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_streamable_http(era: str) -> None:
    with ServerThread(example_server().http_app()) as srv:
        arun(exercise(srv.url, era, era))


def test_extension_notification_over_legacy_http() -> None:
    """``server.notify_extension`` reaches a legacy HTTP client that declared the extension (on its
    GET stream), and not one that did not."""
    server = Server("push")
    server.extension("com.acme/push")

    @server.tool
    async def poke() -> str:
        return str(await server.notify_extension("com.acme/push", "acme/pushed", {"x": 1}))

    async def go(url: str) -> None:
        got: list[Any] = []
        arrived = asyncio.Event()

        def on(method: str, params: Any) -> None:
            if method == "acme/pushed":
                got.append(params)
                arrived.set()

        async with Client(url, era="legacy", on_notification=on) as plain:
            assert (await plain.call_tool("poke")).content[0]["text"] == "0"
        async with Client(url, era="legacy", extensions={"com.acme/push": {}}, on_notification=on) as c:
            assert (await c.call_tool("poke")).content[0]["text"] == "1"
            await asyncio.wait_for(arrived.wait(), 10)
        assert got == [{"x": 1}]

    with ServerThread(server.http_app()) as srv:
        arun(go(srv.url))


def test_client_extensions_are_checked_when_the_client_is_made() -> None:
    """``capabilities.extensions`` maps SEP-2133 identifiers to JSON objects (2026-07-28 schema):
    a Client given anything else says so at once, naming the argument, instead of putting it on
    the wire of every request (a server reads such settings as not declared)."""
    server = example_server()
    with pytest.raises(
        ValueError, match=r"^Client\(extensions=...\): extension identifier 'ui' must be a prefixed name"
    ):
        Client(server, extensions={"ui": {}})
    with pytest.raises(
        TypeError,
        match=r"^Client\(extensions=...\): the settings of extension 'io.modelcontextprotocol/ui' must be a dict",
    ):
        Client(server, extensions={UI: ["text/html;profile=mcp-app"]})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="must be JSON data"):
        Client(server, extensions={UI: {"mimeTypes": {"text/html;profile=mcp-app": 1j}}})
