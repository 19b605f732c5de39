"""The public extension API and MCP Apps on the wire, in memory, every frame schema-checked.

Each answer is validated against the official schema of its version (``Peer``: ``wire`` and the
strict member check) and, for MCP Apps, against the rules of the ext-apps specification
(``specification/2026-01-26/apps.mdx``), written below as code since the repository publishes
no JSON Schema for them: §UI Resource Format, §Resource Discovery, §Visibility.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from mcpio import Context, MCPError, Server
from tests.server.peer import LEGACY, Peer, arun, within

MODERN = "2026-07-28"
UI = "io.modelcontextprotocol/ui"
UI_MIME = "text/html;profile=mcp-app"
APPS_CLIENT = {"extensions": {UI: {"mimeTypes": [UI_MIME]}}}
HTML = "<!DOCTYPE html><html><body><p id='answer'>…</p></body></html>"


def meta(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps or {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }


def make_server() -> Server:
    server = Server("ext")
    search = server.extension("com.acme/search", {"maxResults": 5})

    @search.method("acme/search")
    def do_search(query: str, ctx: Context, limit: int = 2) -> dict[str, Any]:
        if query == "boom":
            raise MCPError("the index is offline; try again later", -32000, {"retry": True})
        return {"hits": [query] * limit, "declared": ctx.client_supports("com.acme/search")}

    modern_only = server.extension("com.acme/modern", legacy=False)

    @modern_only.method("acme/new")
    def new() -> dict[str, Any]:
        return {"ok": True}

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    server.ui_resource(
        "ui://calc/view",
        html=HTML,
        name="calc_view",
        connect_domains=["https://api.example.com"],
        permissions=["clipboardWrite"],
        prefers_border=True,
    )

    @server.app_tool(view="ui://calc/view")
    def calc(a: int, b: int) -> str:
        """Add two numbers, with a view."""
        return f"{a} + {b} = {a + b}"

    @server.app_tool(view="ui://calc/view", visibility=["app"])
    def refresh() -> str:
        return "refreshed"

    return server


async def legacy_peer(server: Server, version: str, caps: dict[str, Any]) -> Peer:
    """A legacy peer whose ``initialize`` declares ``caps`` (not schema-checked on the way out:
    the legacy schemas define no ``extensions``, which hosts send all the same); every answer is."""
    peer = Peer(server, version=version, initialize=False)
    await peer.__aenter__()
    resp = await peer.request(
        "initialize",
        {"protocolVersion": version, "capabilities": caps, "clientInfo": {"name": "host", "version": "1"}},
        check=False,
    )
    peer.init_result = resp["result"]
    await peer.notify("notifications/initialized")
    return peer


# ---------------------------------------------------------------------- ext-apps rules, as code
def check_ui_contents(c: dict[str, Any], uri: str) -> None:
    """§UI Resource Format: content requirements and UIResourceMeta."""
    assert c["uri"] == uri and uri.startswith("ui://")
    assert c["mimeType"] == UI_MIME
    assert ("text" in c) != ("blob" in c)
    ui = c.get("_meta", {}).get("ui", {})
    assert set(ui) <= {"csp", "permissions", "domain", "prefersBorder"}
    assert set(ui.get("csp", {})) <= {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}
    assert all(isinstance(v, list) and all(isinstance(o, str) for o in v) for v in ui.get("csp", {}).values())
    assert set(ui.get("permissions", {})) <= {"camera", "microphone", "geolocation", "clipboardWrite"}
    assert all(v == {} for v in ui.get("permissions", {}).values())
    assert isinstance(ui.get("prefersBorder", True), bool)


def check_ui_tool(tool: dict[str, Any], resources: set[str]) -> None:
    """§Resource Discovery: McpUiToolMeta; the resource MUST exist on the server."""
    ui = tool["_meta"]["ui"]
    assert set(ui) <= {"resourceUri", "visibility"}
    assert ui["resourceUri"] in resources
    assert ui.get("visibility", ["model", "app"]) and set(ui.get("visibility", [])) <= {"model", "app"}


# ---------------------------------------------------------------------- advertisement
@pytest.mark.parametrize("version", LEGACY)
def test_legacy_initialize_has_no_extensions_member(version: str) -> None:
    async def go() -> None:
        peer = await legacy_peer(make_server(), version, {})
        try:
            assert "extensions" not in peer.init_result["capabilities"]  # the strict check passed too
        finally:
            await peer.__aexit__(None, None, None)

    arun(go())


def test_discover_advertises_declared_extensions_with_settings() -> None:
    async def go() -> None:
        async with Peer(make_server(), version=MODERN, initialize=False) as peer:
            caps = (await peer.call("server/discover", {"_meta": meta()}))["capabilities"]
            assert caps["extensions"] == {"com.acme/search": {"maxResults": 5}, "com.acme/modern": {}, UI: {}}

    arun(go())


# ---------------------------------------------------------------------- custom methods
@pytest.mark.parametrize("version", LEGACY)
def test_custom_method_legacy(version: str) -> None:
    async def go() -> None:
        peer = await legacy_peer(make_server(), version, {"extensions": {"com.acme/search": {}}})
        try:
            assert await peer.call("acme/search", {"query": "q", "limit": 3}) == {
                "hits": ["q", "q", "q"],
                "declared": True,
            }
            bad = await peer.error("acme/search", {"query": "q", "limit": "many"})
            assert bad["code"] == -32602 and "limit" in bad["message"]
            assert (await peer.error("acme/search", {}))["code"] == -32602
            boom = await peer.error("acme/search", {"query": "boom"})
            assert boom == {"code": -32000, "message": "the index is offline; try again later", "data": {"retry": True}}
            assert (await peer.error("acme/nothing", {}))["code"] == -32601
            modern_only = await peer.error("acme/new", {})  # legacy=False: declared, for 2026-07-28 only
            assert modern_only["code"] == -32601
            assert modern_only["message"] == (
                "Method not found: 'acme/new' (the com.acme/modern extension serves 2026-07-28 requests only; "
                "connect with era='modern')"
            )
        finally:
            await peer.__aexit__(None, None, None)

    arun(go())


def test_custom_method_modern_reads_capabilities_per_request() -> None:
    async def go() -> None:
        async with Peer(make_server(), version=MODERN, initialize=False) as peer:
            declared = await peer.call(
                "acme/search", {"query": "q", "_meta": meta({"extensions": {"com.acme/search": {}}})}
            )
            assert declared["hits"] == ["q", "q"] and declared["declared"] is True
            assert declared["resultType"] == "complete"
            plain = await peer.call("acme/search", {"query": "q", "_meta": meta()})
            assert plain["declared"] is False  # not inferred from the earlier request
            assert (await peer.call("acme/new", {"_meta": meta()}))["ok"] is True
            err = await peer.error("acme/nothing", {"_meta": meta()})
            assert err["code"] == -32601

    arun(go())


def test_wrap_tools_runs_around_tool_calls_only() -> None:
    server = make_server()
    seen: list[str] = []

    @server.extension("com.acme/audit").wrap_tools
    async def audit(request: Any, call_next: Any) -> dict[str, Any]:
        seen.append(request.name)
        result = await call_next(request)
        result["_meta"] = {"com.acme/audited": True}
        return result

    async def go() -> None:
        async with Peer(server) as peer:
            result = await peer.call_tool("add", {"a": 1, "b": 2})
            assert result["_meta"] == {"com.acme/audited": True} and result["content"][0]["text"] == "3"
            await peer.call("tools/list")
            await peer.call("acme/search", {"query": "x"})
        assert seen == ["add"]

    arun(go())


def test_notifications_both_ways() -> None:
    server = make_server()
    ext = server.registry.extensions["com.acme/search"]
    got: list[Any] = []
    arrived: list[asyncio.Event] = []

    @ext.notification("acme/changed")
    async def changed(index: str, count: int) -> None:
        got.append((index, count))
        arrived[0].set()

    async def go() -> None:
        arrived.append(asyncio.Event())
        declared = await legacy_peer(server, "2025-11-25", {"extensions": {"com.acme/search": {}}})
        other = await legacy_peer(server, "2025-11-25", {})
        try:
            assert await server.notify_extension("com.acme/search", "acme/reindexed", {"count": 2}) == 1
            note = await declared.wait_for(lambda m: m.get("method") == "acme/reindexed")
            assert note["params"] == {"count": 2}
            await declared.notify("acme/changed", {"index": "main", "count": 4})
            await within(arrived[0].wait())
        finally:
            await declared.__aexit__(None, None, None)
            await other.__aexit__(None, None, None)
        assert got == [("main", 4)]
        assert not any(m.get("method") == "acme/reindexed" for m in other.received)

    arun(go())


def test_declaration_errors() -> None:
    server = Server("x")
    with pytest.raises(ValueError, match="prefixed name"):
        server.extension("search")
    with pytest.raises(ValueError, match="MCP method"):
        server.method("tools/call")(lambda: {})
    with pytest.raises(ValueError, match="ui://"):
        server.ui_resource("https://x/view", html="x")
    with pytest.raises(TypeError, match="exactly one"):
        server.ui_resource("ui://x/view")
    with pytest.raises(ValueError, match="visibility"):
        server.app_tool(lambda: "x", view="ui://x/view", visibility=["user"])
    with pytest.raises(ValueError, match="visibility"):
        server.app_tool(lambda: "x", view="ui://x/view", visibility="app")
    server.method("acme/x")(lambda: {})
    with pytest.raises(ValueError, match="already a method"):
        server.extension("com.acme/other").method("acme/x")(lambda: {})
    with pytest.raises(ValueError, match="permissions"):
        server.ui_resource("ui://x/view", html="x", permissions=["usb"])


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"connect_domains": ["https://api.example.com; script-src *"]}, r"connect_domains takes origins such as"),
        ({"resource_domains": ["https://a.example https://b.example"]}, r"one per entry; not 'https://a.example https"),
        ({"frame_domains": ["www.youtube.com"]}, r"^frame_domains takes origins such as 'https://api.example.com'"),
        ({"base_uri_domains": ["https://cdn.example\n"]}, r"base_uri_domains takes origins"),
        ({"prefers_border": "false"}, r"^prefers_border takes True or False, not 'false'$"),
        ({"domain": 5}, r"^domain takes the host's name for the view's origin \(a string\), not 5$"),
    ],
)
def test_a_view_s_meta_is_checked_when_it_is_declared(options: dict[str, Any], error: str) -> None:
    """What ``ui_resource`` puts in ``_meta.ui`` is checked there (ext-apps §UI Resource Format):
    a CSP origin is one origin (a host that joins them into its policy, as the specification's own
    example does, would otherwise take a space or a ';' as more sources or another directive),
    ``prefersBorder`` a boolean (``"false"`` was sent as true), ``domain`` a string."""
    with pytest.raises((TypeError, ValueError), match=error):
        Server("x").ui_resource("ui://x/view", html="x", **options)


def test_declared_view_origins_are_served_as_given() -> None:
    origins = ["https://api.example.com", "https://*.cdn.example:443/assets/", "wss://live.example:*"]
    server = Server("x")
    server.ui_resource("ui://x/view", html="x", connect_domains=origins, prefers_border=False, domain="a.example")

    async def go() -> None:
        async with Peer(server, version="2025-11-25") as peer:
            [contents] = (await peer.call("resources/read", {"uri": "ui://x/view"}))["contents"]
            assert contents["_meta"]["ui"] == {
                "csp": {"connectDomains": origins},
                "domain": "a.example",
                "prefersBorder": False,
            }

    arun(go())


def test_an_extension_notification_is_named_as_a_method_is() -> None:
    """``@ext.notification(name)`` takes the names ``@ext.method`` takes: ``prefix/name``, outside
    MCP's ``notifications/`` and ``ui/``, no MCP method (an extension's hook on
    ``notifications/initialized`` would run for every client's handshake)."""
    ext = make_server().registry.extensions["com.acme/search"]
    refused = {
        "x": "custom notification 'x' needs a 'prefix/name' form",
        "notifications/initialized": "custom notification 'notifications/initialized' needs",
        "ui/notifications/size-changed": "needs a 'prefix/name' form outside notifications/ and ui/",
        "tools/list": "'tools/list' is an MCP method; an extension adds notifications of its own",
    }
    for name, error in refused.items():
        with pytest.raises(ValueError, match=re.escape(error)):
            ext.notification(name)
    ext.notification("acme/changed")(lambda: None)  # an extension's own


