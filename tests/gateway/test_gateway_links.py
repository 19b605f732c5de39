"""Resource URIs in what an upstream answers, through a gateway (``Server.from_config``: each
upstream a proxy mounted under its entry's name): the upstream is ``tests/servers/raw_server.py
--resources`` (a real subprocess), whose tool links to ``mem://report``, a resource it reads but
does not list (the spec does not promise a tool's resource links in ``resources/list``)."""

from __future__ import annotations

import pytest

from mcpio import Audio, Client, MCPError, ResourceLink, Server
from mcpio._host._config import ServerSpec
from tests.client.support import RAW, arun


def gateway() -> Server:
    return Server.from_config({"raw": ServerSpec("raw", command=RAW[0], args=(RAW[1], "--resources"))})


def test_a_link_to_an_unlisted_upstream_resource_is_namespaced_and_read_through_the_gateway():
    """The link names the resource as the gateway serves it (``mem://raw/report``), in both eras,
    and through a server that mounts such a gateway under a namespace of its own too; reading it
    reads the upstream's ``mem://report``. It was ``mem://report``, which the gateway does not
    serve, and the gateway read no upstream resource that its upstream did not list."""
    inner = Server("inner")  # a gateway made by hand: its proxy started before it answers initialize
    inner.mount(Server.proxy([*RAW, "--resources"], name="raw"), namespace="raw")
    outer = Server("outer")
    outer.mount(inner, namespace="g")

    async def go() -> None:
        for era, server, tool, link in (
            ("legacy", gateway(), "raw__ok", "mem://raw/report"),
            ("modern", gateway(), "raw__ok", "mem://raw/report"),
            ("legacy", outer, "g__raw__ok", "mem://g/raw/report"),
        ):
            async with Client(server, era=era, timeout=60) as c:
                result = await c.call_tool(tool, {})
                assert [b.uri for b in result.content if b.type == "resource_link"] == [link], era
                read = await c.read_resource(link)
                assert (read[0].uri, read[0].text) == (link, "mem://report"), era  # the upstream's, read there

    arun(go(), timeout=90)


UPSTREAM = """\
from mcpio import Server

server = Server("up")


@server.resource("mem://secret")
def secret() -> str:
    return "secret"


@server.resource("mem://notes/{id}")
def note(id: str) -> str:
    return f"note {id}"


@server.resource("mem://open")
def open_() -> str:
    return "open"
"""


def test_what_a_gateway_or_proxy_leaves_out_is_not_read_as_an_unlisted_resource(tmp_path):
    """A resource or template excluded from a mount, or disabled in the gateway or in the proxy
    itself, is not read through the unlisted path (a proxy reads any URI its upstream does not
    list): it was, so ``exclude``/``disable`` hid it from the lists only."""
    upstream = tmp_path / "up.py"
    upstream.write_text(UPSTREAM)
    excluded = Server("excluded")
    excluded.mount(Server.proxy(str(upstream), name="up"), "up", exclude=["mem://secret", "mem://notes/{id}"])
    disabled = Server("disabled")
    disabled.mount(Server.proxy(str(upstream), name="up"), "up")
    disabled.disable(["mem://up/secret", "mem://up/notes/{id}"])
    proxy = Server.proxy(str(upstream), name="up")
    proxy.disable(["mem://secret", "mem://notes/{id}"])

    async def go() -> None:
        for server, ns in ((excluded, "up/"), (disabled, "up/"), (proxy, "")):
            async with Client(server, timeout=60) as c:
                assert (await c.read_resource(f"mem://{ns}open"))[0].text == "open"
                for uri in (f"mem://{ns}secret", f"mem://{ns}notes/1"):
                    with pytest.raises(MCPError):
                        await c.read_resource(uri)
                    assert uri not in {r.uri for r in await c.list_resources()}

    arun(go(), timeout=90)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_a_link_downgraded_to_text_for_an_older_client_names_the_uri_served_here(version):
    """A client of a version without resource_link blocks gets a link as the text ``Resource:
    URI``: the URI the gateway serves it by, which it reads, in a tool result and a prompt message,
    of a proxied upstream and of a server mounted as it is; audio as its version has it. The text
    named the child's URI, which the gateway does not serve (rewritten after it was downgraded)."""
    child = Server("child")

    @child.resource("mem://report")
    def report() -> str:
        return "the report"

    @child.tool
    def linked():
        return [ResourceLink("mem://report", "report"), Audio(data=b"RIFF", mime_type="audio/wav")]

    @child.prompt
    def read_it():
        return [{"role": "user", "content": ResourceLink("mem://report", "report").to_block()}]

    gateway = Server("gateway")
    gateway.mount(Server.proxy(child, name="up"), "up")
    gateway.mount(child, "own")
    audio = "text" if version == "2024-11-05" else "audio"

    async def go() -> None:
        async with Client(gateway, protocol_version=version, timeout=30) as c:
            for ns in ("up", "own"):
                said = (await c.call_tool(f"{ns}__linked", {}))["content"]
                message = (await c.get_prompt(f"{ns}__read_it"))["messages"][0]["content"]
                assert said[0] == {"type": "text", "text": f"Resource: mem://{ns}/report"}, said
                assert said[1]["type"] == audio, said
                assert message == said[0], message
                assert (await c.read_resource(f"mem://{ns}/report"))[0].text == "the report"

    arun(go(), timeout=60)
