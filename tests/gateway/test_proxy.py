"""``Server.proxy`` and ``Server.from_config`` against real upstreams (subprocesses): mcpio's own,
the TypeScript reference server ``server-everything`` and PyPI's ``mcp-server-time``; driven by
mcpio's client in memory and, for the gateway, over stdio as a host would run it."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import sys
from pathlib import Path

import pytest

from mcpio import Client, Context, InvalidParams, MCPError, MethodNotFound, ResourceNotFound, Server
from tests.client.support import EXAMPLES, arun, within
from tests.gateway.support import each_caller_is_asked_alone, initialized_declaring, tools_changed, upstream_learns
from tests.server.peer import Peer
from tests.support import peers
from tests.support.http import ServerThread

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]
ROOTS_UPSTREAM = [sys.executable, str(HERE / "roots_upstream.py")]


def test_proxy_forwards_calls_progress_logs_and_list_changed():
    proxy = Server.proxy(UPSTREAM, name="up")
    changed = asyncio.Event()
    changes: list[str] = []
    logs: list[dict] = []

    def on_notification(method, params):
        if method.endswith("/list_changed"):
            changes.append(method)
            changed.set()

    async def go():
        async with Client(proxy, era="legacy", on_notification=on_notification, on_log=logs.append) as c:
            assert {"pid", "block", "grow"} <= {t.name for t in await c.list_tools()}
            assert (await c.call_tool("chatty", {})).text == "said"
            assert logs and logs[0]["data"] == "hello from upstream"
            await c.call_tool("grow", {"name": "fresh"})
            await within(changed.wait())
            assert "fresh" in {t.name for t in await c.list_tools()}
            assert (await c.call_tool("fresh", {})).text == "fresh"
            # The new mirror is ONE change: one list_changed, of tools only (not one per tool).
            assert changes == ["notifications/tools/list_changed"]
            changed.clear()
            await c.call_tool("shrink", {"name": "fresh"})  # a tool the upstream no longer serves
            await within(changed.wait())
            assert "fresh" not in {t.name for t in await c.list_tools()}
            assert changes == ["notifications/tools/list_changed"] * 2
            progress: list[tuple] = []
            first = asyncio.Event()

            def on_progress(p, t, m):
                progress.append((p, t, m))
                first.set()

            call = asyncio.ensure_future(c.call_tool("block", {}, on_progress=on_progress))
            await within(first.wait())
            await c.call_tool("unblock", {})
            assert (await within(call)).text == "released"
            assert progress[0] == (1, 2, "waiting")

    arun(go(), timeout=60)


def test_an_upstream_killed_mid_call_gives_an_error_and_is_started_again():
    proxy = Server.proxy(UPSTREAM, name="up")
    changes: list[str] = []

    def on_notification(method, params):
        if method.endswith("/list_changed"):
            changes.append(method)

    async def go():
        async with Client(proxy, timeout=30, on_notification=on_notification) as c:
            first = (await c.call_tool("pid", {})).data
            progress = asyncio.Event()
            call = asyncio.ensure_future(c.call_tool("block", {}, on_progress=lambda p, t, m: progress.set()))
            await within(progress.wait())
            os.kill(first, signal.SIGKILL)
            with pytest.raises(MCPError, match="went away during the request"):
                await within(call)
            second = (await c.call_tool("pid", {})).data  # a new upstream process
            assert second != first
            # The new process lists what the old one did: the mirror is unchanged, nobody is told.
            assert (await c.call_tool("pid", {})).data == second
            assert changes == []

    arun(go(), timeout=60)


def test_clients_of_one_proxy_in_memory_share_its_upstream_until_the_last_one_leaves():
    """``Client(proxy)`` twice at once: the first leaving closes nothing the second uses (the
    lifespan holding the upstream connections ends with the last connection), and the second's
    calls reach the same upstream process, not a restarted one."""
    proxy = Server.proxy(UPSTREAM, name="up")

    async def go():
        first = Client(proxy, timeout=30)
        await first.connect()
        try:
            async with Client(proxy, timeout=30) as second:
                upstream = (await first.call_tool("pid", {})).data
                assert (await second.call_tool("pid", {})).data == upstream
                await first.aclose()
                assert (await second.call_tool("echo", {"text": "still here"})).text == "still here"
                assert (await second.call_tool("pid", {})).data == upstream
        finally:
            await first.aclose()
        with pytest.raises(ProcessLookupError):  # the last one out stopped the upstream
            os.kill(upstream, 0)

    arun(go(), timeout=60)


@pytest.fixture(scope="module")
def everything():
    """One proxy of server-everything for the module (a Node cold start is the cost of these
    tests), served over HTTP on 127.0.0.1: each test's clients connect to it."""
    proxy = Server.proxy(peers.everything_argv(), name="everything")
    with ServerThread(proxy.http_app()) as served:
        yield served.url


