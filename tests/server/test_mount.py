"""Composition and catalog shaping on the wire (in memory, every frame schema-checked): ``mount``
under a namespace, live list_changed from a child, lifespans, completion, skills, ``disable`` /
``enable`` by name and tag, ``transform_tool``; and through the typed client in the 2026-07-28 era."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Literal

import pytest

from mcpio import (
    Arg,
    Client,
    Context,
    EmbeddedResource,
    InvalidParams,
    MCPError,
    Message,
    ResourceLink,
    Server,
    ToolResult,
)
from tests.server.peer import LEGACY, Peer, arun, since

ICON = {"src": "https://example.com/a.png", "mimeType": "image/png"}


def math_server(events: list[str] | None = None) -> Server:
    @contextlib.asynccontextmanager
    async def life(server: Server):
        if events is not None:
            events.append("child in")
        yield "child value"
        if events is not None:
            events.append("child out")

    child = Server("math", lifespan=life)

    @child.tool(icons=[ICON], meta={"k": "v"}, annotations={"readOnlyHint": True}, tags={"calc"})
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @child.tool(task_support="optional")
    async def slow(n: int) -> int:
        return n

    @child.tool
    async def whose(ctx: Context) -> dict:
        return {"lifespan": ctx.lifespan}

    @child.resource("greeting://{name}")
    def greeting(name: Literal["Ada", "Alan"]) -> str:
        """A greeting."""
        return f"Hello, {name}!"

    @child.resource("file:///notes.txt", mime_type="text/plain", tags={"files"})
    def notes() -> str:
        return "notes"

    @child.prompt
    def explain(topic: Literal["sums", "products"]) -> str:
        """Explain a topic."""
        return f"Explain {topic}"

    return child


def parent_server(child: Server, events: list[str] | None = None) -> Server:
    @contextlib.asynccontextmanager
    async def life(server: Server):
        if events is not None:
            events.append("parent in")
        yield "parent value"
        if events is not None:
            events.append("parent out")

    parent = Server("main", lifespan=life)

    @parent.tool
    def hello() -> str:
        return "hi"

    parent.mount(child, namespace="math")
    return parent


@pytest.mark.parametrize("version", LEGACY)
def test_mounted_items_are_served_under_the_namespace(version: str) -> None:
    events: list[str] = []
    child = math_server(events)
    parent = parent_server(child, events)

    async def go() -> None:
        async with Peer(parent, version=version) as peer:
            tools = {t["name"]: t for t in (await peer.call("tools/list"))["tools"]}
            assert sorted(tools) == ["hello", "math__add", "math__slow", "math__whose"]
            add = tools["math__add"]
            if since(version, "2025-03-26"):
                assert add["annotations"] == {"readOnlyHint": True}
            if since(version, "2025-11-25"):
                assert add["icons"] == [ICON] and tools["math__slow"]["execution"] == {"taskSupport": "optional"}
            if since(version, "2025-06-18"):
                assert add["_meta"] == {"k": "v"}
            result = await peer.call("tools/call", {"name": "math__add", "arguments": {"a": 2, "b": 3}})
            assert result["content"] == [{"type": "text", "text": "5"}]
            whose = await peer.call("tools/call", {"name": "math__whose", "arguments": {}})
            assert "child value" in whose["content"][0]["text"]  # the child's handler sees the child's lifespan
            # The child's own names are not served by the parent.
            unknown = await peer.error("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
            assert unknown["code"] == -32602

            templates = (await peer.call("resources/templates/list"))["resourceTemplates"]
            assert [t["uriTemplate"] for t in templates] == ["greeting://math/{name}"]
            resources = (await peer.call("resources/list"))["resources"]
            assert [r["uri"] for r in resources] == ["file://math//notes.txt"]
            read = await peer.call("resources/read", {"uri": "greeting://math/Ada"})
            assert read["contents"][0]["text"] == "Hello, Ada!" and read["contents"][0]["uri"] == "greeting://math/Ada"
            read = await peer.call("resources/read", {"uri": "file://math//notes.txt"})
            assert read["contents"][0]["text"] == "notes"
            missing = await peer.error("resources/read", {"uri": "greeting://Ada"})
            assert missing["code"] in (-32002, -32602)

            prompts = (await peer.call("prompts/list"))["prompts"]
            assert [p["name"] for p in prompts] == ["math__explain"]
            got = await peer.call("prompts/get", {"name": "math__explain", "arguments": {"topic": "sums"}})
            assert got["messages"][0]["content"]["text"] == "Explain sums"
            if since(version, "2025-03-26"):  # completion: the child's Literal values, by the parent's names
                done = await peer.call(
                    "completion/complete",
                    {
                        "ref": {"type": "ref/prompt", "name": "math__explain"},
                        "argument": {"name": "topic", "value": "p"},
                    },
                )
                assert done["completion"]["values"] == ["products"]
                done = await peer.call(
                    "completion/complete",
                    {
                        "ref": {"type": "ref/resource", "uri": "greeting://math/{name}"},
                        "argument": {"name": "name", "value": "A"},
                    },
                )
                assert done["completion"]["values"] == ["Ada", "Alan"]
        # The child's lifespan ran inside the parent's.
        assert events == ["parent in", "child in", "child out", "parent out"]

    arun(go())


def test_each_handler_sees_the_lifespan_of_the_server_that_registered_it() -> None:
    """A mounted tool, resource and prompt read their own server's ``ctx.lifespan`` (one rule:
    ``invoke``'s ``owner``), two levels deep; the parent's own items read the parent's."""

    def made(name: str) -> Server:
        @contextlib.asynccontextmanager
        async def life(server: Server):
            yield f"{name} value"

        server = Server(name, lifespan=life)

        @server.tool(name=f"{name}_tool")
        async def tool(ctx: Context) -> str:
            return str(ctx.lifespan)

        @server.resource(f"{name}://life")
        def resource(ctx: Context) -> str:
            return str(ctx.lifespan)

        @server.prompt(name=f"{name}_prompt")
        def prompt(ctx: Context) -> str:
            return str(ctx.lifespan)

        return server

    top, middle, leaf = made("top"), made("middle"), made("leaf")
    middle.mount(leaf)
    top.mount(middle)

    async def go() -> None:
        async with Peer(top) as peer:
            for name in ("top", "middle", "leaf"):
                called = await peer.call("tools/call", {"name": f"{name}_tool", "arguments": {}})
                read = await peer.call("resources/read", {"uri": f"{name}://life"})
                got = await peer.call("prompts/get", {"name": f"{name}_prompt", "arguments": {}})
                assert called["content"][0]["text"] == f"{name} value"
                assert read["contents"][0]["text"] == f"{name} value"
                assert got["messages"][0]["content"]["text"] == f"{name} value"

    arun(go())


