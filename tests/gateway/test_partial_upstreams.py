"""Upstreams that do less than they announce, as servers in the wild do: a proxy serves what they
do serve. The upstream is ``tests/servers/raw_server.py --resources``, hand-written: it announces
resources (without ``subscribe``) and serves one, but answers ``resources/templates/list`` with
-32601, as a server made with the official SDK's low-level ``Server`` and no template handler does."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable

from mcpio import Client, MCPError, Server
from tests.client.support import RAW, arun

TIMEOUT = 60.0


def through_the_bridge(options: list[str], check: Callable[[Client], Awaitable[None]]) -> list[str]:
    """``check`` a client of ``mcpio run "raw_server.py OPTIONS"`` (stdio, a real subprocess
    proxying the hand-written upstream); the lines the proxy wrote on stderr."""
    command = shlex.join([*RAW, *options])
    stderr: list[str] = []

    async def go() -> None:
        argv = [sys.executable, "-m", "mcpio", "run", command]
        async with Client(argv, timeout=TIMEOUT, on_stderr=stderr.append) as c:
            await check(c)

    arun(go(), timeout=90)
    return stderr


def test_an_upstream_without_resources_templates_list_is_served_with_what_it_lists():
    """``mcpio run "COMMAND"`` (stdio, a real subprocess): the upstream's tools and resources are
    served and its templates are none, with one warning on stderr; it failed to start ("the
    upstream server did not start: Method not found: resources/templates/list")."""

    async def check(c: Client) -> None:
        assert [t.name for t in await c.list_tools()] == ["ok"]
        assert [r.uri for r in await c.list_resources()] == ["mem://a"]
        assert await c.list_resource_templates() == []
        assert (await c.read_resource("mem://a"))[0].text == "A"
        assert (await c.call_tool("ok", {})).text == "ok"

    stderr = through_the_bridge(["--resources"], check)
    assert any("resources/templates/list" in line for line in stderr), stderr


def test_a_subscription_held_of_an_upstream_without_subscriptions_does_not_keep_it_from_starting_again(tmp_path):
    """A client of the proxy subscribes to the upstream's resource (the upstream does not announce
    ``resources.subscribe``: nothing is sent upstream); the upstream dies and is started again on
    the next request. Renewing the subscriptions held was sent to the new connection regardless,
    refused by the client ("did not announce the 'resources.subscribe' capability"), and failed
    every later start: the upstream stayed "not available" while the subscriber stayed."""
    pid_file = tmp_path / "pid"
    proxy = Server.proxy([*RAW, "--resources", "--pid-file", str(pid_file)], name="up")

    async def go() -> None:
        async with Client(proxy, timeout=TIMEOUT) as c:
            await c.subscribe("mem://a")
            first = int(pid_file.read_text().split()[0])
            os.kill(first, signal.SIGKILL)
            try:  # the proxy may not have seen the upstream's end yet: this call goes to it
                await c.call_tool("ok", {})
            except MCPError as exc:
                assert "went away during the request" in str(exc)
            assert (await c.call_tool("ok", {})).text == "ok"  # from a new upstream process
            assert int(pid_file.read_text().split()[0]) != first
            assert (await c.read_resource("mem://a"))[0].text == "A"

    arun(go(), timeout=90)


def test_an_upstream_template_mcpio_cannot_parse_is_left_out_and_the_rest_is_served():
    """The upstream lists a template whose variable name RFC 6570 refuses (``{user-id}``) beside a
    good one: the proxy leaves that one out, with a warning, and serves the rest, as it does a
    tool whose name it refuses. The whole upstream failed to start ("invalid variable name")."""

    async def check(c: Client) -> None:
        assert [t.uri_template for t in await c.list_resource_templates()] == ["mem://{name}"]
        assert (await c.read_resource("mem://b"))[0].text == "mem://b"
        assert (await c.call_tool("ok", {})).text == "ok"

    stderr = through_the_bridge(["--resources", "--templates"], check)
    assert any("users://{user-id}/profile" in line for line in stderr), stderr


def test_a_resource_link_to_a_resource_the_upstream_does_not_list_is_read_through_the_proxy():
    """The spec does not promise a tool's resource links in ``resources/list``; the host reads them
    with ``resources/read``. Through ``mcpio run "COMMAND"`` the read goes to the upstream, which
    serves it; the proxy answered "Resource not found" for any URI it had not listed."""

    async def check(c: Client) -> None:
        result = await c.call_tool("ok", {})
        links = [b.uri for b in result.content if b.type == "resource_link"]
        assert links == ["mem://report"]
        assert [r.uri for r in await c.list_resources()] == ["mem://a"]  # listed: not the link
        assert (await c.read_resource("mem://report"))[0].text == "mem://report"

    through_the_bridge(["--resources"], check)


def test_an_upstream_that_announces_tools_and_lists_none_yet_is_announced_with_them():
    """An upstream that announces ``tools`` and lists none when the proxy connects (a server whose
    tools come later: after a login, a project opened): the proxy announces ``tools`` to its
    legacy client all the same, so the client hears ``list_changed`` when the upstream's first
    tool comes and lists it through the proxy. Before, the proxy announced what it listed: no
    ``tools``, no ``list_changed``, and the tool never reached the client."""
    import asyncio

    upstream = Server("later")

    @upstream.tool
    def first() -> str:
        return "first"

    async def go() -> None:
        async with Client(upstream) as c:  # announced once: announced for good (its list now empty)
            assert [t.name for t in await c.list_tools()] == ["first"]
        upstream.remove_tool("first")
        changed = asyncio.Event()

        def heard(method: str, params: object) -> None:
            if method == "notifications/tools/list_changed":
                changed.set()

        async with Client(Server.proxy(upstream), era="legacy", on_notification=heard) as c:
            assert "tools" in c.server_capabilities
            assert await c.list_tools() == []
            upstream.add_tool(lambda: "late", name="late")
            await asyncio.wait_for(changed.wait(), TIMEOUT)
            assert [t.name for t in await c.list_tools()] == ["late"]
            assert (await c.call_tool("late", {})).text == "late"

    arun(go(), timeout=90)


def test_malformed_tools_of_an_upstream_are_left_out_and_the_rest_is_served():
    """A listed tool without a name, and one whose ``inputSchema`` is a string: each is left out
    with a warning naming it, and the upstream's other tool is served (it failed the whole
    upstream: KeyError 'name')."""

    async def check(c: Client) -> None:
        assert [t.name for t in await c.list_tools()] == ["ok"]
        assert (await c.call_tool("ok", {})).text == "ok"

    stderr = through_the_bridge(["--malformed-tools"], check)
    left_out = [line for line in stderr if "left out" in line]
    assert len(left_out) == 2 and "None" in left_out[0] and "stringly" in left_out[1], stderr
