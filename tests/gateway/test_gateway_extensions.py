"""A gateway's upstreams' extensions (SEP-2133): ``Server.from_config`` over real upstream
subprocesses. With one upstream declaring extensions (``extended_upstream.py``, next to
``upstream.py`` which declares none), the gateway announces them and forwards a custom request
to it; with two, custom methods not being namespaced, it
announces neither's and refuses a custom request with -32601 naming both, logged once."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from mcpio import Client, MethodNotFound, Server
from tests.client.support import arun

HERE = Path(__file__).parent
EXTENDED = {"command": sys.executable, "args": [str(HERE / "extended_upstream.py")]}
PLAIN = {"command": sys.executable, "args": [str(HERE / "upstream.py")]}


def gateway(tmp_path: Path, servers: dict[str, dict]) -> Server:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return Server.from_config(str(config), era="modern")  # not one remembered legacy: it would declare none


async def announced(c: Client) -> dict:
    """The extensions the gateway announces once its upstreams have started (a list waits for them)."""
    await c.list_tools()
    return (await c.request("server/discover", {}))["capabilities"].get("extensions") or {}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_gateway_announces_and_forwards_the_extensions_of_its_one_extended_upstream(tmp_path, era):
    server = gateway(tmp_path, {"ext": EXTENDED, "plain": PLAIN})

    async def go():
        async with Client(server, era=era, timeout=60) as c:
            if era == "modern":
                assert (await announced(c))["com.acme/push"] == {"version": 1}
            assert (await c.request("acme/echo", {"text": "hi"}))["echo"] == "hi"

    arun(go(), timeout=90)


def test_a_gateway_refuses_a_custom_request_two_extended_upstreams_could_serve(tmp_path, caplog):
    server = gateway(tmp_path, {"a": EXTENDED, "plain": PLAIN, "b": EXTENDED})

    async def go():
        async with Client(server, era="modern", timeout=60) as c:
            assert "com.acme/push" not in await announced(c)
            for _ in range(2):
                with pytest.raises(MethodNotFound, match="the upstreams 'a', 'b' declare extensions"):
                    await c.request("acme/echo", {"text": "hi"})
            assert (await c.call_tool("a__pings", {})).data == []  # the tools are served as ever

    with caplog.at_level(logging.WARNING, logger="mcpio.server"):
        arun(go(), timeout=90)
    said = [r for r in caplog.records if "all declare extensions" in r.getMessage()]
    assert len(said) == 1 and "'a', 'b'" in said[0].getMessage()
