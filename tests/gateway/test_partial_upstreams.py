"""Upstreams that do less than they announce, as servers in the wild do: a proxy serves what they
do serve. The upstream is ``tests/servers/raw_server.py --resources``, hand-written: it announces
resources (without ``subscribe``) and serves one, but answers ``resources/templates/list`` with
-32601, as a server made with the official SDK's low-level ``Server`` and no template handler does."""

from __future__ import annotations

import shlex
import sys

from mcpio import Client
from tests.client.support import RAW, arun

TIMEOUT = 60.0


def test_an_upstream_without_resources_templates_list_is_served_with_what_it_lists():
    """``mcpio run "COMMAND"`` (stdio, a real subprocess): the upstream's tools and resources are
    served and its templates are none, with one warning on stderr; it failed to start ("the
    upstream server did not start: Method not found: resources/templates/list")."""
    command = shlex.join([*RAW, "--resources"])
    stderr: list[str] = []

    async def go() -> None:
        async with Client(
            [sys.executable, "-m", "mcpio", "run", command], timeout=TIMEOUT, on_stderr=stderr.append
        ) as c:
            assert [t.name for t in await c.list_tools()] == ["ok"]
            assert [r.uri for r in await c.list_resources()] == ["mem://a"]
            assert await c.list_resource_templates() == []
            assert (await c.read_resource("mem://a"))[0].text == "A"
            assert (await c.call_tool("ok", {})).text == "ok"

    arun(go(), timeout=90)
    assert any("resources/templates/list" in line for line in stderr), stderr
