"""``Client.app_view``: a tool's MCP Apps view read as a host reads it (ext-apps 2026-01-26,
§Resource Discovery: the host MUST fetch ``_meta.ui.resourceUri`` with ``resources/read``)."""

from __future__ import annotations

import pytest

from mcpio import AppViewError, Client, Server
from mcpio._client._apps import APPS_HOST
from tests.client.support import arun
from tests.client.test_extensions_client import example_server


def server_with_views() -> Server:
    server = Server("views")
    server.ui_resource(
        "ui://views/main",
        html="<!DOCTYPE html><p>main</p>",
        name="main",
        connect_domains=["https://api.example.com"],
        resource_domains=["https://cdn.example.com"],
        permissions=["clipboardWrite"],
        prefers_border=False,
    )

    @server.app_tool(view="ui://views/main")
    def shown() -> str:
        return "text"

    @server.app_tool(view="ui://views/gone")
    def broken() -> str:
        return "text"

    @server.tool
    def plain() -> str:
        return "text"

    @server.tool(meta={"ui": {"resourceUri": "https://example.com/view.html"}})
    def not_ui() -> str:
        return "text"

    @server.resource("ui://views/blob", mime_type="text/html;profile=mcp-app")
    def blob_view() -> bytes:
        return b"<!DOCTYPE html><p>blob</p>"

    @server.tool(meta={"ui/resourceUri": "ui://views/blob"})  # the deprecated flat form
    def flat() -> str:
        return "text"

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_example_view_with_its_meta(era: str) -> None:
    arun(_example_view(era))


async def _example_view(era: str) -> None:
    async with Client(example_server(), era=era, extensions=APPS_HOST) as host:
        view = await host.app_view("add")
        assert view.uri == "ui://calculator/view" and view.mime_type == "text/html;profile=mcp-app"
        assert view.html.startswith("<!DOCTYPE html>") and "ui/initialize" in view.html
        assert view.prefers_border is True and view.csp == {} and view.permissions == [] and view.domain is None
        app_only = await host.app_view("double")
        assert app_only.visibility == ("app",) and app_only.html == view.html


def test_csp_permissions_blob_and_flat_meta() -> None:
    arun(_csp_permissions_blob_and_flat_meta())


async def _csp_permissions_blob_and_flat_meta() -> None:
    async with Client(server_with_views(), extensions=APPS_HOST) as host:
        view = await host.app_view("shown")
        assert view.csp == {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        }
        assert view.permissions == ["clipboardWrite"] and view.prefers_border is False
        flat = await host.app_view("flat")
        assert flat.html == "<!DOCTYPE html><p>blob</p>" and flat.uri == "ui://views/blob"


def test_clear_errors() -> None:
    arun(_clear_errors())


async def _clear_errors() -> None:
    async with Client(server_with_views(), extensions=APPS_HOST) as host:
        with pytest.raises(AppViewError, match="'plain' has no view"):
            await host.app_view("plain")
        with pytest.raises(AppViewError, match="could not read the view 'ui://views/gone'"):
            await host.app_view("broken")
        with pytest.raises(AppViewError, match="not a ui:// URI"):
            await host.app_view("not_ui")
        with pytest.raises(AppViewError, match="no tool named 'nope'$"):
            await host.app_view("nope")
    async with Client(example_server()) as plain:  # no extension declared: app-only tools are not listed
        with pytest.raises(AppViewError, match="declared io.modelcontextprotocol/ui"):
            await plain.app_view("double")
    assert issubclass(AppViewError, LookupError)


# The members ext-apps 2026-01-26 names (§UI Resource Format, §Resource Discovery): what the
# server sends under _meta.ui must be among them, with the types the specification gives.
TOOL_UI = {"resourceUri", "visibility"}
RESOURCE_UI = {"csp", "permissions", "domain", "prefersBorder"}
CSP = {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}
PERMISSIONS = {"camera", "microphone", "geolocation", "clipboardWrite"}


def test_the_meta_the_server_sends_has_the_spec_shapes() -> None:
    async def go() -> None:
        async with Client(server_with_views(), era="modern", extensions=APPS_HOST) as host:
            for tool in await host.list_tools():
                ui = (tool.meta or {}).get("ui")
                if ui is None:
                    continue
                assert set(ui) <= TOOL_UI and isinstance(ui["resourceUri"], str)
                assert set(ui.get("visibility", [])) <= {"model", "app"}
            view = await host.app_view("shown")
            assert set(view.ui) <= RESOURCE_UI
            assert set(view.ui["csp"]) <= CSP and all(isinstance(v, list) for v in view.ui["csp"].values())
            assert set(view.ui["permissions"]) <= PERMISSIONS and all(v == {} for v in view.ui["permissions"].values())
            assert isinstance(view.ui["prefersBorder"], bool)
            [listed] = [r for r in await host.list_resources() if r.uri == "ui://views/main"]
            assert (listed.meta or {}).get("ui") == view.ui  # the same _meta.ui on the list entry

    arun(go())
