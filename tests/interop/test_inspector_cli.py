"""Interop: the MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, ``inspector --cli``,
run with Node 22 from ``scripts/setup-peers``) drives ``python examples/quickstart.py`` over stdio.

Each test runs one CLI invocation (``--format json``: one ``{"result": …}`` line on stdout; the
CLI's own default ``--protocol-era legacy`` = the initialize handshake) and checks the result.
When the peers are not installed the tests fail, telling to run ``scripts/setup-peers``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.support import peers

QUICKSTART = EXAMPLES / "quickstart.py"
TIMEOUT = 60  # seconds per CLI run (a run takes ~1-2 s)

# Exit codes documented by the Inspector CLI.
EXIT_OK = 0
EXIT_TOOL_ERROR = 5  # isError: true, or tool not found


@pytest.fixture
def inspector(tmp_path: Path):
    """``inspector(*options, expect=0)`` runs the Inspector CLI against the quickstart server, checks its
    exit code and returns its JSON output: ``{"result": …}`` and/or ``{"error": …}``."""
    env = peers.peers_env()
    # Keep the CLI away from the user's ~/.mcp-inspector (catalog and client config).
    env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")
    env["MCP_CLIENT_CONFIG_PATH"] = str(tmp_path / "inspector-client.json")
    env.pop("MCP_DEBUG", None)
    argv_prefix = peers.inspector_cli_argv()

    def run(*options: str, expect: int = EXIT_OK) -> Any:
        argv = [*argv_prefix, sys.executable, str(QUICKSTART), "--format", "json", *options]
        proc = subprocess.run(
            argv, capture_output=True, text=True, env=env, cwd=str(EXAMPLES), timeout=TIMEOUT, stdin=subprocess.DEVNULL
        )
        where = (
            f"\n$ {' '.join(argv)}\nexit {proc.returncode}"
            f"\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
        assert proc.returncode == expect, f"expected exit {expect}{where}"
        # The result goes to stdout, an error envelope to stderr (both, for a tool's isError result).
        out: dict[str, Any] = {}
        for line in (proc.stdout + "\n" + proc.stderr).splitlines():
            if line.startswith('{"result"') or line.startswith('{"error"'):
                try:
                    out.update(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise AssertionError(f"output is not JSON: {exc}{where}") from None
        assert out, f"no JSON output{where}"
        return out

    return run


def test_tools_list(inspector):
    out = inspector("--method", "tools/list")
    tools = {t["name"]: t for t in out["result"]["tools"]}
    assert set(tools) == {"add", "slow_sum"}
    add = tools["add"]
    assert add["description"] == "Add two numbers."
    assert add["inputSchema"]["type"] == "object"
    assert add["inputSchema"]["properties"]["a"]["type"] == "integer"
    assert add["inputSchema"]["properties"]["b"]["type"] == "integer"
    assert sorted(add["inputSchema"]["required"]) == ["a", "b"]
    values = tools["slow_sum"]["inputSchema"]["properties"]["values"]
    assert values["type"] == "array"
    assert values["items"]["type"] == "number"


def test_tools_call_add(inspector):
    out = inspector("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=1", "--tool-arg", "b=2")
    result = out["result"]
    assert result.get("isError", False) is False
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert result["structuredContent"] == {"result": 3}


def test_tools_call_slow_sum(inspector):
    out = inspector("--method", "tools/call", "--tool-name", "slow_sum", "--tool-args-json", '{"values": [1, 2, 3.5]}')
    result = out["result"]
    assert result.get("isError", False) is False
    assert result["structuredContent"] == {"result": 6.5}
    assert result["content"] == [{"type": "text", "text": "6.5"}]


def test_tools_call_unknown_tool(inspector):
    # The CLI lists the tools first and stops before calling one that is not listed.
    out = inspector("--method", "tools/call", "--tool-name", "nope", expect=EXIT_TOOL_ERROR)
    assert out["error"]["code"] == "tool_not_found"


def test_tools_call_invalid_arguments_is_tool_error(inspector):
    # (--tool-args-json: with --tool-arg the CLI itself coerces values to the schema's types.)
    out = inspector(
        "--method", "tools/call", "--tool-name", "add", "--tool-args-json", '{"a": 1}', expect=EXIT_TOOL_ERROR
    )
    assert out["error"]["code"] == "tool_is_error"
    assert out["result"]["isError"] is True
    assert "'b'" in out["result"]["content"][0]["text"]


def test_resources_templates_list(inspector):
    out = inspector("--method", "resources/templates/list")
    [template] = out["result"]["resourceTemplates"]
    assert template["uriTemplate"] == "greeting://{name}"
    assert template["name"] == "greeting"
    assert template["description"] == "A personal greeting."


def test_resources_read(inspector):
    out = inspector("--method", "resources/read", "--uri", "greeting://Ada")
    [content] = out["result"]["contents"]
    assert content["uri"] == "greeting://Ada"
    assert content["text"] == "Hello, Ada!"


def test_prompts_list(inspector):
    out = inspector("--method", "prompts/list")
    [prompt] = out["result"]["prompts"]
    assert prompt["name"] == "review_code"
    assert [(a["name"], a.get("required")) for a in prompt["arguments"]] == [("code", True)]


def test_prompts_get(inspector):
    out = inspector("--method", "prompts/get", "--prompt-name", "review_code", "--prompt-args", "code=x = 1")
    [message] = out["result"]["messages"]
    assert message["role"] == "user"
    assert message["content"] == {"type": "text", "text": "Please review this code:\n\nx = 1"}


def test_initialize(inspector):
    out = inspector("--method", "initialize")
    result = out["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "demo", "version": "1.0.0"}
    assert result["instructions"] == "Arithmetic and greetings."
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])


def test_tools_call_add_auto_era(inspector):
    """``--protocol-era auto`` probes ``server/discover`` first and falls back to ``initialize`` when the
    server answers with an error (a legacy-only server); either way the call must work."""
    out = inspector(
        "--protocol-era",
        "auto",
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=4",
        "--tool-arg",
        "b=5",
    )
    assert out["result"]["structuredContent"] == {"result": 9}
    assert out["result"]["content"] == [{"type": "text", "text": "9"}]