def test_proxy_of_server_everything_forwards_sampling_elicitation_completion_and_reads(everything):
    async def sampling(params):
        return {"role": "assistant", "content": {"type": "text", "text": "hello from the model"}, "model": "test-llm"}

    async def go():
        async with Client(
            everything, era="legacy", sampling=sampling, elicitation=lambda p: {"name": "Ada"}, timeout=30
        ) as c:
            assert (await c.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
            assert (await c.read_resource("demo://resource/dynamic/text/3"))[0].text.startswith("Resource 3:")
            prompt = await c.get_prompt("args-prompt", {"city": "Paris"})
            assert "Paris" in prompt.messages[0]["content"]["text"]
            done = await c.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "Eng")
            assert done["values"] == ["Engineering"]
            sampled = await c.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
            assert "hello from the model" in sampled.text
            elicited = await c.call_tool("trigger-elicitation-request", {})
            assert "Ada" in "\n".join(b["text"] for b in elicited.content if b["type"] == "text")

    arun(go(), timeout=90)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_gateway_from_config_over_stdio(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": peers.everything_argv()[0], "args": peers.everything_argv()[1:]},
                    "time": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time"],
                        "tools": {"allow": ["get_current_time"]},
                    },
                    "mine": {
                        "command": sys.executable,
                        "args": [str(HERE / "upstream.py")],
                        "tools": {"deny": ["block"]},
                    },
                    "broken": {"command": str(tmp_path / "no-such-server")},
                    "off": {"command": "never-started", "disabled": True},
                }
            }
        )
    )
    gateway = tmp_path / "gateway.py"
    gateway.write_text(f"from mcpio import Server\n\nServer.from_config({str(config)!r}).run()\n")
    stderr = tmp_path / "stderr.txt"

    async def go():
        with stderr.open("w") as err:
            async with Client(
                [sys.executable, str(gateway)], timeout=60, on_stderr=lambda line: err.write(line + "\n")
            ) as c:
                names = {t.name for t in await c.list_tools()}
                assert {"everything__echo", "time__get_current_time", "mine__pid"} <= names
                assert "time__convert_time" not in names and "mine__block" not in names
                assert not any(n.startswith(("broken__", "off__")) for n in names)
                assert (await c.call_tool("everything__echo", {"message": "hi"})).text == "Echo: hi"
                now = await c.call_tool("time__get_current_time", {"timezone": "UTC"})
                assert "UTC" in now.text
                upstream_pid = (await c.call_tool("mine__pid", {})).data
                templates = {t.uri_template for t in await c.list_resource_templates()}
                assert "demo://everything/resource/dynamic/text/{resourceId}" in templates
                text = await c.read_resource("demo://everything/resource/dynamic/text/2")
                assert text[0].text.startswith("Resource 2:")
                gateway_pid = _parent(upstream_pid)
                family = _descendants(gateway_pid)
                assert upstream_pid in family and len(family) >= 3
                # Stopped as a host stops a server: SIGTERM. It ends, and takes its upstreams with it.
                pidfd = os.pidfd_open(gateway_pid)
                os.kill(gateway_pid, signal.SIGTERM)
                assert select.select([pidfd], [], [], 30)[0], "the gateway did not exit within 30 s of SIGTERM"
                os.close(pidfd)
        return gateway_pid, family

    gateway_pid, family = arun(go(), timeout=120)
    assert "broken" in stderr.read_text()  # the failed upstream is reported, the others served
    alive = {
        pid
        for pid in family
        if Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    }
    assert not alive, f"upstream processes left behind: {alive}"


