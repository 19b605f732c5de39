"""Spans and metrics of a real Streamable HTTP server (uvicorn on 127.0.0.1) driven on the wire
with httpx: both eras, W3C trace context from the ``traceparent`` header and from
``params._meta`` (SEP-414), errors, SSE streams and sessions counted, and nothing secret in
anything exported."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from mcpio import MCPError, Server, ToolError
from tests.http.conftest import initialize, modern, modern_headers, rpc, session_headers
from tests.otel.conftest import Telemetry
from tests.support.http import ServerThread

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TOKEN = "Bearer tok-SECRET-7f3a9c"
ARGUMENT = "argument-SECRET-51d2"
RESULT = "result-SECRET-a0e4"


def make_server(name: str = "otel-http") -> Server:
    server = Server(name, telemetry=True)

    @server.tool
    def echo(text: str) -> str:
        """Echo with a secret of its own."""
        return f"{RESULT} {len(text)}"

    @server.tool
    def refuse(text: str) -> str:
        raise ToolError("no")

    @server.tool
    def crash(text: str) -> str:
        raise ValueError(f"crashed on {text}")

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return "a note"

    return server


@pytest.fixture
def srv(request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    with ServerThread(make_server(request.node.name).http_app()) as srv:  # its name: its sessions counted apart
        yield srv


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def call(http: httpx.Client, srv: ServerThread, sid: str, id: int, method: str, params: dict, **headers: str) -> dict:
    r = http.post(srv.url, json=rpc(id, method, params), headers=session_headers(sid, **headers))
    assert r.status_code == 200, r.text
    return r.json()


def test_a_legacy_tool_call_is_one_server_span_under_the_traceparent_header(
    srv: ServerThread, http: httpx.Client, otel: Telemetry
) -> None:
    sid = initialize(http, srv.url)
    answer = call(
        http,
        srv,
        sid,
        7,
        "tools/call",
        {"name": "echo", "arguments": {"text": ARGUMENT}},
        traceparent=TRACEPARENT,
        authorization=TOKEN,
    )
    assert RESULT in answer["result"]["content"][0]["text"]
    span = otel.span("tools/call echo")
    assert span.kind is SpanKind.SERVER
    assert span.status.status_code is StatusCode.UNSET
    assert span.context.trace_id == int(TRACE_ID, 16)
    assert span.parent is not None and span.parent.span_id == int(PARENT_ID, 16) and span.parent.is_remote
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "7",
        "mcp.protocol.version": "2025-11-25",
        "mcp.session.id": hashlib.sha256(sid.encode()).hexdigest()[:16],
        "network.transport": "tcp",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
    }
    # the initialize span of the same session: its own trace (no traceparent was sent with it)
    init = otel.span("initialize")
    assert init.parent is None and init.context.trace_id != span.context.trace_id
    exported = otel.exported_text()
    for secret in (TOKEN, "tok-SECRET", ARGUMENT, RESULT, sid):
        assert secret not in exported


def test_meta_traceparent_wins_over_the_header_and_the_handler_sees_it(
    srv: ServerThread, http: httpx.Client, otel: Telemetry
) -> None:
    sid = initialize(http, srv.url)
    other = "0af7651916cd43dd8448eb211c80319c"
    meta = {"traceparent": f"00-{other}-b7ad6b7169203331-01", "tracestate": "vendor=x"}
    call(
        http,
        srv,
        sid,
        1,
        "tools/call",
        {"name": "echo", "arguments": {"text": "a"}, "_meta": meta},
        traceparent=TRACEPARENT,
    )
    span = otel.span("tools/call echo")
    assert span.context.trace_id == int(other, 16)
    assert span.parent is not None and span.parent.span_id == 0xB7AD6B7169203331
    assert span.context.trace_state.get("vendor") == "x"


def test_a_modern_request_is_parented_by_the_traceparent_header(
    srv: ServerThread, http: httpx.Client, otel: Telemetry
) -> None:
    r = http.post(
        srv.url,
        json=modern(3, "tools/call", {"name": "echo", "arguments": {"text": ARGUMENT}}),
        headers=modern_headers("tools/call", "echo", traceparent=TRACEPARENT, authorization=TOKEN),
    )
    assert r.status_code == 200, r.text
    span = otel.span("tools/call echo")
    assert span.context.trace_id == int(TRACE_ID, 16) and span.parent is not None
    attrs = dict(span.attributes or {})
    assert attrs["mcp.protocol.version"] == "2026-07-28"
    assert "mcp.session.id" not in attrs  # the stateless era has no sessions
    assert ARGUMENT not in otel.exported_text() and "tok-SECRET" not in otel.exported_text()


def test_errors_carry_their_code_and_outcome_never_their_message(
    srv: ServerThread, http: httpx.Client, otel: Telemetry
) -> None:
    sid = initialize(http, srv.url)
    before = otel.value("mcp.server.operation.duration", mcp__method__name="tools/call", error__type="tool_error")
    unknown = call(http, srv, sid, 1, "tools/call", {"name": "nope", "arguments": {}})
    assert "error" in unknown
    code = str(unknown["error"]["code"])
    assert call(http, srv, sid, 2, "tools/call", {"name": "refuse", "arguments": {"text": "x"}})["result"]["isError"]
    crashed = call(http, srv, sid, 3, "tools/call", {"name": "crash", "arguments": {"text": ARGUMENT}})
    assert call(http, srv, sid, 4, "prompts/get", {"name": "p"})["error"]["code"] == -32601

    plain = otel.span("tools/call")  # an unknown tool's name is not an attribute (nor the span's)
    assert dict(plain.attributes or {})["error.type"] == code
    assert dict(plain.attributes or {})["rpc.response.status_code"] == code
    assert plain.status.status_code is StatusCode.ERROR and not plain.status.description
    assert "gen_ai.tool.name" not in dict(plain.attributes or {})
    assert dict(otel.span("tools/call refuse").attributes or {})["error.type"] == "tool_error"
    crash = dict(otel.span("tools/call crash").attributes or {})
    if "error" in crashed:  # an unexpected exception is a JSON-RPC error or an isError result
        assert crash["error.type"] == "ValueError" and crash["rpc.response.status_code"] == "-32603"
    else:
        assert crash["error.type"] == "tool_error"
    missing = dict(otel.span("prompts/get").attributes or {})
    assert missing["error.type"] == "-32601" and "gen_ai.prompt.name" not in missing
    assert all(not s.events for s in otel.spans())  # no exception events (their text quotes input)
    assert ARGUMENT not in otel.exported_text()

    # requests by method and outcome: the duration histogram's count per mcp.method.name and error.type
    tool_errors = otel.value("mcp.server.operation.duration", mcp__method__name="tools/call", error__type="tool_error")
    assert tool_errors == before + (1 if "error" in crashed else 2)
    assert otel.value("mcp.server.operation.duration", mcp__method__name="prompts/get", error__type="-32601") >= 1


def test_a_templated_resource_is_named_by_its_template_not_its_uri(
    srv: ServerThread, http: httpx.Client, otel: Telemetry
) -> None:
    sid = initialize(http, srv.url)
    assert "result" in call(http, srv, sid, 1, "resources/read", {"uri": f"notes://{ARGUMENT}"})
    attrs = dict(otel.span("resources/read").attributes or {})
    assert attrs["mcpio.resource.template"] == "notes://{name}" and "mcp.resource.uri" not in attrs
    assert ARGUMENT not in otel.exported_text()


def _until(check: object, what: str) -> None:
    """Metrics are read by collecting them: the server thread updates them when a stream has
    closed on its side, which the client cannot await; so collect until it shows (bounded)."""
    for _ in range(500):
        if check():  # type: ignore[operator]
            return
        time.sleep(0.01)
    raise AssertionError(what)


def test_sessions_and_sse_streams_open_are_counted(srv: ServerThread, http: httpx.Client, otel: Telemetry) -> None:
    def sessions() -> int:
        return int(
            otel.value("mcpio.server.sessions", mcpio__server__name="test_sessions_and_sse_streams_open_are_counted")
        )

    def streams() -> int:
        return int(otel.value("mcpio.server.sse_streams"))

    assert sessions() == 0 and streams() == 0
    sid = initialize(http, srv.url, "2025-06-18")  # before 2025-11-25's polling: the GET stream stays open
    assert sessions() == 1
    headers = session_headers(sid, "2025-06-18")
    with http.stream("GET", srv.url, headers={**headers, "accept": "text/event-stream"}) as get:
        assert get.status_code == 200
        chunks = get.iter_raw()  # kept: a closed iterator would close the stream
        assert next(chunks).startswith(b":")  # the stream is open: its first comment came
        assert streams() == 1
        assert http.delete(srv.url, headers=headers).status_code in (200, 204)
    _until(lambda: streams() == 0, "the SSE stream is still counted after it ended")
    _until(lambda: sessions() == 0, "the session is still counted after DELETE")
    assert otel.value("mcp.server.operation.duration", mcp__method__name="initialize") >= 1


def test_a_bad_traceparent_header_is_ignored(srv: ServerThread, http: httpx.Client, otel: Telemetry) -> None:
    sid = initialize(http, srv.url)
    call(http, srv, sid, 1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}, traceparent="00-zz-yy-01")
    assert otel.span("tools/call echo").parent is None


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_client_span_is_the_parent_of_the_server_span(srv: ServerThread, otel: Telemetry, era: str) -> None:
    from mcpio import Client

    params = {"text": ARGUMENT}

    async def main() -> None:
        async with Client(srv.url, era=era, telemetry=True, headers={"Authorization": TOKEN}) as client:
            await client.call_tool("echo", params)
            with pytest.raises(MCPError):
                await client.request("prompts/get", {"name": "missing"})  # raw: no capability check

    asyncio.run(main())
    assert params == {"text": ARGUMENT}  # the caller's arguments were not touched
    client_span = [s for s in otel.spans("tools/call echo") if s.kind is SpanKind.CLIENT]
    server_span = [s for s in otel.spans("tools/call echo") if s.kind is SpanKind.SERVER]
    assert len(client_span) == 1 and len(server_span) == 1
    assert server_span[0].parent is not None
    assert server_span[0].parent.span_id == client_span[0].context.span_id
    assert server_span[0].context.trace_id == client_span[0].context.trace_id
    assert dict(client_span[0].attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
    }
    failed = [s for s in otel.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("prompts/get")]
    assert len(failed) == 1 and failed[0].status.status_code is StatusCode.ERROR
    assert dict(failed[0].attributes or {})["error.type"] == "-32601"
    assert otel.value("mcp.client.operation.duration", mcp__method__name="tools/call") >= 1
    exported = otel.exported_text()
    assert ARGUMENT not in exported and RESULT not in exported and "tok-SECRET" not in exported


def test_a_body_in_many_chunks_gets_the_header_context_and_an_oversized_one_is_still_refused(
    otel: Telemetry, http: httpx.Client
) -> None:
    with ServerThread(make_server("chunks").http_app(max_body_size=4096)) as srv:
        sid = initialize(http, srv.url)
        body = json.dumps(rpc(5, "tools/call", {"name": "echo", "arguments": {"text": "x" * 1000}})).encode()
        pieces = [body[i : i + 100] for i in range(0, len(body), 100)]
        headers = session_headers(sid, traceparent=TRACEPARENT, **{"content-type": "application/json"})
        r = http.post(srv.url, content=iter(pieces), headers=headers)  # chunked: many ASGI messages
        assert r.status_code == 200 and "result" in r.json(), r.text
        assert otel.span("tools/call echo").context.trace_id == int(TRACE_ID, 16)
        big = json.dumps(rpc(6, "tools/call", {"name": "echo", "arguments": {"text": "x" * 8000}})).encode()
        r = http.post(srv.url, content=iter([big[i : i + 1000] for i in range(0, len(big), 1000)]), headers=headers)
        assert r.status_code == 413
        assert len(otel.spans("tools/call echo")) == 1  # the oversized request never ran


def test_the_traced_app_reads_as_the_app_under_it(otel: Telemetry) -> None:
    """With telemetry ``http_app`` returns a wrapper: the app's public attributes read through it
    (the options given, its legacy sessions, ``draining``), and ``lifespan`` serves it mounted in
    a framework that does not forward ASGI lifespan events."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    options = {
        "allowed_hosts": ["example.com"],
        "allowed_origins": ["https://example.com"],
        "max_body_size": 4096,
        "session_timeout": 60.0,
        "max_sessions": 7,
        "retry_ms": 250,
        "keepalive": 5.0,
        "sse_after": 0.5,
    }
    traced, plain = make_server().http_app("/x", **options), Server("plain").http_app("/x", **options)
    assert type(traced) is not type(plain)  # the wrapper, else this test shows nothing
    for name in ("path", "allowed_hosts", "allowed_origins", "max_body_size", "session_timeout", "max_sessions"):
        assert getattr(traced, name) == getattr(plain, name), name
    for name in ("retry_ms", "keepalive", "sse_after", "draining", "sessions", "state"):
        assert getattr(traced, name) == getattr(plain, name), name
    assert type(traced.event_store) is type(plain.event_store)

    app = make_server().http_app()
    with ServerThread(Starlette(routes=[Mount("/api", app=app)], lifespan=app.lifespan), path="/api/mcp") as srv:
        with httpx.Client(timeout=10) as http:
            initialize(http, srv.url)
        assert srv.call(lambda: len(app.sessions)) == 1
