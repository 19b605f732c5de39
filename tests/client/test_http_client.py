"""The client over Streamable HTTP, both eras: against the official ``mcp`` SDK's HTTP server
(a subprocess: uvicorn on 127.0.0.1, a port the OS picks) and its deprecated HTTP+SSE app, and
against mcpio's own HTTP server (``Server.http_app`` in a uvicorn thread). The conformance
suite's client scenarios (tests/conformance/test_client_conformance.py) cover the rest."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import msgspec
import pytest

from mcpio import Client, ConnectionClosed, Context, HeaderMismatch, MCPError, RequestTimeout, Server
from mcpio._client import _era
from tests.client.support import EXAMPLES, SERVERS, arun
from tests.support.http import ServerThread, wait_port

ERAS = ["legacy", "modern", "auto"]


@contextlib.contextmanager
def sdk_server(kind: str) -> Iterator[str]:
    """tests/servers/sdk_server.py --http|--sse in a subprocess; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_server.py"), kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        port = int(proc.stdout.readline())  # the server prints the port it bound first
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}" + ("/mcp" if kind == "--http" else "/sse")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    with sdk_server("--http") as url:
        yield url


def _load(path) -> Server:
    spec = importlib.util.spec_from_file_location(f"http_{path.stem}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


@contextlib.contextmanager
def serving(server: Server, **options: Any) -> Iterator[ServerThread]:
    with ServerThread(server.http_app(**options)) as srv:
        yield srv


# ---------------------------------------------------------------------- the official SDK's server
@pytest.mark.parametrize("era", ERAS)
def test_the_sdk_streamable_http_server(sdk_url, era, tmp_path):
    logs: list[str] = []
    sampled: list[str] = []

    def sampling(params):
        sampled.append(params["messages"][0]["content"]["text"])
        return "a walk"

    async def go():
        async with Client(
            sdk_url,
            era=era,
            sampling=sampling,
            elicitation=lambda p: {"name": "Ada"},
            roots=[tmp_path],
            on_log=lambda p: logs.append(p["data"]),
            timeout=30,
        ) as c:
            assert c.negotiated_era == ("legacy" if era == "legacy" else "modern")
            assert c.server_info["name"] == "sdk-peer" and c.instructions == "A server built with the official SDK."
            assert "plan" in {t["name"] for t in await c.list_tools()}
            assert (await c.call_tool("add", {"a": 2, "b": 40}))["structuredContent"] == {"result": 42}
            progress: list[tuple] = []
            r = await c.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, t)))
            assert r["structuredContent"] == {"result": "counted to 3"}
            assert progress == [(1, 3), (2, 3), (3, 3)] and logs == ["counted 1", "counted 2", "counted 3"]
            # Resolvers: a server→client request per answer (legacy, on the POST's SSE stream) or
            # input rounds (modern), answered by the same handlers.
            r = await c.call_tool("plan", {})
            assert r["structuredContent"] == {"result": f"Ada/7: a walk in {tmp_path.resolve().as_uri()}"}
            if era == "legacy":
                r = await c.call_tool("ask_llm", {"question": "the answer?"})
                assert r["structuredContent"] == {"result": "the model unknown said: a walk"}
            assert (await c.read_resource("users://7/profile"))[0]["text"] == "profile of user 7"
            got = await c.get_prompt("review", {"code": "x = 1"})
            assert got["messages"][0]["content"]["text"].endswith("x = 1")
            await c.ping()
            if era == "legacy":
                assert c._transport.session_id and c._transport.protocol_version == "2025-11-25"
            else:
                assert c._transport.session_id is None  # no sessions in 2026-07-28
        assert _era.ERA_CACHE["http:" + sdk_url] == c.negotiated_era

    arun(go(), timeout=60)


