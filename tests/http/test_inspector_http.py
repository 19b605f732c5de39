"""Interop: the MCP Inspector CLI (``@modelcontextprotocol/inspector``, Node 22 from
``scripts/setup-peers``) reaches an mcpio server by URL over Streamable HTTP, in its default
legacy era and in ``--protocol-era auto`` (which finds 2026-07-28 through ``server/discover``)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.http.app import make_server
from tests.support import peers
from tests.support.http import ServerThread


@pytest.fixture(scope="module")
def inspector(tmp_path_factory):
    server = make_server()
    home = tmp_path_factory.mktemp("inspector")
    env = peers.peers_env()
    env["MCP_CATALOG_PATH"] = str(home / "catalog.json")
    env["MCP_CLIENT_CONFIG_PATH"] = str(home / "client.json")
    env.pop("MCP_DEBUG", None)
    with ServerThread(server.http_app()) as srv:

        def run(*options: str) -> Any:
            argv = [*peers.inspector_cli_argv(), srv.url, "--format", "json", "-q", *options]
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
            where = f"\n$ {' '.join(argv)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            assert proc.returncode == 0, where
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith('{"result"')), None)
            assert line is not None, where
            return json.loads(line)["result"]

        yield run


def test_tools_list(inspector):
    tools = {t["name"]: t for t in inspector("--method", "tools/list")["tools"]}
    assert tools["add"]["inputSchema"]["properties"]["a"]["type"] == "integer"


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_tools_call(inspector, era):
    result = inspector(
        "--protocol-era", era, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=4", "--tool-arg", "b=5"
    )
    assert result["structuredContent"] == {"result": 9}


def test_resources_read(inspector):
    [content] = inspector("--method", "resources/read", "--uri", "test://doc")["contents"]
    assert content["text"] == "a document"
