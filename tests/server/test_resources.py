"""Resources (spec: server/resources): static resources and templates, read, subscriptions."""

from __future__ import annotations

import pytest

from mcpio import EmbeddedResource, Server
from tests.server.peer import LEGACY, Peer, arun, since

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png"}
PNG = b"\x89PNG\r\n\x1a\nfake"


def resource_server() -> Server:
    server = Server("resources")

    @server.resource(
        "file:///readme.md",
        title="Read me",
        description="The project readme",
        mime_type="text/markdown",
        size=4,
        icons=[ICON],
        annotations={"audience": ["user"], "priority": 0.2},
    )
    def readme() -> str:
        return "# Hi"

    @server.resource("data://logo.png", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("data://raw")
    def raw() -> bytes:
        return b"\x00\xff"

    @server.resource("data://config")
    def config() -> dict:
        return {"debug": True}

    @server.resource("data://plain")
    async def plain() -> str:
        return "plain text"

    @server.resource("multi://both")
    def both() -> list:
        return [
            EmbeddedResource(uri="multi://both/a", text="a", mime_type="text/plain"),
            EmbeddedResource(uri="multi://both/b", blob=b"b", mime_type="application/x-b"),
        ]

    @server.resource(
        "users://{id}", title="A user", description="One user by numeric id", mime_type="application/json", icons=[ICON]
    )
    def user(id: int) -> dict:
        return {"id": id, "type": type(id).__name__}

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_list_resources_and_templates_cut_per_version(version):
    async def go():
        async with Peer(resource_server(), version=version) as peer:
            caps = peer.init_result["capabilities"]
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            resources = {r["uri"]: r for r in (await peer.call("resources/list"))["resources"]}
            assert set(resources) == {
                "file:///readme.md",
                "data://logo.png",
                "data://raw",
                "data://config",
                "data://plain",
                "multi://both",
            }
            r = resources["file:///readme.md"]
            assert r["name"] == "readme" and r["mimeType"] == "text/markdown" and r["size"] == 4
            assert r["description"] == "The project readme"
            assert r["annotations"] == {"audience": ["user"], "priority": 0.2}
            assert ("title" in r) == since(version, "2025-06-18")
            assert ("icons" in r) == since(version, "2025-11-25")
            templates = (await peer.call("resources/templates/list"))["resourceTemplates"]
            assert len(templates) == 1
            t = templates[0]
            assert t["uriTemplate"] == "users://{id}" and t["name"] == "user" and t["mimeType"] == "application/json"
            assert ("title" in t) == since(version, "2025-06-18")
            assert ("icons" in t) == since(version, "2025-11-25")

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_read_text_bytes_json_and_several_contents(version):
    async def go():
        async with Peer(resource_server(), version=version) as peer:

            async def read(uri):
                return (await peer.call("resources/read", {"uri": uri}))["contents"]

            assert await read("file:///readme.md") == [
                {"uri": "file:///readme.md", "mimeType": "text/markdown", "text": "# Hi"}
            ]
            assert await read("data://logo.png") == [
                {"uri": "data://logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgpmYWtl"}
            ]
            assert await read("data://raw") == [
                {"uri": "data://raw", "mimeType": "application/octet-stream", "blob": "AP8="}
            ]
            assert await read("data://config") == [
                {"uri": "data://config", "mimeType": "application/json", "text": '{"debug":true}'}
            ]
            assert await read("data://plain") == [
                {"uri": "data://plain", "mimeType": "text/plain", "text": "plain text"}
            ]
            assert await read("multi://both") == [
                {"uri": "multi://both/a", "mimeType": "text/plain", "text": "a"},
                {"uri": "multi://both/b", "mimeType": "application/x-b", "blob": "Yg=="},
            ]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_template_parameters_are_converted_to_their_types(version):
    async def go():
        async with Peer(resource_server(), version=version) as peer:
            contents = (await peer.call("resources/read", {"uri": "users://42"}))["contents"]
            assert contents == [{"uri": "users://42", "mimeType": "application/json", "text": '{"id":42,"type":"int"}'}]
            # a value that does not convert is "not found", not a crash
            err = await peer.error("resources/read", {"uri": "users://forty-two"})
            assert err["code"] == -32002 and err["data"] == {"uri": "users://forty-two"}

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_unknown_resource_is_32002_with_the_uri(version):
    async def go():
        async with Peer(resource_server(), version=version) as peer:
            err = await peer.error("resources/read", {"uri": "file:///missing.txt"})
            assert err["code"] == -32002
            assert err["data"] == {"uri": "file:///missing.txt"}
            assert "file:///missing.txt" in err["message"]
            err = await peer.error("resources/read", {}, check=False)
            assert err["code"] == -32602

    arun(go())


def test_a_resource_that_raises_is_an_internal_error_without_traceback():
    server = Server("broken")

    @server.resource("data://broken")
    def broken() -> str:
        raise OSError("disk unplugged")

    async def go():
        async with Peer(server) as peer:
            err = await peer.error("resources/read", {"uri": "data://broken"})
            assert err["code"] == -32603
            assert "disk unplugged" in err["message"] and "Traceback" not in err["message"]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_updates_go_only_to_subscribers(version):
    server = resource_server()

    async def go():
        async with Peer(server, version=version) as a, Peer(server, version=version) as b:
            assert await a.call("resources/subscribe", {"uri": "file:///readme.md"}) == {}
            assert await b.call("resources/subscribe", {"uri": "data://raw"}) == {}
            await server.notify_resource_updated("file:///readme.md")
            await a.barrier()
            await b.barrier()
            assert a.notifications("notifications/resources/updated") == [{"uri": "file:///readme.md"}]
            assert b.notifications("notifications/resources/updated") == []

            assert await a.call("resources/unsubscribe", {"uri": "file:///readme.md"}) == {}
            await server.notify_resource_updated("file:///readme.md")
            await server.notify_resource_updated("data://raw")
            await a.barrier()
            await b.barrier()
            assert a.notifications("notifications/resources/updated") == [{"uri": "file:///readme.md"}]
            assert b.notifications("notifications/resources/updated") == [{"uri": "data://raw"}]

    arun(go())


def test_template_needs_a_parameter_per_variable_and_static_needs_none():
    server = Server("bad")
    with pytest.raises(TypeError, match="id"):
        server.resource("users://{id}")(lambda: "x")
    with pytest.raises(TypeError, match="must not need arguments"):
        server.resource("file:///a.txt")(lambda name: name)