def test_the_deprecated_http_sse_transport_is_a_fallback():
    async def go():
        with sdk_server("--sse") as url:
            _era.ERA_CACHE.pop("http:" + url, None)
            async with Client(url, sampling=lambda p: "yes", timeout=30) as c:  # auto
                assert c.negotiated_era == "legacy"  # POSTs were refused (405): GET found an endpoint
                assert c._transport._sse is not None and "/messages/" in c._transport._sse.endpoint
                assert (await c.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
                r = await c.call_tool("ask_llm", {"question": "q"})  # a server request, over the stream
                assert r["structuredContent"] == {"result": "the model unknown said: yes"}

    arun(go(), timeout=60)


# ---------------------------------------------------------------------- mcpio's own HTTP server
@pytest.mark.parametrize("era", ERAS)
def test_mcpio_examples_over_http(era):
    async def go():
        with serving(_load(EXAMPLES / "quickstart.py")) as srv:
            logs: list[str] = []
            async with Client(srv.url, era=era, on_log=lambda p: logs.append(p["data"])) as c:
                assert c.negotiated_era == ("legacy" if era == "legacy" else "modern")
                assert c.server_info == {"name": "demo", "version": "1.0.0"}
                assert (await c.call_tool("add", {"a": 20, "b": 22}))["content"] == [{"type": "text", "text": "42"}]
                progress: list[float] = []
                r = await c.call_tool("slow_sum", {"values": [1, 2, 3]}, on_progress=lambda p, t, m: progress.append(p))
                assert r["structuredContent"] == {"result": 6.0} and progress == [0, 1, 2]
                assert logs == ["step 0", "step 1", "step 2"]
                assert (await c.read_resource("greeting://Ada"))[0]["text"] == "Hello, Ada!"
                done = await c.complete({"type": "ref/resource", "uri": "greeting://{name}"}, "name", "A")
                assert "values" in done
        with serving(_load(EXAMPLES / "trip_planner.py")) as srv:
            asked: list[str] = []

            def elicitation(p):
                asked.append("elicit")
                return {"budget": 30}

            def sampling(p):
                asked.append("sample")
                return "Harbour walk."

            async with Client(srv.url, era=era, elicitation=elicitation, sampling=sampling) as c:
                r = await c.call_tool("plan_trip", {"city": "Bergen"})
                assert r["content"][0]["text"] == "Itinerary for Bergen (30 EUR, relaxed):\nHarbour walk."
            assert asked == ["elicit", "sample"]

    arun(go(), timeout=60)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_notifications_outside_requests_reach_the_client(era):
    """Legacy: the standalone GET stream; modern: the subscriptions/listen stream."""
    server = _load(SERVERS / "dynamic_server.py")

    async def go():
        with serving(server) as srv:
            got: list[tuple[str, Any]] = []
            arrived = asyncio.Event()

            def on_notification(method, params):
                got.append((method, params))
                arrived.set()

            async with Client(srv.url, era=era, on_notification=on_notification) as c:
                await c.subscribe("memo://a")
                # From the server's own loop, outside any request; sent again until it arrives
                # (legacy: the GET stream opens by itself after notifications/initialized)
                while not any(m == "notifications/resources/updated" for m, _ in got):
                    arrived.clear()
                    srv.call(lambda: asyncio.ensure_future(server.notify_resource_updated("memo://a")))
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(arrived.wait(), 0.5)
                await c.unsubscribe("memo://a")

    arun(go(), timeout=60)


def test_legacy_sessions_end_with_delete_and_are_started_again_after_404():
    server = _load(EXAMPLES / "quickstart.py")

    async def go():
        with serving(server) as srv:
            async with Client(srv.url, era="legacy") as c:
                first = c._transport.session_id
                assert first
                async with httpx.AsyncClient() as http:  # end the session behind the client's back
                    r = await http.delete(srv.url, headers={"mcp-session-id": first})
                    assert r.status_code in (200, 204)
                assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
                second = c._transport.session_id
                assert second and second != first
            async with httpx.AsyncClient() as http:  # the client DELETEd its session when it closed
                r = await http.post(
                    srv.url,
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={
                        "mcp-session-id": second,
                        "mcp-protocol-version": "2025-11-25",
                        "accept": "application/json, text/event-stream",
                    },
                )
                assert r.status_code == 404

    arun(go(), timeout=60)


def test_a_response_stream_closed_by_the_server_is_resumed():
    server = Server("polling")

    @server.tool
    async def poll(ctx: Context) -> str:
        await ctx.close_sse_stream(retry_ms=200)  # SEP-1699: the client must come back with GET
        await asyncio.sleep(0.1)
        return "resumed"

    async def go():
        with serving(server) as srv:
            async with Client(srv.url, era="legacy") as c:
                loop = asyncio.get_running_loop()
                t0 = loop.time()
                assert (await c.call_tool("poll"))["content"][0]["text"] == "resumed"
                assert loop.time() - t0 >= 0.2  # the server's retry was honoured

    arun(go(), timeout=60)


def _header_server() -> Server:
    server = Server("headers")

    @server.tool
    def where(region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})], n: int = 0) -> str:
        return f"{region}/{n}"

    @server.tool
    def bad(score: Annotated[float, msgspec.Meta(extra_json_schema={"x-mcp-header": "Score"})]) -> float:
        return score  # x-mcp-header on a number: invalid, clients drop it over HTTP

    return server


def test_x_mcp_header_parameters_become_headers_and_invalid_tools_are_dropped():
    async def go():
        with serving(_header_server()) as srv:
            async with Client(srv.url, era="modern") as c:
                # Called before tools/list: the server refuses the missing Mcp-Param-Region
                # (-32020); the client lists the tools and retries with the header.
                assert (await c.call_tool("where", {"region": "Zürich ", "n": 2}))["content"][0]["text"] == "Zürich /2"
                assert c._transport._tools["where"] == {"region": ("region",)}
                assert [t["name"] for t in await c.list_tools()] == ["where"]  # "bad" is dropped
                with pytest.raises(HeaderMismatch) as info:  # a raw request is sent as given
                    await c.request("tools/call", {"name": "bad", "arguments": {"score": 1.5}})
                assert info.value.code == -32020
            async with Client(srv.url, era="legacy") as c:  # x-mcp-header is a 2026-07-28 rule
                assert {t["name"] for t in await c.list_tools()} == {"where", "bad"}

    arun(go(), timeout=60)