def test_a_legacy_upstream_asks_a_2026_client_through_input_required_rounds():
    """Era translation: the upstream speaks the legacy era and asks with requests during the call;
    the proxy's client speaks 2026-07-28 and answers through MRTR rounds of its own call."""
    proxy = Server.proxy(UPSTREAM, name="up", era="legacy")
    asked: list[str] = []

    def elicitation(params):
        asked.append(params["message"])
        return {"name": "Ada"} if "name" in params["message"] else {"mood": "curious"}

    def sampling(params):
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    async def go():
        async with Client(proxy, era="modern", elicitation=elicitation, sampling=sampling, timeout=30) as c:
            assert c.negotiated_era == "modern"
            result = await c.call_tool("interview", {})
            assert result.text == "Ada is curious; the model said hi"
            assert asked == ["Your name?", "Your mood?"]  # each asked once, in order
            assert (await c.call_tool("pid", {})).data > 0

    arun(go(), timeout=60)


def test_server_everything_elicits_from_a_2026_client_through_the_proxy(everything):
    async def go():
        async with Client(everything, era="modern", elicitation=lambda p: {"name": "Ada"}, timeout=30) as c:
            elicited = await c.call_tool("trigger-elicitation-request", {})
            assert "Ada" in "\n".join(b["text"] for b in elicited.content if b["type"] == "text")

    arun(go(), timeout=90)


def test_what_the_upstream_asks_during_concurrent_calls_goes_to_the_client_of_each_call():
    """Two clients call at once through one proxy (over HTTP); the upstream asks each call's
    client its name while both calls are in flight; each client is asked about its own call
    only, and each call gets its own client's answer. In both eras of the proxy's clients."""
    # The upstream speaks 2026-07-28: what it asks is part of the call's answer. (A legacy stdio
    # upstream's requests carry no link to their call: docs/guides/gateways.md, limits.)
    each_caller_is_asked_alone(Server.proxy(UPSTREAM, name="up", era="modern"))


def test_resource_subscriptions_pass_through_a_gateway_under_its_names():
    """A gateway's client subscribes to a namespaced URI: the proxy subscribes upstream (the
    upstream tells only its subscribers), and the upstream's update reaches the client under the
    gateway's name for it; after unsubscribing, no more. In both eras of the gateway's clients."""
    gateway = Server("gw")
    gateway.mount(Server.proxy(UPSTREAM, name="up"), namespace="up")

    async def go(era: str) -> None:
        updated: asyncio.Queue[str] = asyncio.Queue()

        def on_notification(method, params):
            if method == "notifications/resources/updated":
                updated.put_nowait(params["uri"])

        async with Client(gateway, era=era, on_notification=on_notification, timeout=30) as c:
            assert (await c.read_resource("note://up/7"))[0].text == "note 7"
            await c.subscribe("note://up/7")
            await c.call_tool("up__touch", {"id": "7"})
            assert await within(updated.get()) == "note://up/7"
            await c.unsubscribe("note://up/7")
            await c.subscribe("note://up/8")
            await c.call_tool("up__touch", {"id": "7"})  # nobody subscribed to it any more
            await c.call_tool("up__touch", {"id": "8"})
            assert await within(updated.get()) == "note://up/8"  # the first to come is 8's

    async def both():
        await go("legacy")
        await go("modern")

    arun(both(), timeout=60)


def test_a_tool_the_upstream_runs_as_a_task_is_served_as_a_task():
    """A 2025-11-25 upstream tool with execution.taskSupport "required": the proxy lists it so,
    serves it as a task to its client, and calls it upstream as a task, followed to its result."""
    proxy = Server.proxy(UPSTREAM, name="up", era="legacy")

    async def go():
        async with Client(proxy, era="legacy", protocol_version="2025-06-18", timeout=30) as c:
            # an era before tasks, a plain call (no progress token: one the proxy relays when it
            # can): upstream it is still called as a task
            result = await c.request("tools/call", {"name": "slow_sum", "arguments": {"a": 5, "b": 6}})
            assert result["structuredContent"] == {"result": 11}, result
        async with Client(proxy, era="legacy", timeout=30) as c:
            listed = {t.name: dict(t) for t in await c.list_tools()}
            assert listed["slow_sum"]["execution"] == {"taskSupport": "required"}
            assert (await c.call_tool("slow_sum", {"a": 2, "b": 40})).data == 42
        async with Client(proxy, era="modern", timeout=30) as c:  # the tasks extension's handle, followed
            assert (await c.call_tool("slow_sum", {"a": 1, "b": 2})).data == 3

    arun(go(), timeout=60)


