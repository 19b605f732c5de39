"""Capabilities follow what is registered (spec-notes §4); list_changed notifications at run
time; server info cut per version; the strict member check itself."""

from __future__ import annotations

import pytest

from mcpio import Server
from tests.server.peer import LEGACY, Peer, arun, since
from tests.server.strict import unknown_members

ICON = {"src": "https://example.com/s.png", "mimeType": "image/png"}


def only_tools() -> Server:
    server = Server(
        "only-tools",
        "2.0.0",
        title="Only tools",
        description="Just a tool",
        website_url="https://example.com",
        icons=[ICON],
        instructions="Call hello.",
    )

    @server.tool
    def hello() -> str:
        return "hi"

    return server


def everything() -> Server:
    server = only_tools()
    server.add_resource(lambda: "r", "file:///r.txt", name="r")
    server.add_prompt(lambda: "p", name="p")
    return server


@pytest.mark.parametrize("version", LEGACY)
def test_a_server_with_only_tools_announces_only_tools(version):
    async def go():
        async with Peer(only_tools(), version=version) as peer:
            assert peer.init_result["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}
            for method, params in [
                ("prompts/list", None),
                ("prompts/get", {"name": "x"}),
                ("resources/list", None),
                ("resources/templates/list", None),
                ("resources/read", {"uri": "file:///x"}),
                ("resources/subscribe", {"uri": "file:///x"}),
            ]:
                err = await peer.error(method, params)
                assert err["code"] == -32601, method
            if since(version, "2025-03-26"):
                err = await peer.error(
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}},
                )
                assert err["code"] == -32601
            err = await peer.error("no/such/method")
            assert err["code"] == -32601

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_result_and_server_info_are_cut_per_version(version):
    async def go():
        async with Peer(everything(), version=version) as peer:
            r = peer.init_result
            assert r["protocolVersion"] == version
            assert r["instructions"] == "Call hello."
            caps = r["capabilities"]
            assert set(caps) == {"logging", "tools", "resources", "prompts"} | (
                {"completions"} if since(version, "2025-03-26") else set()
            )
            info = r["serverInfo"]
            assert info["name"] == "only-tools" and info["version"] == "2.0.0"
            assert ("title" in info) == since(version, "2025-06-18")
            for key in ("description", "websiteUrl", "icons"):
                assert (key in info) == since(version, "2025-11-25"), key

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_list_changed_is_sent_when_features_are_added_or_removed(version):
    server = everything()

    async def go():
        async with Peer(server, version=version) as peer:
            server.add_tool(lambda: "new", name="new_tool")
            await peer.notification("notifications/tools/list_changed")
            assert "new_tool" in [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            server.remove_tool("new_tool")
            server.add_resource(lambda id: id, "things://{id}", name="thing")
            server.remove_resource("file:///r.txt")
            server.add_prompt(lambda: "q", name="q")
            await peer.barrier()
            await peer.wait_for(lambda m: len(peer.notifications("notifications/prompts/list_changed")) == 1)
            assert len(peer.notifications("notifications/tools/list_changed")) == 2
            assert len(peer.notifications("notifications/resources/list_changed")) == 2
            assert (await peer.call("resources/list"))["resources"] == []

    arun(go())


def test_list_changed_only_after_initialize_and_only_for_announced_kinds():
    server = only_tools()

    async def go():
        async with Peer(server, initialize=False) as peer:
            await peer.barrier()  # ping is allowed before initialize
            server.add_tool(lambda: "early", name="early")
            await peer.barrier()
            assert peer.received == [m for m in peer.received if "id" in m]  # responses only
            await peer.initialize()
            # prompts and resources were not announced: adding them tells this client nothing
            server.add_prompt(lambda: "p", name="p")
            server.add_resource(lambda: "r", "file:///r.txt", name="r")
            server.add_tool(lambda: "late", name="late")
            await peer.notification("notifications/tools/list_changed")
            await peer.barrier()
            notes = [m["method"] for m in peer.received if "id" not in m]
            assert notes == ["notifications/tools/list_changed"]

    arun(go())


def test_strict_member_check_finds_fields_a_version_lacks():
    tool = {"name": "t", "inputSchema": {"type": "object", "$defs": {}}, "title": "T", "icons": []}
    assert unknown_members(tool, "2024-11-05", "Tool") == ["title", "icons"]
    assert unknown_members(tool, "2025-06-18", "Tool") == ["icons"]
    assert unknown_members(tool, "2025-11-25", "Tool") == []
    result = {"content": [{"type": "text", "text": "x", "_meta": {}}], "structuredContent": {"a": 1}}
    assert unknown_members(result, "2025-03-26", "CallToolResult") == ["content/0/_meta", "structuredContent"]


def test_a_sync_tool_may_register_tools_from_its_worker_thread():
    server = only_tools()

    @server.tool
    def grow(name: str) -> str:
        """Runs in a worker thread, where there is no running event loop."""
        server.add_tool(lambda: "grown", name=name)
        return "ok"

    async def go():
        async with Peer(server) as peer:
            await peer.call_tool("grow", {"name": "sprout"})
            await peer.notification("notifications/tools/list_changed")
            assert "sprout" in [t["name"] for t in (await peer.call("tools/list"))["tools"]]

    arun(go())


def test_page_size_must_be_positive():
    with pytest.raises(ValueError, match="page_size"):
        Server("s", page_size=0)


def test_a_list_announced_once_stays_announced_when_it_empties():
    """2026-07-28 (capabilities are the server's now, request by request): every tool disabled,
    then removed, the client told ``list_changed`` lists again and gets an empty list, never -32601
    ("did not announce the 'tools' capability"); a new client still sees ``tools`` announced."""
    from mcpio import Client

    server = Server("emptied")

    @server.tool
    def only() -> str:
        return "only"

    async def go():
        async with Client(server, era="modern") as c:
            assert [t.name for t in await c.list_tools()] == ["only"]
            server.disable(names=["only"])
            assert await c.list_tools() == []
            server.enable(names=["only"])
            server.remove_tool("only")
            assert await c.list_tools() == []
        async with Client(server, era="modern") as c:
            assert "tools" in c.server_capabilities and await c.list_tools() == []

    arun(go())


def test_an_unknown_method_is_named_in_its_error_up_to_a_hundred_characters():
    """A -32601 answer names the method the client sent, but not at any length: a method name of
    100,000 characters (the request itself within the size limit) comes back cut, not whole."""

    async def go():
        async with Peer(only_tools()) as peer:
            long = "acme/" + "x" * 100_000
            err = await peer.error(long)
            assert err["code"] == -32601
            assert err["message"].startswith("Method not found: 'acme/xxx") and len(err["message"]) < 300, len(
                err["message"]
            )
            short = await peer.error("acme/none")
            assert short["message"] == "Method not found: 'acme/none' is not an MCP method this server serves"

    arun(go())
