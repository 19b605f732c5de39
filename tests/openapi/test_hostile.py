"""A generated server under hostile arguments (a model calling its tools) and hostile or broken
documents: what reaches the API on 127.0.0.1 (the echo app of test_requests, served by uvicorn) and
what the caller is told, never a secret."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import certifi
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mcpio import Client, ResourceNotFound, Server
from mcpio._openapi import OpenAPIError
from tests.openapi.test_requests import ANY, ECHO, RECEIVED, echo, param
from tests.support.http import ServerThread

MCPIO = [sys.executable, "-m", "mcpio"]

DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Hostile", "version": "1"},
    "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
    "paths": {
        "/users/{id}/profile": {
            "get": {"operationId": "profile", "parameters": [param("id", "path", {"type": "string"})], "responses": ANY}
        },
        "/files/{name}.json": {
            "get": {"operationId": "file", "parameters": [param("name", "path", {"type": "string"})], "responses": ANY}
        },
        "/pair/{a}/{b}/end": {
            "get": {
                "operationId": "pair",
                "parameters": [param("a", "path", {"type": "string"}), param("b", "path", {"type": "string"})],
                "responses": ANY,
            }
        },
        "/label/{x}": {
            "get": {
                "operationId": "label",
                "parameters": [param("x", "path", {"type": "string"}, style="label")],
                "responses": ANY,
            }
        },
        "/trace": {
            "get": {
                "operationId": "trace",
                "security": [{"token": []}],
                "parameters": [param("X-Trace", "header", {"type": "string"})],
                "responses": ANY,
            }
        },
    },
}


@pytest.fixture(scope="module")
def api() -> Iterator[ServerThread]:
    with ServerThread(ECHO) as srv:
        yield srv


def calls(server: Server, *tool_arguments: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with Client(server) as c:
            return [await c.call_tool(tool, arguments) for tool, arguments in tool_arguments]

    return asyncio.run(go())


def test_a_path_parameter_cannot_leave_its_segment_by_dot_segments_or_an_empty_value(api: ServerThread):
    """A value that makes its segment ``..``, ``.`` or empty would reach another path once the URL is
    normalised (RFC 3986 §5.2.4; ``//`` merged by proxies): refused, and nothing is sent."""
    server = Server.from_openapi(DOC, base_url=f"{api.base}/api")
    hostile = calls(
        server,
        ("profile", {"id": ".."}),  # /api/profile
        ("pair", {"a": "..", "b": ".."}),  # /end: above the base URL's /api
        ("label", {"x": "."}),  # label style: "." + "." is ".."
        ("profile", {"id": ""}),  # /api/users//profile
        ("profile", {"id": None}),  # a path parameter left unfilled
    )
    for result in hostile:
        assert result["isError"] is True, result
        assert result["content"][0]["text"].startswith("Invalid arguments for "), result
    assert "cannot have its segment '{id}' be '..'" in hostile[0]["content"][0]["text"]
    fine = calls(server, ("profile", {"id": "../x"}), ("profile", {"id": "a..b"}), ("file", {"name": "."}))
    assert [r["structuredContent"]["path"] for r in fine] == [
        "/api/users/..%2Fx/profile",
        "/api/users/a..b/profile",
        "/api/files/..json",  # not a dot segment
    ]


def test_header_values_never_carry_line_breaks_and_errors_never_carry_secrets(api: ServerThread):
    """An argument with CR/LF is the caller's error; a credential read with its file's newline is
    sent without it; a configured header that cannot be sent is named, its value never shown (the
    HTTP library's own message quotes it: a token in the model's context)."""
    server = Server.from_openapi(DOC, base_url=api.base, secrets={"token": "api-token\n"})
    injected, unicode, sent = calls(
        server, ("trace", {"X-Trace": "a\r\nX-Evil: 1"}), ("trace", {"X-Trace": "café"}), ("trace", {"X-Trace": "t1"})
    )
    assert injected["isError"] is True
    assert injected["content"][0]["text"] == (
        "Invalid arguments for trace: argument 'X-Trace' is an HTTP header: it cannot hold line breaks or control characters"
    )
    assert unicode["structuredContent"]["headers"]["x-trace"].encode("latin-1").decode() == "café"  # UTF-8 bytes
    assert RECEIVED[-1]["headers"] == {"authorization": "Bearer api-token", "x-trace": "t1"}  # the newline dropped
    assert sent["structuredContent"]["headers"] == {"authorization": "Bearer [redacted]", "x-trace": "t1"}

    def hook(ctx: Any) -> dict[str, str]:
        return {"X-Key": "hook-secret\r\n"}

    (bad,) = calls(Server.from_openapi(DOC, base_url=api.base, credentials=hook), ("trace", {}))
    assert bad["isError"] is True and "hook-secret" not in bad["content"][0]["text"]
    assert bad["content"][0]["text"].startswith("GET /trace: the X-Key header configured for the API")
    (down,) = calls(Server.from_openapi(DOC, base_url="http://ada:pass-word@127.0.0.1:9"), ("trace", {}))
    assert down["isError"] is True and "pass-word" not in down["content"][0]["text"]
    assert "cannot reach the API at http://127.0.0.1:9/ (ConnectError" in down["content"][0]["text"]
    logged_in = Server.from_openapi(
        DOC, base_url=f"http://ada:pass-word@{api.base[7:]}", route_map={"profile": "resource"}
    )

    async def templates() -> list[Any]:
        async with Client(logged_in) as c:
            return [t["uriTemplate"] for t in await c.list_resource_templates()]

    assert asyncio.run(templates()) == [f"{api.base}/users/{{id}}/profile"]  # every client sees a URI


def test_a_base_url_that_cannot_be_called_is_refused_at_start(tmp_path: Any):
    """Not on every call with a connection error (a server variable without a default, no scheme)."""
    region = {**DOC, "servers": [{"url": "https://{region}.example.com", "variables": {"region": {"enum": ["eu"]}}}]}
    with pytest.raises(OpenAPIError, match=r"servers URL 'https://\{region\}.example.com' has a \{variable\} without"):
        Server.from_openapi(region)
    with pytest.raises(OpenAPIError, match=r"base_url 'api.example.com' is not an http\(s\) URL with a host"):
        Server.from_openapi(DOC, base_url="api.example.com")
    with pytest.raises(OpenAPIError, match=r"base_url 'ftp://x' is not an http"):
        Server.from_openapi(DOC, base_url="ftp://x")
    doc = tmp_path / "api.json"
    doc.write_text('{"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "paths": {}}')
    proc = subprocess.run(
        [*MCPIO, "run", "--openapi", str(doc), "--base-url", "api.example.com"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "base_url 'api.example.com' is not an http(s) URL with a host" in proc.stderr


def test_a_yaml_bomb_a_cyclic_alias_or_deep_nesting_is_refused_not_a_hang_or_a_traceback(tmp_path: Any):
    """Ten lines of YAML aliases expand to 10^8 schemas (converting them never ended); an alias
    inside itself, or JSON nested past Python's recursion, ended in a RecursionError traceback."""
    lines = ["openapi: 3.1.0", "info: {title: bomb, version: '1'}", "x-0: &n0 {type: string}"]
    for i in range(1, 9):
        lines.append(f"x-{i}: &n{i} {{anyOf: [{', '.join([f'*n{i - 1}'] * 10)}]}}")
    lines += ["paths:", "  /a:", "    post:", "      operationId: a", "      requestBody:"]
    lines += ["        content: {application/json: {schema: *n8}}", "      responses: {}"]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [*MCPIO, "run", "--openapi", str(bomb), "--base-url", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "its YAML aliases expand to over 5,000,000 values" in proc.stderr
    cyclic = tmp_path / "cyclic.yaml"
    cyclic.write_text(
        "openapi: 3.1.0\ninfo: {title: c, version: '1'}\nx-node: &node {type: array, items: *node}\n"
        "paths: {/a: {post: {operationId: a, requestBody: {content: {application/json: {schema: *node}}}, responses: {}}}}\n"
    )
    with pytest.raises(OpenAPIError, match="a YAML alias refers to a node that contains it"):
        Server.from_openapi(str(cyclic), base_url="http://x")
    deep = tmp_path / "deep.json"
    schema = '{"type":"array","items":' * 5000 + "{}" + "}" * 5000
    deep.write_text(
        '{"openapi":"3.1.0","info":{"title":"d","version":"1"},"paths":{"/a":{"post":{"operationId":"a",'
        f'"requestBody":{{"content":{{"application/json":{{"schema":{schema}}}}}}}}}}}}}}}'
    )
    with pytest.raises(OpenAPIError, match="nests deeper than mcpio reads"):
        Server.from_openapi(str(deep), base_url="http://x")
    anchors = tmp_path / "anchors.yaml"  # aliases that repeat a little are fine
    anchors.write_text(
        "openapi: 3.1.0\ninfo: {title: a, version: '1'}\nx-ok: &ok {200: {description: ok}}\n"
        "paths: {/a: {get: {operationId: a, responses: *ok}}, /b: {get: {operationId: b, responses: *ok}}}\n"
    )
    assert set(Server.from_openapi(str(anchors), base_url="http://x").registry.tools) == {"a", "b"}


def test_a_server_serves_again_on_a_new_event_loop(api: ServerThread):
    """The client mcpio makes for the API is the loop's it was made on: a server served once per
    ``asyncio.run`` (a script, a notebook, a test) kept the first loop's pooled connection, and the
    next run's first call failed with "Event loop is closed"."""
    server = Server.from_openapi(DOC, base_url=f"{api.base}/api")
    for _ in range(3):
        (result,) = calls(server, ("profile", {"id": "7"}))
        assert result["structuredContent"]["path"] == "/api/users/7/profile", result


async def login(request: Request) -> Response:
    response = JSONResponse({"logged_in": True})
    response.set_cookie("session", "session-of-the-first-caller")
    return response


async def trickle(request: Request) -> Response:
    """A byte every 50 ms for 5 s: an API's answer, or a document, that never stops arriving."""

    async def body() -> Any:
        for _ in range(100):  # 5 s in all, never 0.5 s without a byte
            yield b" "
            await asyncio.sleep(0.05)  # the slow API itself: what the test is about

    return StreamingResponse(body(), media_type="application/json")


async def who(request: Request) -> Response:
    said = {k: request.headers.getlist(k) for k in ("x-key", "x-tenant", "cookie")}
    RECEIVED.append({**said, "query": request.scope["query_string"].decode()})
    return JSONResponse(RECEIVED[-1])


SESSIONS = Starlette(
    routes=[
        Route("/who", who),
        Route("/login", login, methods=["POST"]),
        Route("/trickle", trickle),
        Route("/{rest:path}", echo),
    ]
)


def test_a_cookie_the_api_sets_is_not_sent_on_later_calls_which_may_be_another_users():
    """One httpx client serves every MCP client: a cookie jar would hand the first caller's API
    session to the next caller (with ``credentials=``, another principal's session)."""
    doc = {**DOC, "paths": {**DOC["paths"], "/login": {"post": {"operationId": "login", "responses": ANY}}}}
    with ServerThread(SESSIONS) as api:
        server = Server.from_openapi(doc, base_url=api.base)

        async def go() -> tuple[dict[str, Any], dict[str, Any]]:
            async with Client(server) as alice, Client(server) as bob:  # two clients of one server
                return await alice.call_tool("login", {}), await bob.call_tool("trace", {})

        first, second = asyncio.run(go())
        assert first["structuredContent"] == {"logged_in": True}
        assert "cookie" not in second["structuredContent"]["headers"], second


def test_the_timeout_bounds_the_whole_call_not_each_read():
    """An API that sends its answer a byte at a time never trips httpx's per-read timeout; the
    call still ends at ``timeout`` with an isError result, not when the API stops."""
    doc = {**DOC, "paths": {**DOC["paths"], "/trickle": {"get": {"operationId": "trickle", "responses": ANY}}}}
    with ServerThread(SESSIONS) as api:
        (slow,) = calls(Server.from_openapi(doc, base_url=api.base, timeout=0.5), ("trickle", {}))
    assert slow["isError"] is True, slow
    assert slow["content"][0]["text"] == "GET /trickle: the API did not answer within the timeout (0.5 s)"


async def odd(request: Request) -> Response:
    if request.url.path == "/gone":
        return Response(status_code=204)
    return Response("<html>maintenance</html>", media_type="text/html")


ODD = Starlette(routes=[Route("/gone", odd, methods=["DELETE"]), Route("/page", odd), Route("/list", odd)])
OBJECT = {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
ARRAY = {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}


def test_a_tool_with_an_output_schema_always_answers_structured_content_or_an_error():
    """Spec 2025-11-25 server/tools: with an outputSchema, a result MUST carry conforming
    structuredContent (the official SDKs' clients raise without it). A 204 documented beside a JSON
    200 gives no output schema; an answer outside the document is an isError result, not bare text
    (nor, for a schema wrapped as {"result": …}, a {"result": null} that the schema may refuse)."""
    doc = {
        **DOC,
        "paths": {
            "/gone": {"delete": {"operationId": "gone", "responses": {"200": OBJECT, "204": {"description": "gone"}}}},
            "/page": {"get": {"operationId": "page", "responses": {"200": OBJECT}}},
            "/list": {"get": {"operationId": "list", "responses": {"200": {**OBJECT, "content": ARRAY}}}},
        },
    }
    with ServerThread(ODD) as api:
        server = Server.from_openapi(doc, base_url=api.base)

        async def go() -> tuple[dict[str, Any], list[dict[str, Any]]]:
            async with Client(server) as c:
                tools = {t["name"]: t for t in await c.list_tools()}
                return tools, [await c.call_tool(name, {}) for name in ("gone", "page", "list")]

        tools, (gone, page, listed) = asyncio.run(go())
    assert "outputSchema" not in tools["gone"] and "outputSchema" in tools["page"]
    assert gone["content"] == [{"type": "text", "text": "DELETE /gone: HTTP 204 (no content)"}]
    assert "isError" not in gone and "structuredContent" not in gone
    assert page["isError"] is True and page["content"][0]["text"] == (
        "GET /page: the API answered HTTP 200 with text/html, not the JSON its OpenAPI document describes "
        "(serve it with output_schemas=False if it answers so)\n<html>maintenance</html>"
    )
    assert listed["isError"] is True and "structuredContent" not in listed
    assert listed["content"][0]["text"].startswith("GET /list: the API answered HTTP 200 with text/html, not the JSON")


def test_a_configured_credential_or_header_replaces_an_argument_of_the_same_name_never_goes_beside_it():
    """A document often declares its API key as a parameter too (in another case, say). The model's
    value went out beside the configured one, first, and an API reads the first: the model chose
    the key, the tenant, the session. The configured value now replaces it."""
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Keys", "version": "1"},
        "components": {
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "qkey": {"type": "apiKey", "in": "query", "name": "api_key"},
                "ckey": {"type": "apiKey", "in": "cookie", "name": "sid"},
            }
        },
        "paths": {
            "/who": {
                "get": {
                    "operationId": "who",
                    "security": [{"key": [], "qkey": [], "ckey": []}],
                    "parameters": [
                        param("x-key", "header", {"type": "string"}),
                        param("X-Tenant", "header", {"type": "string"}),
                        param("api_key", "query", {"type": "string"}),
                        param("sid", "cookie", {"type": "string"}),
                        param("other", "cookie", {"type": "string"}),
                    ],
                    "responses": ANY,
                }
            }
        },
    }
    with ServerThread(SESSIONS) as api:
        server = Server.from_openapi(
            doc,
            base_url=api.base,
            headers={"X-Tenant": "acme"},
            secrets={"key": "k-secret", "qkey": "q-secret", "ckey": "c-secret"},
        )
        arguments = {"x-key": "model", "X-Tenant": "other", "api_key": "model", "sid": "model", "other": "o"}
        calls(server, ("who", arguments))
    assert RECEIVED[-1] == {
        "x-key": ["k-secret"],
        "x-tenant": ["acme"],
        "cookie": ["other=o; sid=c-secret"],
        "query": "api_key=q-secret",
    }


async def mirror(request: Request) -> Response:
    said = {"url": str(request.url), "headers": dict(request.headers)}  # what a debugging API echoes
    if request.url.path == "/fail":
        return Response(f"bad request: {said}", status_code=400, media_type="text/plain")
    return JSONResponse(said)


def test_no_configured_credential_reaches_the_model_when_the_api_echoes_its_request():
    """An API echoing its request in an error (the URL, the headers) put the query key, the Basic
    password, a ``headers=`` key and the hook's token in the model's context, verbatim or encoded."""
    schemes = {"qkey": {"type": "apiKey", "in": "query", "name": "key"}, "basic": {"type": "http", "scheme": "basic"}}
    doc = {
        **DOC,
        "components": {"securitySchemes": schemes},
        "security": [{"qkey": [], "basic": []}],
        "paths": {p: {"get": {"operationId": p[1:], "responses": ANY}} for p in ("/fail", "/echo")},
    }
    with ServerThread(Starlette(routes=[Route("/{rest:path}", mirror)])) as api:
        server = Server.from_openapi(
            doc,
            base_url=api.base,
            secrets={"qkey": "q/secret+key=", "basic": "ada:pass-word-1"},
            headers={"X-Key": "h-secret-value", "X-Tenant": "acme"},
            credentials=lambda ctx: {"X-Hook": "Bearer hook-token-1"},
        )
        failed, echoed = calls(server, ("fail", {}), ("echo", {}))
    assert failed["isError"] is True and failed["content"][0]["text"].startswith("GET /fail failed: HTTP 400")
    shown = json.dumps([failed, echoed])
    basic = base64.b64encode(b"ada:pass-word-1").decode()
    for secret in ("q/secret+key=", "q%2Fsecret%2Bkey%3D", "pass-word-1", basic, "h-secret-value", "hook-token-1"):
        assert secret not in shown, secret
    headers = echoed["structuredContent"]["headers"]
    assert (headers["x-key"], headers["x-hook"], headers["authorization"]) == ("[redacted]",) * 3
    assert headers["x-tenant"] == "acme" and echoed["structuredContent"]["url"].endswith("/echo?key=[redacted]")


# A sitecustomize module for the server: its first import of httpx waits until the test writes to
# the FIFO $MCPIO_TEST_GATE (then imports the real httpx).
IMPORT_GATE = """
import os, sys

class Gate:
    def find_spec(self, name, path=None, target=None):
        if name == "httpx":
            sys.meta_path.remove(self)
            with open(os.environ["MCPIO_TEST_GATE"], "rb") as gate:
                gate.read()
        return None

sys.meta_path.insert(0, Gate())
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="a FIFO: POSIX")
@pytest.mark.parametrize("held", ["certificates", "import"])
def test_making_the_api_client_does_not_hold_the_event_loop(api: ServerThread, tmp_path: Any, held: str):
    """Making the httpx client on the first call (importing httpx, loading the certificate store:
    0.15-0.34 s in all) stalled every request, and the loop watchdog told every ``mcpio run
    --openapi`` user to make mcpio's own tool a plain def. Here the certificate store, or the
    import of httpx, waits on a FIFO the test holds: meanwhile the server answers another request."""
    doc = tmp_path / "api.json"
    doc.write_text(json.dumps({**DOC, "servers": [{"url": f"{api.base}/api"}]}))
    fifo = tmp_path / "held"
    os.mkfifo(fifo)
    if held == "certificates":
        env = {"SSL_CERT_FILE": str(fifo)}
        with open(certifi.where(), "rb") as pem:
            release = pem.read()
    else:
        (tmp_path / "gate").mkdir()
        (tmp_path / "gate" / "sitecustomize.py").write_text(IMPORT_GATE)
        path = os.pathsep.join(filter(None, [str(tmp_path / "gate"), os.environ.get("PYTHONPATH")]))
        env, release = {"PYTHONPATH": path, "MCPIO_TEST_GATE": str(fifo)}, b"go"

    async def go() -> dict[str, Any]:
        async with Client([*MCPIO, "run", "--openapi", str(doc)], env=env, timeout=60) as c:
            call = asyncio.create_task(c.call_tool("profile", {"id": "7"}))
            writer = await asyncio.to_thread(open, fifo, "wb")  # opens once the server waits on it
            try:
                async with asyncio.timeout(20):  # held on the loop: answered only after the FIFO is written
                    await c.list_tools(cache_mode="bypass")
            finally:
                with writer:
                    writer.write(release)
            return await call

    result = asyncio.run(go())
    assert result["structuredContent"]["path"] == "/api/users/7/profile", result


def test_the_first_call_does_not_wait_for_a_worker_of_the_loops_default_executor(api: ServerThread):
    """The API client was made on the loop's default executor: an application whose ``to_thread``
    calls held its every worker held the first API call too (an API at an IP address needs no
    name lookup, which asyncio makes there)."""
    server = Server.from_openapi(DOC, base_url=f"{api.base}/api")

    async def go() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))
        release = threading.Event()
        held = loop.run_in_executor(None, release.wait)  # the application's job, holding the worker
        try:
            async with Client(server) as c, asyncio.timeout(10):
                return await c.call_tool("profile", {"id": "7"})
        finally:
            release.set()
            await held

    assert asyncio.run(go())["structuredContent"]["path"] == "/api/users/7/profile"


async def endless(request: Request) -> Response:
    async def body() -> Any:
        yield b'{"openapi": "3.1.0", "x-padding": "'
        for _ in range(80):  # 80 MiB: past the limit (endless, before it, grew memory until killed)
            yield b"a" * 2**20
        yield b'"}'

    return StreamingResponse(body(), media_type="application/json")


async def silent(request: Request) -> Response:
    await asyncio.sleep(0.8)  # the slow server itself: its headers come late...

    async def body() -> Any:
        yield b"{"
        await asyncio.Event().wait()  # ...and then nothing, until the client hangs up

    return StreamingResponse(body(), media_type="application/json")


SPECS = Starlette(
    routes=[Route("/endless.json", endless), Route("/dribble.json", trickle), Route("/silent.json", silent)]
)


def test_a_document_url_is_read_up_to_a_size_and_a_total_time():
    """``mcpio run --openapi URL`` against a server that never stops sending grew memory until
    killed; one sending a byte at a time never tripped httpx's per-read timeout; one sending its
    headers late and then nothing was waited for until a read's timeout, up to twice ``timeout``."""
    with ServerThread(SPECS) as srv:
        proc = subprocess.run(
            [*MCPIO, "run", "--openapi", f"{srv.base}/endless.json", "--base-url", "http://127.0.0.1:9"],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{srv.base}/endless.json: the OpenAPI document is over 64 MiB; download it and pass the file" in (
            proc.stderr
        )
        with pytest.raises(OpenAPIError, match=r"dribble.json: the OpenAPI document did not arrive within 0.5 s"):
            Server.from_openapi(f"{srv.base}/dribble.json", base_url="http://x", timeout=0.5)
        began = time.monotonic()  # headers at 0.8 s then silence: refused at 1 s, not at 1.8 s (a read's timeout)
        with pytest.raises(OpenAPIError, match=r"silent.json: the OpenAPI document did not arrive within 1.0 s"):
            Server.from_openapi(f"{srv.base}/silent.json", base_url="http://x", timeout=1.0)
        assert time.monotonic() - began < 1.5


async def no_user(request: Request) -> Response:
    return JSONResponse({"detail": f"no user {request.path_params['id']}"}, status_code=404)


def test_a_resource_the_api_does_not_find_says_why_without_the_query_credential():
    """The 404's message was passed as the URI, so the reader saw "Resource not found: <the URI
    read>" and not the API's reason; the message named the request's URL, query credential and all."""
    doc = {
        **DOC,
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "api_key"}}},
        "security": [{"qkey": []}],
        "paths": {
            "/users/{id}": {
                "get": {
                    "operationId": "user",
                    "parameters": [param("id", "path", {"type": "string"})],
                    "responses": ANY,
                }
            }
        },
    }
    with ServerThread(Starlette(routes=[Route("/users/{id}", no_user)])) as api:
        server = Server.from_openapi(
            doc, base_url=api.base, secrets={"qkey": "q-secret"}, route_map={"user": "resource"}
        )

        async def go() -> ResourceNotFound:
            async with Client(server) as c:
                with pytest.raises(ResourceNotFound) as info:
                    await c.read_resource(f"{api.base}/users/42")
                return info.value

        error = asyncio.run(go())
    assert error.message == (
        f"Resource not found: {api.base}/users/42 "
        '(GET /users/{id} failed: HTTP 404 Not Found\n{"detail":"no user 42"})'
    )
    assert "q-secret" not in repr(error.data)