@pytest.mark.parametrize(("upstream_era", "era", "code"), [("legacy", "modern", -32602), ("modern", "legacy", -32002)])
def test_an_upstream_resource_not_found_reaches_the_client_in_its_era_s_code_and_under_the_served_uri(
    upstream_era, era, code
):
    """The upstream answers ``resources/read`` of a URI of its template with "not found", in its
    era's code; the gateway's client gets its own era's code (legacy -32002, 2026-07-28 -32602)
    and the URI it read (the gateway's name for it). It got the upstream's code and URI as they came."""
    gateway = Server("gw")
    gateway.mount(Server.proxy(UPSTREAM, name="up", era=upstream_era), namespace="up")

    async def go() -> None:
        async with Client(gateway, era=era, timeout=30) as c:
            with pytest.raises(ResourceNotFound) as caught:
                await c.read_resource("gone://up/7")
            assert (caught.value.code, caught.value.uri) == (code, "gone://up/7")
            assert "gone://up/7" in str(caught.value)

    arun(go(), timeout=60)


def test_the_upstream_gets_the_roots_of_the_proxys_sole_client_outside_any_call():
    """An upstream asks ``roots/list`` outside any call: right after initialize and on
    ``roots/list_changed`` (the reference filesystem server does). Through a proxy it gets the
    roots of the proxy's one client and hears that client's changes; with a second client it
    gets none (whose would they be?), and the first one's again once the second has left. It got
    no roots at all outside a call, and never heard of a change (nor, until the first client's
    next change, of the second one leaving)."""
    proxy = Server.proxy(ROOTS_UPSTREAM, name="up")
    changed = asyncio.Event()

    async def go():
        on = tools_changed(changed)
        async with Client(proxy, era="legacy", roots=["file:///a"], on_notification=on, timeout=30) as c:
            await upstream_learns(c, changed, "roots", ["file:///a"])
            await c.set_roots(["file:///b", "file:///c"])
            await upstream_learns(c, changed, "roots", ["file:///b", "file:///c"])
            async with Client(proxy, era="legacy", roots=["file:///d"], timeout=30):
                await upstream_learns(c, changed, "roots", [])
            await upstream_learns(c, changed, "roots", ["file:///b", "file:///c"])  # the sole client again
            await c.set_roots(["file:///e"])
            await upstream_learns(c, changed, "roots", ["file:///e"])

    arun(go(), timeout=60)