def test_settings_that_are_no_json_object_are_refused_at_declaration_not_at_discover() -> None:
    """Extension settings go on the wire as a JSON object (``capabilities.extensions``): a value
    that is not one is the declaring code's mistake, said at declaration, first or again (it used
    to fail every ``server/discover`` with -32603, which the client read as a server that does not
    speak 2026-07-28, or to raise dict()'s own message); the server keeps serving. A name of a
    request MCP servers send (``sampling/createMessage``…) is an MCP method too."""
    from mcpio import Client
    from tests.support.http import ServerThread

    server = Server("x")
    with pytest.raises(TypeError, match=r"^server.extension: the settings of extension 'com.acme/x' must be JSON data"):
        server.extension("com.acme/x", {"when": object()})
    server.extension("com.acme/y", {"ok": True})
    with pytest.raises(
        TypeError, match=r"settings of extension 'com.acme/y' must be a dict \(a JSON object\), not \[1\]"
    ):
        server.extension("com.acme/y", [1])  # type: ignore[arg-type]
    for name in ("sampling/createMessage", "elicitation/create", "roots/list"):
        with pytest.raises(ValueError, match="is an MCP method"):
            server.method(name)(lambda: {})

    @server.tool
    def ping() -> str:
        return "pong"

    async def go(url: str) -> None:
        async with Client(url, era="modern") as c:
            assert c.server_capabilities.extensions == {"com.acme/y": {"ok": True}}

    with ServerThread(server.http_app()) as srv:
        arun(go(srv.url))


