"""Interop: the official ``mcp`` Python SDK client (PyPI ``mcp`` 2.x) drives ``examples/quickstart.py``
over stdio.

The SDK's ``Client`` defaults to ``mode="auto"``: it first probes ``server/discover`` (the
2026-07-28 era) and falls back to the ``initialize`` handshake when the server answers with an
error. mcpio answers the probe, so the feature tests (which use that default) run in the modern
era; ``test_legacy_mode`` pins ``mode="legacy"`` (a plain ``initialize`` handshake, what every
pre-2026 client does).

Each test spawns its own server (``sys.executable examples/quickstart.py``); the server's stderr
goes to a file that is shown when a test fails.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import EXAMPLES

QUICKSTART = EXAMPLES / "quickstart.py"
LEGACY_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
KNOWN_VERSIONS = LEGACY_VERSIONS | {"2026-07-28"}
TIMEOUT = 30.0  # per test, for the whole session


def run_client(tmp_path: Path, body: Callable[[Client], Awaitable[Any]], **client_kwargs: Any) -> Any:
    """Spawn the quickstart server, connect an SDK ``Client`` to it, run ``body(client)``."""
    params = StdioServerParameters(command=sys.executable, args=[str(QUICKSTART)], cwd=str(EXAMPLES))
    errlog_path = tmp_path / "server-stderr.txt"

    async def main() -> Any:
        with errlog_path.open("w") as errlog:
            async with asyncio.timeout(TIMEOUT):
                async with Client(stdio_client(params, errlog=errlog), **client_kwargs) as client:
                    return await body(client)

    try:
        return asyncio.run(main())
    except BaseException as exc:
        leaf = _sole_leaf(exc)
        stderr = errlog_path.read_text() if errlog_path.exists() else ""
        if stderr:
            leaf.add_note(f"--- quickstart server stderr ---\n{stderr}")
        if leaf is exc:
            raise
        raise leaf from None  # unwrap the (nested) exception groups of the SDK's task groups


def _sole_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def test_connect_default_mode(tmp_path):
    async def body(client: Client) -> dict[str, Any]:
        return {
            "version": client.protocol_version,
            "server_info": client.server_info,
            "instructions": client.instructions,
            "capabilities": client.server_capabilities,
        }

    out = run_client(tmp_path, body)
    # mcpio is dual-era: the SDK's server/discover probe succeeds, so it is served statelessly.
    assert out["version"] == "2026-07-28"
    assert out["server_info"] is not None
    assert (out["server_info"].name, out["server_info"].version) == ("demo", "1.0.0")
    assert out["instructions"] == "Arithmetic and greetings."
    caps = out["capabilities"]
    assert caps.tools is not None
    assert caps.resources is not None
    assert caps.prompts is not None


def test_legacy_mode(tmp_path):
    """``mode="legacy"``: a plain initialize handshake at the SDK's latest handshake version."""

    async def body(client: Client) -> dict[str, Any]:
        return {
            "init": client.session.initialize_result,
            "version": client.protocol_version,
            "tools": await client.list_tools(),
            "result": await client.call_tool("add", {"a": 20, "b": 22}),
        }

    out = run_client(tmp_path, body, mode="legacy")
    init = out["init"]
    assert init is not None, "legacy mode must have run initialize"
    assert init.protocol_version == out["version"] == "2025-11-25"
    assert (init.server_info.name, init.server_info.version) == ("demo", "1.0.0")
    assert init.instructions == "Arithmetic and greetings."
    assert sorted(t.name for t in out["tools"].tools) == ["add", "slow_sum"]
    assert out["result"].is_error is False
    assert out["result"].structured_content == {"result": 42}


def test_list_tools(tmp_path):
    async def body(client: Client):
        return await client.list_tools()

    result = run_client(tmp_path, body)
    tools = {t.name: t for t in result.tools}
    assert set(tools) == {"add", "slow_sum"}
    add = tools["add"]
    assert add.description == "Add two numbers."
    schema = add.input_schema
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]
    slow = tools["slow_sum"]
    values = slow.input_schema["properties"]["values"]
    assert values["type"] == "array"
    assert values["items"]["type"] == "number"
    assert slow.input_schema["required"] == ["values"]
    assert "ctx" not in slow.input_schema["properties"]  # the Context parameter is injected, not an argument


def test_call_add(tmp_path):
    async def body(client: Client):
        await client.list_tools()  # lets the SDK validate structuredContent against add's outputSchema
        return await client.call_tool("add", {"a": 2, "b": 3})

    result = run_client(tmp_path, body)
    assert result.is_error is False
    assert [(c.type, c.text) for c in result.content] == [("text", "5")]
    assert result.structured_content == {"result": 5}


def test_call_add_bad_arguments_is_tool_error(tmp_path):
    """Argument validation failures come back as a tool result with ``isError: true`` (SEP-1303)."""

    async def body(client: Client):
        return await client.call_tool("add", {"a": "two", "b": 3})

    result = run_client(tmp_path, body)
    assert result.is_error is True
    assert result.content and result.content[0].type == "text"


def test_call_slow_sum_progress_and_logs(tmp_path):
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def body(client: Client):
        return await client.call_tool("slow_sum", {"values": [1.5, 2, 3.5]}, progress_callback=on_progress)

    # log_level opts in to log messages on 2026-07-28 connections; no effect on legacy ones.
    result = run_client(tmp_path, body, logging_callback=on_log, log_level="debug")
    assert result.is_error is False
    assert result.structured_content == {"result": 7.0}
    assert [c.text for c in result.content] == ["7.0"]
    assert progress == [(0, 3, None), (1, 3, None), (2, 3, None)]
    assert [(m.level, m.data) for m in logs] == [("info", "step 0"), ("info", "step 1"), ("info", "step 2")]


def test_resource_templates_and_read(tmp_path):
    async def body(client: Client):
        templates = await client.list_resource_templates()
        read = await client.read_resource("greeting://Ada")
        return templates, read

    templates, read = run_client(tmp_path, body)
    [template] = templates.resource_templates
    assert template.uri_template == "greeting://{name}"
    assert template.name == "greeting"
    assert template.description == "A personal greeting."
    [content] = read.contents
    assert str(content.uri) == "greeting://Ada"
    assert content.text == "Hello, Ada!"


def test_prompts(tmp_path):
    async def body(client: Client):
        listed = await client.list_prompts()
        got = await client.get_prompt("review_code", {"code": "print(1)"})
        return listed, got

    listed, got = run_client(tmp_path, body)
    [prompt] = listed.prompts
    assert prompt.name == "review_code"
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("code", True)]
    [message] = got.messages
    assert message.role == "user"
    assert message.content.type == "text"
    assert message.content.text == "Please review this code:\n\nprint(1)"