@pytest.mark.parametrize("upstream_era", ["legacy", "modern"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_upstream_asking_roots_of_a_client_without_roots_gets_none_and_the_call_goes_on(era, upstream_era):
    """The upstream asks ``roots/list`` during a call whose client declared no ``roots``: it gets
    an empty list and the call answers. A 2026-07-28 client's call failed whole with -32021
    (the proxy asked the client in a round it could not take); server-everything asks its roots
    so, right after initialize, and a call in flight then failed now and then."""
    upstream = Server("asks-roots")

    @upstream.tool
    async def roots_now(ctx: Context) -> list[str]:
        return [r["uri"] for r in await ctx.list_roots()]

    proxy = Server.proxy(upstream, name="up", era=upstream_era)

    async def go() -> None:
        async with Client(proxy, era=era, timeout=30) as c:
            assert (await c.call_tool("roots_now", {}))["structuredContent"] == {"result": []}

    arun(go(), timeout=60)


def test_a_proxied_prompt_is_rendered_through_a_gateway():
    """A proxy mounted under a namespace (every gateway's upstream: ``Server.from_config``) asks
    its upstream for the prompt by the upstream's name: it asked for ``up__greet``, which the
    upstream does not have ("Unknown prompt"), so no proxied prompt rendered through a gateway."""
    upstream = Server("up")

    @upstream.prompt
    def greet(who: str) -> str:
        return f"hello {who}"

    gateway = Server("gateway")
    gateway.mount(Server.proxy(upstream, name="up"), "up")

    async def go() -> None:
        for era in ("legacy", "modern"):
            async with Client(gateway, era=era, timeout=30) as c:
                message = (await c.get_prompt("up__greet", {"who": "you"}))["messages"][0]
                assert message["content"]["text"] == "hello you", era

    arun(go(), timeout=60)


@pytest.mark.parametrize(
    "version,link,audio",
    [
        ("2024-11-05", "text", "text"),  # neither block type exists yet
        ("2025-03-26", "text", "audio"),  # audio, no resource links
        ("2025-06-18", "resource_link", "audio"),
    ],
)
def test_a_proxied_result_has_only_the_blocks_the_clients_version_has(version, link, audio):
    """The upstream (speaking the newest version) answers with a resource link and audio; a
    client of the proxy on an older version gets what its version has: a block it lacks is the
    text mcpio's own tools downgrade it to, in tool results and prompt messages. The blocks went
    through as they came, in shapes the client's schema rejects."""
    from mcpio import Audio, ResourceLink

    upstream = Server("newest")

    @upstream.tool
    def media():  # content blocks, no output schema
        return [
            ResourceLink("mem://report", "report", description="the report"),
            Audio(data=b"RIFF", mime_type="audio/wav"),
        ]

    @upstream.prompt
    def linked():
        return [{"role": "user", "content": ResourceLink("mem://report", "report").to_block()}]

    proxy = Server.proxy(upstream, name="up")

    async def go() -> None:
        async with Client(proxy, protocol_version=version, timeout=30) as c:
            blocks = (await c.call_tool("media", {}))["content"]
            assert [b["type"] for b in blocks] == [link, audio]
            if link == "text":
                assert blocks[0]["text"] == "Resource: mem://report (the report)"
            message = (await c.get_prompt("linked"))["messages"][0]["content"]
            assert message["type"] == link

    arun(go(), timeout=60)


def test_a_gateway_mounted_in_another_server_serves_its_upstreams_from_the_first_request(tmp_path):
    """``outer.mount(Server.from_config(path))``: the outer server announces the kinds the
    gateway's upstreams may bring, and its first request already finds their tools. It announced
    no tools (a typed client then refuses every call) and answered "Unknown tool" until the
    upstreams had started."""
    config = tmp_path / "team.json"
    config.write_text(json.dumps({"mcpServers": {"up": {"command": UPSTREAM[0], "args": UPSTREAM[1:]}}}))
    outer = Server("outer")
    outer.mount(Server.from_config(str(config)), namespace="gw")

    async def go() -> None:
        async with Client(outer, timeout=30) as c:
            assert {"tools", "prompts", "resources"} <= set(c.server_capabilities)
            assert (await c.call_tool("gw__up__echo", {"text": "hi"})).text == "hi"

    arun(go(), timeout=60)


def test_the_sole_client_of_a_server_a_proxy_is_mounted_in_by_two_ways_gives_it_its_roots():
    """A proxy mounted in two servers that are both mounted in a third: that server's one client
    is the proxy's sole client, and the upstream gets its roots. Its session was counted once per
    way up to it (two clients, whose roots would govern the others' calls?), so the upstream got
    no roots."""
    upstream = Server.proxy(ROOTS_UPSTREAM, name="up")
    left, right, outer = Server("left"), Server("right"), Server("outer")
    left.mount(upstream, namespace="up")
    right.mount(upstream, namespace="up")
    outer.mount(left, namespace="l")
    outer.mount(right, namespace="r")
    changed = asyncio.Event()

    async def go():
        async with Client(outer, era="legacy", roots=["file:///a"], on_notification=tools_changed(changed)) as c:
            await upstream_learns(c, changed, "l__up__roots", ["file:///a"])

    arun(go(), timeout=60)


def test_the_sole_client_of_a_gateway_gives_its_roots_to_every_upstream(tmp_path):
    entry = {"command": ROOTS_UPSTREAM[0], "args": ROOTS_UPSTREAM[1:]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"one": entry, "two": entry}}))
    gateway = Server.from_config(str(config))
    changed = asyncio.Event()

    async def go():
        on = tools_changed(changed)
        async with Client(gateway, era="legacy", roots=["file:///a"], on_notification=on, timeout=30) as c:
            for tool in ("one__roots", "two__roots"):
                await upstream_learns(c, changed, tool, ["file:///a"])
            await c.set_roots(["file:///b"])
            for tool in ("one__roots", "two__roots"):
                await upstream_learns(c, changed, tool, ["file:///b"])

    arun(go(), timeout=60)