# ---------------------------------------------------------------------- MCP Apps
@pytest.mark.parametrize("version", [*LEGACY, MODERN])
@pytest.mark.parametrize("apps", [True, False])
def test_apps_wire_shape(version: str, apps: bool) -> None:
    caps = APPS_CLIENT if apps else {}

    async def go() -> None:
        server = make_server()
        if version == MODERN:
            peer = Peer(server, version=MODERN, initialize=False)
            await peer.__aenter__()
            extra: dict[str, Any] = {"_meta": meta(caps)}
        else:
            peer = await legacy_peer(server, version, caps)
            extra = {}
        try:
            tools = {t["name"]: t for t in (await peer.call("tools/list", dict(extra)))["tools"]}
            # app-only tools reach only a client that renders apps (§Visibility)
            assert set(tools) == ({"add", "calc", "refresh"} if apps else {"add", "calc"})
            listed = {r["uri"]: r for r in (await peer.call("resources/list", dict(extra)))["resources"]}
            view = listed["ui://calc/view"]
            assert view["mimeType"] == UI_MIME and view["name"] == "calc_view"
            contents = (await peer.call("resources/read", {"uri": "ui://calc/view", **extra}))["contents"]
            assert len(contents) == 1 and contents[0]["text"] == HTML
            check_ui_contents(contents[0], "ui://calc/view")
            has_meta = version >= "2025-06-18"  # Tool._meta and ResourceContents._meta
            if has_meta:
                for name in tools.keys() - {"add"}:
                    check_ui_tool(tools[name], set(listed))
                assert tools["calc"]["_meta"]["ui"] == {"resourceUri": "ui://calc/view", "visibility": ["model", "app"]}
                ui = {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"clipboardWrite": {}}}
                assert contents[0]["_meta"] == {"ui": {**ui, "prefersBorder": True}}
                assert view["_meta"] == contents[0]["_meta"]
            else:
                assert "_meta" not in tools["calc"] and "_meta" not in contents[0] and "_meta" not in view
            # every UI tool works as a plain tool, with text content (§Graceful Degradation)
            result = await peer.call("tools/call", {"name": "calc", "arguments": {"a": 2, "b": 3}, **extra})
            assert result["content"] == [{"type": "text", "text": "2 + 3 = 5"}]
            hidden = await peer.call("tools/call", {"name": "refresh", **extra})  # callable by name, by the view
            assert hidden["content"][0]["text"] == "refreshed"
        finally:
            await peer.__aexit__(None, None, None)

    arun(go())