def test_a_child_completer_is_asked_in_its_own_names() -> None:
    child = math_server()
    asked = []

    @child.completion
    def complete(ref, argument, context):
        asked.append(ref)
        return ["x1", "x2"]

    parent = parent_server(child)

    async def go() -> None:
        async with Peer(parent) as peer:
            done = await peer.call(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "math__explain"}, "argument": {"name": "topic", "value": ""}},
            )
            assert done["completion"]["values"] == ["x1", "x2"]
            assert asked == [{"type": "ref/prompt", "name": "explain"}]

    arun(go())


def test_mounting_is_live_and_sends_list_changed() -> None:
    child = math_server()
    parent = parent_server(child)

    async def go() -> None:
        async with Peer(parent) as peer:

            @child.tool
            def mul(a: int, b: int) -> int:
                return a * b

            await peer.notification("notifications/tools/list_changed")
            names = [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            assert "math__mul" in names
            result = await peer.call("tools/call", {"name": "math__mul", "arguments": {"a": 6, "b": 7}})
            assert result["content"][0]["text"] == "42"

            child.remove_tool("mul")
            child.add_resource(lambda id: id, "things://{id}", name="thing")
            await peer.wait_for(lambda m: len(peer.notifications("notifications/tools/list_changed")) == 2)
            await peer.wait_for(lambda m: len(peer.notifications("notifications/resources/list_changed")) == 1)
            assert "math__mul" not in [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            templates = [t["uriTemplate"] for t in (await peer.call("resources/templates/list"))["resourceTemplates"]]
            assert "things://math/{id}" in templates

    arun(go())


def test_nested_mounts_flatten_and_cycles_are_refused() -> None:
    leaf = Server("leaf")

    @leaf.tool
    def ping_leaf() -> str:
        return "leaf"

    middle = Server("middle")
    middle.mount(leaf, namespace="leaf")
    top = Server("top")
    top.mount(middle, namespace="mid")
    with pytest.raises(ValueError, match="in itself"):
        leaf.mount(top, namespace="x")
    with pytest.raises(ValueError, match="in itself"):
        top.mount(top)

    async def go() -> None:
        async with Client(top) as c:
            assert [t.name for t in await c.list_tools()] == ["mid__leaf__ping_leaf"]
            assert (await c.call_tool("mid__leaf__ping_leaf", {})).text == "leaf"

            @leaf.tool
            def later() -> str:
                return "later"

            assert "mid__leaf__later" in [t.name for t in await c.list_tools()]

    arun(go())


def test_mount_refuses_clashes_and_bad_namespaces() -> None:
    child = math_server()
    parent = Server("p")

    @parent.tool(name="math__add")
    def taken() -> str:
        return "mine"

    with pytest.raises(ValueError, match="would serve 'math__add' twice"):  # the name that clashes
        parent.mount(child, namespace="math")
    for bad in ("", "a b", "x/y", "ü"):
        with pytest.raises(ValueError, match="not valid"):
            Server("q").mount(child, namespace=bad)


def test_disable_and_enable_by_name_and_tag() -> None:
    child = math_server()
    parent = parent_server(child)

    @parent.tool(tags={"admin"})
    def purge() -> str:
        return "purged"

    async def go() -> None:
        async with Peer(parent) as peer:
            parent.disable(tags={"admin", "calc"})
            await peer.notification("notifications/tools/list_changed")
            names = [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            assert "purge" not in names and "math__add" not in names and "hello" in names
            refused = await peer.error("tools/call", {"name": "purge", "arguments": {}})
            assert refused["code"] == -32602
            parent.disable("hello")
            parent.disable(tags="files")
            assert "hello" not in [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            assert (await peer.call("resources/list"))["resources"] == []
            parent.enable(tags={"admin"})
            parent.enable("hello")
            names = [t["name"] for t in (await peer.call("tools/list"))["tools"]]
            assert "purge" in names and "hello" in names and "math__add" not in names
            result = await peer.call("tools/call", {"name": "purge", "arguments": {}})
            assert result["content"][0]["text"] == "purged"

    arun(go())


def test_transform_tool_renames_describes_defaults_and_hides_arguments() -> None:
    server = Server("t")

    @server.tool
    def search(q: str, limit: int, api_key: str = "default-key") -> dict:
        """Search."""
        return {"q": q, "limit": limit, "key": api_key}

    server.transform_tool(
        "search",
        new_name="find",
        description="Find things.",
        args={
            "q": Arg(name="query", description="What to look for"),
            "limit": Arg(default=5),
            "api_key": Arg(hide=True, default="server-key"),
        },
    )

    async def go() -> None:
        async with Peer(server) as peer:
            tools = {t["name"]: t for t in (await peer.call("tools/list"))["tools"]}
            assert list(tools) == ["find"]
            schema = tools["find"]["inputSchema"]
            assert tools["find"]["description"] == "Find things."
            assert set(schema["properties"]) == {"query", "limit"}
            assert schema["properties"]["query"]["description"] == "What to look for"
            assert schema["properties"]["limit"]["default"] == 5 and schema["required"] == ["query"]
            result = await peer.call("tools/call", {"name": "find", "arguments": {"query": "mcp"}})
            assert result["structuredContent"] == {"q": "mcp", "limit": 5, "key": "server-key"}
            # A hidden argument cannot be set by the client.
            result = await peer.call("tools/call", {"name": "find", "arguments": {"query": "x", "api_key": "evil"}})
            assert result["structuredContent"]["key"] == "server-key"
            gone = await peer.error("tools/call", {"name": "search", "arguments": {"q": "x", "limit": 1}})
            assert gone["code"] == -32602

    arun(go())
    with pytest.raises(ValueError, match="no argument 'nope'"):
        server.transform_tool("find", args={"nope": Arg(name="x")})
    with pytest.raises(ValueError, match="no tool named"):
        server.transform_tool("missing")
    server.transform_tool("search", new_name="lookup")  # again: replaces the first transform

    async def listed() -> list[str]:
        async with Client(server) as c:
            return [t.name for t in await c.list_tools()]

    assert arun(listed()) == ["lookup"]
    other = Server("u")

    @other.tool
    def need(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="give it a default"):
        other.transform_tool("need", args={"x": Arg(hide=True)})


def test_transform_a_mounted_tool() -> None:
    parent = parent_server(math_server())
    parent.transform_tool("math__add", new_name="plus", args={"b": Arg(default=1)})

    async def go() -> None:
        async with Client(parent) as c:
            names = [t.name for t in await c.list_tools()]
            assert "plus" in names and "math__add" not in names
            assert (await c.call_tool("plus", {"a": 41})).data == 42

    arun(go())


def test_a_mounted_tools_argument_errors_name_it_as_the_client_called_it() -> None:
    """The name the client called (``math__add``), not the child's function's (``add``): in the
    isError result of a missing or mistyped argument, and in the -32602 of an unknown one."""
    parent = parent_server(math_server())

    async def go() -> None:
        async with Client(parent) as c:
            missing = await c.call_tool("math__add", {"a": 1})
            assert missing.is_error and missing.text == "Invalid arguments for math__add: 'b' is required"
            with pytest.raises(InvalidParams, match=r"^Invalid arguments for math__add: unknown argument 'c'"):
                await c.call_tool("math__add", {"a": 1, "b": 2, "c": 3})

    arun(go())


def test_modern_era_and_skills_through_a_mount(tmp_path: Path) -> None:
    skill = tmp_path / "pdf"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs.\n---\n# PDF\n")
    child = math_server()
    child.add_skills(tmp_path)
    parent = parent_server(child)

    async def go() -> None:
        async with Client(parent, era="modern") as c:
            assert (await c.call_tool("math__add", {"a": 1, "b": 2})).data == 3
            skills = await c.list_skills()
            assert [s.uri for s in skills] == ["skill://math/pdf/SKILL.md"]
            assert await c.load_skill(skills[0]) == (skill / "SKILL.md").read_text()
            with pytest.raises(InvalidParams):
                await c.call_tool("nothing__here", {})

    arun(go())


def test_a_mounted_app_tool_links_its_view_by_the_name_it_has_in_the_parent() -> None:
    import runpy

    from mcpio._client._apps import APPS_HOST

    calculator = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "apps_calculator.py"))["server"]
    parent = Server("parent")
    parent.mount(calculator, namespace="calc")

    async def go() -> None:
        async with Client(parent, extensions=APPS_HOST) as host:
            view = await host.app_view("calc__add")
            assert view.uri == "ui://calc/calculator/view"
            assert "<html" in view.html.lower()
            assert "calc__double" in {t.name for t in await host.list_tools()}  # app-only, for a host

    arun(go())


def test_a_mounted_tool_links_its_view_by_the_deprecated_flat_key_too() -> None:
    """The deprecated flat ``_meta["ui/resourceUri"]`` (ext-apps §Resource Discovery; the ext-apps
    SDK sends it next to ``ui.resourceUri``) names the view as the parent serves it, as
    ``ui.resourceUri`` does; a ``_meta.ui`` that is not an object is kept as it is, not a crash
    at mount."""
    from mcpio._client._apps import APPS_HOST
    from tests.support.http import ServerThread

    child = Server("child")
    child.ui_resource("ui://child/view", html="<!DOCTYPE html><p>view</p>", name="view")

    @child.tool(meta={"ui/resourceUri": "ui://child/view"})
    def flat() -> str:
        return "flat"

    @child.tool(meta={"ui": {"resourceUri": "ui://child/view"}, "ui/resourceUri": "ui://child/view"})
    def both() -> str:
        return "both"

    @child.tool(meta={"ui": "not an object"})
    def odd() -> str:
        return "odd"

    parent = Server("parent")
    parent.mount(child, namespace="ns")

    async def go(url: str) -> None:
        async with Client(url, extensions=APPS_HOST) as host:
            metas = {t.name: t["_meta"] for t in await host.list_tools()}
            assert metas["ns__flat"] == {"ui/resourceUri": "ui://ns/child/view"}
            assert metas["ns__both"] == {
                "ui": {"resourceUri": "ui://ns/child/view"},
                "ui/resourceUri": "ui://ns/child/view",
            }
            assert metas["ns__odd"] == {"ui": "not an object"}
            assert (await host.app_view("ns__flat")).html == "<!DOCTYPE html><p>view</p>"

    with ServerThread(parent.http_app()) as srv:
        arun(go(srv.url))


def test_a_parent_serves_and_announces_the_extensions_of_a_mounted_app() -> None:
    """A parent that mounts an MCP App announces the child's extensions (2026-07-28
    ``server/discover``), serves the child's extension methods, and hides the child's app-only
    tool from a client that did not declare MCP Apps (§Visibility), as the child itself does;
    over Streamable HTTP on 127.0.0.1, both eras."""
    import runpy

    from mcpio._client._apps import APPS_HOST
    from tests.support.http import ServerThread

    calculator = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "apps_calculator.py"))["server"]
    parent = Server("parent")
    parent.mount(calculator, namespace="calc")

    async def go(url: str) -> None:
        for era in ("legacy", "modern"):
            async with Client(url, era=era) as plain:
                assert [t.name for t in await plain.list_tools()] == ["calc__add"]
                assert (await plain.request("acme/history", {}))["sums"] == []
            async with Client(url, era=era, extensions=APPS_HOST) as host:
                assert {t.name for t in await host.list_tools()} == {"calc__add", "calc__double"}
                if era == "modern":
                    assert host.server_capabilities.extensions == {
                        "io.modelcontextprotocol/ui": {},
                        "com.example/history": {},
                    }

    with ServerThread(parent.http_app()) as srv:
        arun(go(srv.url))