def test_a_proxied_mcp_app_keeps_its_app_only_tools_for_hosts_and_hides_them_from_other_clients():
    """``Server.proxy`` of ``examples/apps_calculator.py`` (a subprocess), served over Streamable
    HTTP on 127.0.0.1: a host that declared MCP Apps gets the app-only ``double`` (its view calls
    it) with every ``_meta.ui`` key, and the extension announced (2026-07-28); a client that did
    not declare it gets ``add`` alone, as from the app itself (ext-apps §Visibility)."""
    from mcpio._client._apps import APPS_HOST

    proxy = Server.proxy([sys.executable, str(HERE.parents[1] / "examples" / "apps_calculator.py")])

    async def go(url: str) -> None:
        for era in ("legacy", "modern"):
            async with Client(url, era=era, extensions=APPS_HOST) as host:
                tools = {t.name: t["_meta"] for t in await host.list_tools()}
                assert tools == {
                    "add": {"ui": {"resourceUri": "ui://calculator/view", "visibility": ["model", "app"]}},
                    "double": {"ui": {"resourceUri": "ui://calculator/view", "visibility": ["app"]}},
                }
                assert (await host.call_tool("double", {"value": 4})).content[0]["text"] == "8"
                assert (await host.app_view("add")).prefers_border is True
                if era == "modern":
                    assert "io.modelcontextprotocol/ui" in host.server_capabilities.extensions
            async with Client(url, era=era) as plain:
                assert [t.name for t in await plain.list_tools()] == ["add"]

    with ServerThread(proxy.http_app()) as served:
        arun(go(served.url))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_proxy_announces_its_upstreams_extensions_and_forwards_their_methods(era):
    """``acme/history``, a method of the ``com.example/history`` extension of the calculator app
    (a real subprocess), through ``Server.proxy``: forwarded as it is, its errors too; a method
    the upstream does not serve either is -32601; a 2026-07-28 client sees the extension announced."""
    proxy = Server.proxy([sys.executable, str(EXAMPLES / "apps_calculator.py")])

    async def go():
        async with Client(proxy, era=era, timeout=60) as c:
            assert (await c.call_tool("add", {"a": 2, "b": 3})).data == 5
            assert (await c.request("acme/history", {"last": 5}))["sums"] == [5]
            with pytest.raises(InvalidParams, match="last"):
                await c.request("acme/history", {"last": "all"})
            with pytest.raises(MethodNotFound):
                await c.request("acme/unknown", {})
            if era == "modern":
                assert c.server_capabilities.extensions["com.example/history"] == {}

    arun(go(), timeout=90)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_disable_stops_a_custom_method_of_a_proxys_upstream_a_mounted_server_and_its_own(era):
    """``disable("acme/history")`` on a proxy of the calculator app (a real subprocess) answers its
    requests -32601 instead of forwarding them, and ``enable`` serves them again; so does a
    method of a server mounted in another, disabled by the parent or by the child itself, and a
    server's own ``@server.method``. Tools are not touched."""
    proxy = Server.proxy([sys.executable, str(EXAMPLES / "apps_calculator.py")])
    outer, inner = Server("outer"), Server("inner")

    @inner.method("acme/inner")
    def inner_method() -> dict:
        return {"ok": True}

    @outer.method("acme/own")
    def own_method() -> dict:
        return {"own": True}

    outer.mount(inner, namespace="in")

    async def go():
        async with Client(proxy, era=era, timeout=60) as c:
            assert (await c.request("acme/history", {"last": 5}))["sums"] == []
            proxy.disable("acme/history")
            with pytest.raises(MethodNotFound):
                await c.request("acme/history", {"last": 5})
            assert (await c.call_tool("add", {"a": 2, "b": 3})).data == 5
            proxy.enable("acme/history")
            assert (await c.request("acme/history", {"last": 5}))["sums"] == [5]
        async with Client(outer, era=era) as c:
            assert (await c.request("acme/inner", {}))["ok"] is True
            outer.disable(["acme/inner", "acme/own"])
            for method in ("acme/inner", "acme/own"):
                with pytest.raises(MethodNotFound):
                    await c.request(method, {})
            outer.enable(["acme/inner", "acme/own"])
            inner.disable("acme/inner")
            with pytest.raises(MethodNotFound):
                await c.request("acme/inner", {})
            assert (await c.request("acme/own", {}))["own"] is True

    arun(go(), timeout=90)