def test_certificates_that_cannot_be_loaded_are_the_operators_to_fix(monkeypatch: Any, tmp_path: Any):
    """An ``SSL_CERT_FILE`` that does not exist ended each call in "Error executing tool …:
    FileNotFoundError" and a traceback in the log: now one line saying whose it is to fix."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    first, second = calls(Server.from_openapi(DOC, base_url="http://127.0.0.1:9"), ("trace", {}), ("trace", {}))
    assert first == second and first["isError"] is True
    assert first["content"][0]["text"] == (
        "GET /trace: cannot make the HTTP client for the API (FileNotFoundError: [Errno 2] No such file or "
        "directory); the server's operator must fix its certificates (SSL_CERT_FILE, SSL_CERT_DIR)"
    )


async def nested(request: Request) -> Response:
    return Response("[" * 5000 + "]" * 5000, media_type="application/json", status_code=int(request.url.path[1:]))


def test_json_nested_deeper_than_the_stack_is_an_answer_not_a_crash():
    """JSON 5,000 arrays deep ended the call in "Error executing tool …: RecursionError" and a
    traceback in the log: now it is an answer that is not usable JSON, said as for any other."""
    doc = {
        **DOC,
        "paths": {f"/{s}": {"get": {"operationId": f"s{s}", "responses": {"200": OBJECT}}} for s in (200, 400)},
    }
    with ServerThread(Starlette(routes=[Route("/{status}", nested)])) as api:
        ok, failed = calls(Server.from_openapi(doc, base_url=api.base), ("s200", {}), ("s400", {}))
    assert ok["isError"] is True and ok["content"][0]["text"].startswith(
        "GET /200: the API answered HTTP 200 with application/json, not the JSON its OpenAPI document describes"
    )
    assert failed["isError"] is True and failed["content"][0]["text"].startswith(
        "GET /400 failed: HTTP 400 Bad Request\n[[["
    )