def test_ui_resource_from_file(tmp_path: Any) -> None:
    page = tmp_path / "view.html"
    page.write_text(HTML)
    server = Server("f")
    server.ui_resource("ui://f/view", file=page)

    async def go() -> None:
        async with Peer(server) as peer:
            first = (await peer.call("resources/read", {"uri": "ui://f/view"}))["contents"][0]
            assert first == {"uri": "ui://f/view", "mimeType": UI_MIME, "text": HTML}  # no _meta: nothing declared
            page.write_text("<!DOCTYPE html><p>v2</p>")
            again = (await peer.call("resources/read", {"uri": "ui://f/view"}))["contents"][0]
            assert again["text"] == "<!DOCTYPE html><p>v2</p>"

    arun(go())


def test_an_inactive_extension_is_neither_declared_nor_served() -> None:
    server = Server("toggle")
    state = {"on": False}
    ext = server.extension("com.acme/toggle", {"v": 1}, active=lambda s: state["on"])

    @ext.method("acme/toggled")
    def toggled() -> dict[str, Any]:
        return {"on": True}

    @server.tool
    def noop() -> str:
        return "ok"

    async def go() -> None:
        async with Peer(server, version=MODERN, initialize=False) as peer:
            caps = (await peer.call("server/discover", {"_meta": meta()}))["capabilities"]
            assert "com.acme/toggle" not in caps.get("extensions", {})
            assert (await peer.error("acme/toggled", {"_meta": meta()}))["code"] == -32601
            state["on"] = True
            server.add_tool(lambda: "x", name="another")  # a change: capabilities are made again
            caps = (await peer.call("server/discover", {"_meta": meta()}))["capabilities"]
            assert caps["extensions"]["com.acme/toggle"] == {"v": 1}
            assert (await peer.call("acme/toggled", {"_meta": meta()}))["on"] is True

    arun(go())
