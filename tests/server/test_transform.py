"""``transform_tool`` against the calls that go wrong: a refused transform, a tool that changes
under a transform, and the argument errors a client gets (in the names it was given)."""

from __future__ import annotations

import pytest

from mcpio import Arg, Client, InvalidParams, Server
from tests.server.peer import arun


def search_server() -> Server:
    server = Server("t")

    @server.tool
    def search(q: str, limit: int = 3) -> dict:
        return {"q": q, "limit": limit}

    @server.tool
    def other() -> str:
        return "other"

    return server


async def served(server: Server) -> list[str]:
    async with Client(server) as c:
        return sorted(t.name for t in await c.list_tools())


def test_a_refused_transform_leaves_the_one_before_in_place() -> None:
    server = search_server()
    server.transform_tool("search", new_name="find", args={"q": Arg(name="query")})
    with pytest.raises(ValueError, match="no argument 'nope'"):
        server.transform_tool("search", args={"nope": Arg()})
    with pytest.raises(ValueError, match="served already"):
        server.transform_tool("search", new_name="other")
    assert arun(served(server)) == ["find", "other"]

    async def call() -> object:
        async with Client(server) as c:
            return (await c.call_tool("find", {"query": "mcp"})).data

    assert arun(call()) == {"q": "mcp", "limit": 3}
    server.transform_tool("search", new_name="find", description="Find.")  # again, the same new name: replaced
    assert arun(served(server)) == ["find", "other"]


def test_a_tool_that_no_longer_fits_its_transform_is_withheld_and_its_server_goes_on() -> None:
    """A mounted tool is registered again without the argument a transform hides: the child's
    registration succeeds, the parent goes on serving (not the tool: its hidden argument would
    be open to clients), and serves it transformed again once it fits."""
    child = Server("c")

    @child.tool
    def fetch(url: str, token: str = "") -> dict:
        return {"url": url, "token": token}

    parent = Server("p")
    parent.mount(child, namespace="c")
    parent.transform_tool("c__fetch", new_name="get", args={"token": Arg(hide=True, default="secret")})
    child.remove_tool("fetch")

    @child.tool(name="fetch")
    def fetch_again(url: str) -> dict:
        return {"url": url}

    @child.tool
    def later() -> str:
        return "later"

    assert arun(served(child)) == ["fetch", "later"]
    assert arun(served(parent)) == ["c__later"]
    child.remove_tool("fetch")
    child.add_tool(fetch)

    async def call() -> object:
        async with Client(parent) as c:
            return (await c.call_tool("get", {"url": "u"})).data

    assert arun(served(parent)) == ["c__later", "get"]
    assert arun(call()) == {"url": "u", "token": "secret"}


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_argument_errors_name_the_arguments_as_the_client_knows_them(kind: str) -> None:
    """The transformed tool's schema is all a client knows: a missing, mistyped or unknown
    argument is named as it is published (``query``, not the function's ``q``), under the
    tool's published name; the function's names are not taken, and a hidden one is not shown."""
    server = Server("t")

    if kind == "sync":

        @server.tool
        def search(q: str, limit: int, api_key: str = "") -> dict:
            return {"q": q, "limit": limit, "key": api_key}

    else:

        @server.tool
        async def search(q: str, limit: int, api_key: str = "") -> dict:
            return {"q": q, "limit": limit, "key": api_key}

    server.transform_tool(
        "search",
        new_name="find",
        args={"q": Arg(name="query"), "limit": Arg(name="max", default=5), "api_key": Arg(hide=True, default="k")},
    )

    async def go() -> None:
        async with Client(server) as c:
            missing = await c.call_tool("find", {})
            assert missing.is_error and missing.text == "Invalid arguments for find: 'query' is required"
            mistyped = await c.call_tool("find", {"query": "x", "max": "lots"})
            assert mistyped.is_error
            assert mistyped.text == "Invalid arguments for find: 'max': expected integer, got string 'lots'"
            mistyped = await c.call_tool("find", {"query": 3})
            assert mistyped.text == "Invalid arguments for find: 'query': expected string, got integer 3"
            for unknown in ({"query": "x", "bogus": 1}, {"q": "x"}):
                with pytest.raises(InvalidParams) as refused:
                    await c.call_tool("find", unknown)
                assert refused.value.message.endswith("; it takes query, max"), refused.value.message
                assert "api_key" not in refused.value.message and "search" not in refused.value.message
            kept = await c.call_tool("find", {"query": "x", "api_key": "client's"})  # hidden: dropped
            assert kept.data == {"q": "x", "limit": 5, "key": "k"}

    arun(go())