def test_a_method_two_mounted_servers_serve_is_refused_at_mount() -> None:
    """Methods are not namespaced (an extension's protocol names them): a second server bringing
    a method the parent serves already is refused at ``mount``, as a tool served twice is; the
    same server mounted twice brings the same handler, which is no clash."""
    first, second = Server("first"), Server("second")
    first.method("acme/x")(lambda: {"who": "first"})
    second.extension("com.second/x").method("acme/x")(lambda: {"who": "second"})
    parent = Server("parent")
    parent.mount(first, namespace="a")
    parent.mount(first, namespace="b")
    with pytest.raises(ValueError, match=r"^mounting 'second' would serve the method 'acme/x' twice"):
        parent.mount(second, namespace="c")


def test_a_child_mounted_twice_tells_each_subscriber_once() -> None:
    """One child under two namespaces of one parent: an update of its resource reaches the
    subscribers of each URI the parent serves it by, once each."""
    child = Server("c")

    @child.resource("greeting://{name}")
    def greeting(name: str) -> str:
        return f"Hello, {name}!"

    parent = Server("p")
    parent.mount(child, namespace="a")
    parent.mount(child, namespace="b")

    async def go() -> None:
        async with Peer(parent, version="2025-06-18") as peer:
            for ns in ("a", "b"):
                await peer.call("resources/subscribe", {"uri": f"greeting://{ns}/Ada"})
            await child.notify_resource_updated("greeting://Ada")  # told (written) before it returns
            await peer.call("ping")  # answered after the notifications written before it
            told = [n["uri"] for n in peer.notifications("notifications/resources/updated")]
            assert sorted(told) == ["greeting://a/Ada", "greeting://b/Ada"]

    arun(go())