def test_a_proxy_passes_an_extensions_notifications_both_ways():
    """A legacy client's ``acme/ping`` reaches the upstream through the proxy, and the upstream's
    ``acme/pushed`` reaches the proxy's client that declared ``com.acme/push`` (the proxy's own
    connection declares it: ``extensions=``), in a session of raw frames."""
    upstream = [sys.executable, str(HERE / "extended_upstream.py")]
    proxy = Server.proxy(upstream, era="legacy", extensions={"com.acme/push": {}})

    async def go():
        async with Peer(proxy, initialize=False) as peer:
            hello = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {"com.acme/push": {}}},  # as hosts send it (no member of 2025-11-25)
                "clientInfo": {"name": "mcpio-tests", "version": "1.0.0"},
            }
            peer.version = (await peer.request("initialize", hello, check=False))["result"]["protocolVersion"]
            await peer.notify("notifications/initialized")
            assert (await peer.call("acme/echo", {"text": "hi"})) == {"echo": "hi"}
            await peer.send({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": 3}}, check=False)
            while (await peer.call_tool("pings"))["structuredContent"]["result"] != [3]:
                pass  # (each a round trip to the upstream: it hears the ping before long)
            assert (await peer.call_tool("push_back"))["structuredContent"]["result"] == 1
            assert await peer.notification("acme/pushed") == {"x": 1}

    arun(go(), timeout=90)


def test_an_upstreams_extension_notification_skips_a_client_that_declared_only_mcp_apps():
    """The upstream's ``acme/pushed`` (of ``com.acme/push``) reaches the proxy's client that
    declared ``com.acme/push``, and not one that declared only MCP Apps (which every host does,
    and which the proxy's upstream connection declares for every proxy)."""
    upstream = [sys.executable, str(HERE / "extended_upstream.py")]
    proxy = Server.proxy(upstream, era="legacy", extensions={"com.acme/push": {}})

    async def go():
        async with Peer(proxy, initialize=False) as apps_only, Peer(proxy, initialize=False) as acme:
            await initialized_declaring(apps_only, "io.modelcontextprotocol/ui")
            await initialized_declaring(acme, "com.acme/push")
            assert (await acme.call_tool("push_back"))["structuredContent"]["result"] == 1
            assert await acme.notification("acme/pushed") == {"x": 1}
            await apps_only.barrier()  # told to both at once, before acme heard it: here by now if at all
            assert apps_only.notifications("acme/pushed") == []

    arun(go(), timeout=90)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_forwarded_custom_request_runs_as_long_as_the_upstream_takes_with_its_progress_and_cancel(era):
    """``acme/wait`` through ``Server.proxy`` (a real subprocess upstream) is forwarded as a call
    is: the upstream's progress reaches the caller, the proxy's own client timeout (2 s here)
    does not cut it (the caller's timeout is the caller's), and the caller cancelling it cancels
    it upstream."""
    upstream = [sys.executable, str(HERE / "extended_upstream.py")]
    proxy = Server.proxy(upstream, era=era, timeout=2.0)

    async def go():
        async with Client(proxy, era=era, timeout=60) as c:
            told = asyncio.Event()
            progress: list[str | None] = []

            async def on_progress(value, total, message):
                progress.append(message)
                told.set()

            first = asyncio.create_task(c.request("acme/wait", {}, on_progress=on_progress))
            try:
                await within(told.wait(), 20)  # the upstream's progress, relayed
                told.clear()
                second = asyncio.create_task(c.request("acme/wait", {}, on_progress=on_progress))
                await within(told.wait(), 20)
                second.cancel()
                while (await c.call_tool("waits")).data != ["cancelled"]:
                    pass  # (a round trip each: the upstream hears the cancel before long)
                await asyncio.sleep(2.5)  # past the proxy's client timeout: it must not apply
                await c.call_tool("release", {})
                assert (await first)["waited"] is True
                assert progress == ["waiting", "waiting"]
            finally:
                first.cancel()

    arun(go(), timeout=90)


def test_a_proxys_own_inactive_extension_refuses_its_method_rather_than_forward_it():
    """The proxy's owner serves ``acme/echo`` in an extension of its own that is inactive now
    (``active=``): the request is refused as on any server (-32601 naming the extension), never
    forwarded to the upstream, which serves a method of that name too (a real subprocess)."""
    proxy = Server.proxy([sys.executable, str(HERE / "extended_upstream.py")])
    guarded = proxy.extension("com.acme/guarded", active=lambda server: False)

    @guarded.method("acme/echo")
    def echo(text: str) -> dict:
        return {"echo": "the owner's"}

    async def go():
        async with Client(proxy, era="legacy", timeout=60) as c:
            with pytest.raises(MethodNotFound, match="com.acme/guarded"):
                await c.request("acme/echo", {"text": "hi"})

    arun(go(), timeout=90)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_forwarded_custom_result_carries_the_proxys_server_info_not_the_upstreams(era):
    """A custom request through ``Server.proxy(name="gw")`` of a 2026-07-28 upstream (a real
    subprocess): the result keeps the upstream's own ``_meta`` (``com.acme/stamp``), but the
    protocol's members are the proxy's: a 2026-07-28 client reads serverInfo ``gw`` there, a legacy
    client none (its version has no such member)."""
    proxy = Server.proxy([sys.executable, str(HERE / "extended_upstream.py")], era="modern", name="gw")
    frames: list[bytes] = []

    async def go():
        async with Client(proxy, era=era, timeout=60, trace=lambda way, frame: frames.append(frame)) as c:
            await c.request("acme/stamped", {})
        answer = next(m["result"] for m in map(json.loads, frames) if "ok" in m.get("result", {}))
        meta = answer["_meta"]
        assert answer["ok"] is True and meta["com.acme/stamp"] == 7
        assert meta.get("io.modelcontextprotocol/serverInfo", {}).get("name") == ("gw" if era == "modern" else None)

    arun(go(), timeout=90)


def test_a_custom_method_http_cannot_carry_is_refused_not_left_unanswered():
    """A client of ``Server.proxy`` of a 2026-07-28 upstream over Streamable HTTP (on 127.0.0.1)
    sends a custom method whose name holds a line break, which the ``Mcp-Method`` header cannot
    carry: it is answered -32600 saying so, whether the upstream connection is idle or busy with
    another request (which is answered as ever), and the next request is served."""
    import threading

    upstream = Server("upstream")
    started, go_on = threading.Event(), threading.Event()

    @upstream.method("acme/echo")
    def echo(text: str) -> dict:
        return {"echo": text}

    @upstream.method("acme/hold")
    async def hold() -> dict:
        started.set()
        await asyncio.to_thread(go_on.wait, 30)
        return {"held": True}

    async def go(url: str) -> None:
        async with Peer(Server.proxy(url, era="modern"), timeout=30) as peer:
            error = await within(peer.error("acme/\nnewline", {}, check=False), 20)  # the connection idle
            assert error["code"] == -32600 and "Mcp-Method header" in error["message"]
            _, holding = await peer.start("acme/hold", {}, check=False)
            await asyncio.to_thread(started.wait, 20)
            error = await within(peer.error("acme/\rreturn", {}, check=False), 20)  # while it is busy
            assert error["code"] == -32600 and "Mcp-Method header" in error["message"]
            go_on.set()
            assert (await within(holding, 20))["result"]["held"] is True
            assert await peer.call("acme/echo", {"text": "still here"}) == {"echo": "still here"}

    with ServerThread(upstream.http_app()) as served:
        arun(go(served.url), timeout=90)
