"""Resource URIs in what an upstream answers, through a gateway (``Server.from_config``: each
upstream a proxy mounted under its entry's name): the upstream is ``tests/servers/raw_server.py
--resources`` (a real subprocess), whose tool links to ``mem://report``, a resource it reads but
does not list (the spec does not promise a tool's resource links in ``resources/list``)."""

from __future__ import annotations

from mcpio import Client, Server
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