def test_cancelling_a_modern_request_closes_its_stream():
    server = Server("slow")
    cancelled = threading.Event()  # set on the server's thread

    @server.tool
    async def wait(seconds: float) -> str:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    async def go():
        with serving(server) as srv:
            async with Client(srv.url, era="modern") as c:
                with pytest.raises(RequestTimeout):
                    await c.call_tool("wait", {"seconds": 30}, timeout=0.5)
                for _ in range(100):
                    if cancelled.is_set():
                        break
                    await asyncio.sleep(0.05)
                assert cancelled.is_set()  # the server saw the closed stream as a cancellation

    arun(go(), timeout=60)


def test_unreachable_servers_and_http_errors_are_clear():
    async def go():
        with pytest.raises(ConnectionClosed, match="cannot reach the MCP server at http://127.0.0.1:9/mcp"):
            async with Client("http://127.0.0.1:9/mcp", timeout=10):
                pass

        async def not_mcp(scope, receive, send):  # any HTTP server that is not an MCP server
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"no such page"})

        with ServerThread(not_mcp) as srv:
            with pytest.raises(MCPError, match="HTTP 404 Not Found: no such page") as info:
                async with Client(srv.url, timeout=10):
                    pass
            assert info.value.data == {"status": 404}

    arun(go(), timeout=60)


def test_headers_go_with_every_request():
    seen: list[dict[str, str]] = []
    server = _load(EXAMPLES / "quickstart.py")
    app = server.http_app()

    async def recording(scope, receive, send):
        if scope["type"] == "http":
            seen.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await app(scope, receive, send)

    async def go():
        with ServerThread(recording) as srv:
            for era in ("legacy", "modern"):
                seen.clear()
                async with Client(srv.url, era=era, headers={"Authorization": "Bearer t0ken"}) as c:
                    await c.list_tools()
                assert seen and all(h.get("authorization") == "Bearer t0ken" for h in seen)
                posts = [h for h in seen if h.get("content-type") == "application/json"]
                if era == "modern":
                    assert all(h["mcp-protocol-version"] == "2026-07-28" and "mcp-method" in h for h in posts)
                else:
                    assert [h.get("mcp-session-id") is None for h in posts][:1] == [True]  # initialize
                    assert all(h.get("mcp-session-id") and h["mcp-protocol-version"] == "2025-11-25" for h in posts[1:])

    arun(go(), timeout=60)


def test_the_cli_speaks_http():
    def mcpio(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mcpio", *args], capture_output=True, text=True, timeout=60)

    with serving(_load(EXAMPLES / "quickstart.py")) as srv:
        out = mcpio("list", srv.url, "tools")
        assert out.returncode == 0 and "add" in out.stdout and "slow_sum" in out.stdout, out.stderr
        for era in ERAS:
            out = mcpio("call", srv.url, "add", "a=2", "b=3", "--era", era, "-H", "X-Trace: 1")
            assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr
        out = mcpio("read", srv.url, "greeting://Ada")
        assert out.stdout == "Hello, Ada!\n"
        out = mcpio("doctor", srv.url, "--json")
        assert out.returncode == 0, out.stdout + out.stderr
    out = mcpio("list", "http://127.0.0.1:9/mcp")  # nothing there: exit 3, "could not start or reach"
    assert out.returncode == 3 and "cannot reach the MCP server" in out.stderr


def test_a_bad_header_option_is_a_usage_error():
    out = subprocess.run(
        [sys.executable, "-m", "mcpio", "list", "http://127.0.0.1:9/mcp", "-H", "no-colon"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "Name: value" in out.stderr


def test_a_host_config_entry_with_a_url_and_headers(tmp_path):
    import json

    from mcpio import Host

    seen: list[str | None] = []
    app = _load(EXAMPLES / "quickstart.py").http_app()

    async def recording(scope, receive, send):
        if scope["type"] == "http":
            seen.append(dict(scope["headers"]).get(b"x-api-key", b"").decode() or None)
        await app(scope, receive, send)

    async def go():
        with ServerThread(recording) as srv:
            config = tmp_path / "mcp.json"
            config.write_text(
                json.dumps(
                    {
                        "mcpServers": {
                            "remote": {"type": "http", "url": srv.url, "headers": {"X-Api-Key": "${env:TEST_MCP_KEY}"}}
                        }
                    }
                )
            )
            import os

            os.environ["TEST_MCP_KEY"] = "s3cret"
            try:
                async with Host.from_config(str(config)) as host:
                    assert not host.errors
                    names = {t["name"] for t in await host.list_tools()}
                    assert names == {"remote__add", "remote__slow_sum"}
                    r = await host.call_tool("remote__add", {"a": 1, "b": 2})
                    assert r["structuredContent"] == {"result": 3}
            finally:
                del os.environ["TEST_MCP_KEY"]
        assert seen and set(seen) == {"s3cret"}

    arun(go(), timeout=60)