def linking_server() -> Server:
    """A server whose tool and prompt name resources in their results: a template's match, a
    listed resource (embedded), a URI it does not serve and a web page."""
    child = Server("notes")

    @child.resource("notes://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    @child.resource("file:///index.txt")
    def index() -> str:
        return "index"

    @child.tool
    def find() -> ToolResult:
        links = [ResourceLink("other://x", "not its own"), ResourceLink("https://example.com/a", "the web")]
        found = [ResourceLink("notes://1", "one"), EmbeddedResource("file:///index.txt", text="index")]
        return ToolResult(["found", *found, *links])

    @child.prompt
    def brief() -> list:
        return [Message("user", EmbeddedResource("notes://2", text="note 2")), Message("user", "read it")]

    return child


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_resource_uris_in_a_mounted_tools_and_prompts_results_are_the_ones_the_parent_serves(version: str) -> None:
    """A resource link (2025-06-18+) or an embedded resource naming what the child serves (a
    template's match, a listed resource) names it as the parent serves it, through a mount of a
    mount too, so a client reads it there; a URI the child does not serve and a web link are left
    as they are. They were the child's own (``notes://1``), which the parent does not serve."""
    inner = Server("inner")
    inner.mount(linking_server(), namespace="n")
    outer = Server("outer")
    outer.mount(inner, namespace="o")

    def uris(blocks: list) -> list:
        return [b.get("uri") or b.get("resource", {}).get("uri") for b in blocks if b["type"] != "text"]

    async def go() -> None:
        for server, prefix, tool, prompt in (
            (inner, "", "n__find", "n__brief"),
            (outer, "o/", "o__n__find", "o__n__brief"),
        ):
            async with Peer(server, version=version) as peer:
                blocks = (await peer.call("tools/call", {"name": tool, "arguments": {}}))["content"]
                links = ["other://x", "https://example.com/a"]  # not the child's: as they were
                if since(version, "2025-06-18"):
                    assert uris(blocks) == [f"notes://{prefix}n/1", f"file://{prefix}n//index.txt", *links]
                else:  # no resource_link blocks: text (never rewritten) but the embedded resource
                    assert uris(blocks) == [f"file://{prefix}n//index.txt"]
                messages = (await peer.call("prompts/get", {"name": prompt}))["messages"]
                assert messages[0]["content"]["resource"]["uri"] == f"notes://{prefix}n/2"
                texts = {f"notes://{prefix}n/1": "note 1", f"file://{prefix}n//index.txt": "index"}
                for uri, text in {**texts, f"notes://{prefix}n/2": "note 2"}.items():
                    assert (await peer.call("resources/read", {"uri": uri}))["contents"][0]["text"] == text

    arun(go())


def test_a_mount_without_a_namespace_leaves_result_uris_as_they_are() -> None:
    parent = Server("parent")
    parent.mount(linking_server())

    async def go() -> None:
        async with Client(parent) as c:
            result = await c.call_tool("find", {})
            assert [b.uri for b in result.content if b.type == "resource_link"][0] == "notes://1"
            assert (await c.read_resource("notes://1"))[0].text == "note 1"

    arun(go())


def test_a_server_mounted_while_the_parent_serves_runs_its_lifespan_until_the_parent_stops(caplog: Any) -> None:
    """``parent.mount(child)`` from a tool of the parent, served over HTTP on 127.0.0.1: the
    child's lifespan is entered at once (its tool sees ``ctx.lifespan``) and left when the parent
    stops, before the parent's own; a child whose lifespan fails to start is logged, and the
    parent serves on."""
    from tests.support.http import ServerThread

    events: list[str] = []

    def life(name: str) -> Any:
        @contextlib.asynccontextmanager
        async def lifespan(server: Server) -> Any:
            events.append(f"{name} up")
            yield f"{name} value"
            events.append(f"{name} down")

        return lifespan

    @contextlib.asynccontextmanager
    async def broken(server: Server) -> Any:
        raise RuntimeError("no database")
        yield

    parent = Server("main", lifespan=life("main"))
    child = Server("late", lifespan=life("late"))
    failing = Server("failing", lifespan=broken)

    @child.tool
    def whose(ctx: Context) -> str:
        return str(ctx.lifespan)

    @parent.tool
    def attach() -> str:
        parent.mount(failing, namespace="failing")
        parent.mount(child, namespace="late")
        return "attached"

    async def go(url: str) -> None:
        async with Client(url, era="legacy") as c:
            assert (await c.call_tool("attach", {})).text == "attached"
        async with Client(url, era="legacy") as c:
            assert (await c.call_tool("late__whose", {})).text == "late value"

    with caplog.at_level("ERROR", logger="mcpio.server"), ServerThread(parent.http_app()) as served:
        arun(go(served.url))
    assert events == ["main up", "late up", "late down", "main down"]
    assert "server 'failing', mounted while serving, failed to start or stop: RuntimeError: no database" in caplog.text


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_server_mounted_from_another_thread_starts_on_the_serving_loop(era: str) -> None:
    """``parent.mount(child)`` called from a thread that runs no event loop (this test's, while
    uvicorn serves the parent on its own): the child's lifespan is entered on the serving loop
    (its tool sees ``ctx.lifespan``), and the session open before the mount lists its tools next."""
    import asyncio
    import threading

    from tests.support.http import ServerThread

    loops: list[Any] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> Any:
        loops.append(asyncio.get_running_loop())
        yield "late value"

    parent = Server("main")
    child = Server("late", lifespan=lifespan)

    @parent.tool
    def hello() -> str:
        return "hi"

    @child.tool
    def whose(ctx: Context) -> str:
        return str(ctx.lifespan)

    async def go(url: str) -> None:
        async with Client(url, era=era) as c:
            assert [t.name for t in await c.list_tools()] == ["hello"]
            mounting = threading.Thread(target=parent.mount, args=(child, "late"))
            mounting.start()
            await asyncio.to_thread(mounting.join)
            assert sorted(t.name for t in await c.list_tools()) == ["hello", "late__whose"]
            assert (await c.call_tool("late__whose", {})).text == "late value"

    with ServerThread(parent.http_app()) as served:
        arun(go(served.url))
        assert loops == [served.loop]


def test_a_server_mounted_while_serving_whose_lifespan_fails_to_start_is_unmounted(caplog: Any) -> None:
    """``parent.mount(failing)`` from a tool of the parent, served over HTTP on 127.0.0.1, of a
    server whose lifespan raises: its tools, which need that lifespan, are served no more (the
    same session's next ``tools/list`` lists the parent's alone, a call is an unknown tool), the
    failure is logged, and the parent serves on."""
    from tests.support.http import ServerThread

    @contextlib.asynccontextmanager
    async def broken(server: Server) -> Any:
        raise RuntimeError("no database")
        yield

    parent = Server("main")
    failing = Server("failing", lifespan=broken)

    @failing.tool
    def query(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    @parent.tool
    def attach() -> str:
        parent.mount(failing, namespace="failing")
        return "attached"

    async def go(url: str) -> None:
        async with Client(url, era="legacy") as c:
            assert (await c.call_tool("attach", {})).text == "attached"
            assert [t.name for t in await c.list_tools()] == ["attach"]
            with pytest.raises(MCPError, match="failing__query"):
                await c.call_tool("failing__query", {})

    with caplog.at_level("ERROR", logger="mcpio.server"), ServerThread(parent.http_app()) as served:
        arun(go(served.url))
    assert (
        "server 'failing', mounted while serving, failed to start or stop: RuntimeError: no database; it is unmounted"
        in caplog.text
    )


def test_a_cancelled_stop_still_leaves_every_server_mounted_while_serving() -> None:
    """Three servers mounted while the parent runs; its stop is cancelled while the last mounted
    one's lifespan is still leaving: the two mounted before it are left all the same (what they
    opened, a proxy's upstream process, never outlives the parent)."""
    import asyncio

    events: list[str] = []
    leaving = asyncio.Event()
    go_on = asyncio.Event()

    def life(name: str, slow: bool = False) -> Any:
        @contextlib.asynccontextmanager
        async def lifespan(server: Server) -> Any:
            yield name
            if slow:
                leaving.set()
                await go_on.wait()
            events.append(f"{name} down")

        return lifespan

    parent = Server("main")

    async def serve(mounted: asyncio.Event) -> None:
        async with parent.running():
            for name in ("first", "second"):
                parent.mount(Server(name, lifespan=life(name)), namespace=name)
            parent.mount(Server("slow", lifespan=life("slow", slow=True)), namespace="slow")
            async with Client(parent) as c:  # its requests wait for the three lifespans to be entered
                await c.list_tools()
            mounted.set()
            await asyncio.Event().wait()

    async def go() -> None:
        mounted = asyncio.Event()
        task = asyncio.ensure_future(serve(mounted))
        await mounted.wait()
        task.cancel()  # the parent stops: the slow one (last mounted) is left first
        await leaving.wait()
        task.cancel()  # and that stop is cancelled while it leaves
        go_on.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    arun(go())
    assert sorted(events) == ["first down", "second down", "slow down"]
