"""The ``credentials=`` hook's failures and values: what it raises or returns never reaches the
model or the log unredacted. An echo API on 127.0.0.1 (uvicorn), called through :class:`mcpio.Client`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Generator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpio import Client, Server
from tests.openapi.test_requests import ANY
from tests.support.http import ServerThread

KEY = "q-secret-key-1"
DOC = {
    "openapi": "3.1.0",
    "info": {"title": "Hooked", "version": "1"},
    "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
    "security": [{"qkey": []}],
    "paths": {"/said": {"get": {"operationId": "said", "responses": ANY}}},
}


async def said(request: Request) -> Response:
    headers = {k: v.encode("latin-1").decode(errors="replace") for k, v in request.headers.items()}
    return Response(json.dumps({"url": str(request.url), "headers": headers}), media_type="application/json")


def _call(**options: Any) -> dict[str, Any]:
    with ServerThread(Starlette(routes=[Route("/said", said)])) as api:
        server = Server.from_openapi(DOC, base_url=api.base, secrets={"qkey": KEY}, **options)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("said", {})

        return asyncio.run(go())


def _failing(ctx: Any) -> dict[str, str]:
    raise RuntimeError(f"secret store said: no token for {KEY}")


def test_a_failing_credentials_hook_is_the_servers_error_with_every_credential_redacted(caplog: Any):
    """A hook that raised reached the model as "Error executing tool said: RuntimeError: secret
    store said: no token for q-secret-key-1" and the log with its traceback, the credential in
    both. Now the call answers an isError result that says whose fault it is, the message
    redacted; the log has one ERROR line and the traceback at DEBUG, redacted too."""
    with caplog.at_level("DEBUG", logger="mcpio"):
        failed = _call(credentials=_failing)
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == (
        "GET /said: the server's credentials hook failed (RuntimeError: secret store said: no token for "
        "[redacted]); the server's operator must fix it"
    )
    logged = [r for r in caplog.records if r.name.startswith("mcpio")]
    assert [(r.levelname, r.getMessage()) for r in logged if r.levelname == "ERROR"] == [
        ("ERROR", "GET /said: the credentials hook failed: RuntimeError: secret store said: no token for [redacted]")
    ]
    (traceback,) = [r.getMessage() for r in logged if r.levelname == "DEBUG" and "Traceback" in r.getMessage()]
    assert "in _failing" in traceback and "no token for [redacted]" in traceback
    assert not [r for r in logged if KEY in r.getMessage() or r.exc_info], logged


def test_a_failing_credentials_hook_shows_its_type_only_where_errors_are_hidden():
    """With ``expose_errors=False`` a tool's exception shows its type only: so does the hook's."""
    failed = _call(credentials=_failing, expose_errors=False)
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == (
        "GET /said: the server's credentials hook failed (RuntimeError, the details are in the server's log); "
        "the server's operator must fix it"
    )


def test_a_bytes_header_value_from_the_hook_is_redacted():
    """A hook may return header values as bytes (httpx sends them as they are): only str values
    were redacted, and an echo showed the token. A bytes value with a line break is refused like
    a str one, named, its value never shown."""
    echoed = _call(credentials=lambda ctx: {"X-Token": b"hook-bytes-token-1", "X-Utf8": "tök-hook-2".encode()})
    assert (echoed["structuredContent"]["headers"]["x-token"], echoed["structuredContent"]["headers"]["x-utf8"]) == (
        "[redacted]",
        "[redacted]",
    )
    assert "hook-bytes" not in json.dumps(echoed) and "hook-2" not in json.dumps(echoed), echoed
    broken = _call(credentials=lambda ctx: {"X-Token": b"hook-bytes-token-1\r\nX-Evil: 1"})
    assert broken["isError"] is True and "hook-bytes" not in json.dumps(broken), broken
    assert broken["content"][0]["text"].startswith("GET /said: the X-Token header configured for the API")


class Signed(httpx.Auth):
    """An ``httpx.Auth`` of one's own: its flow adds a signature header and query parameter."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["X-Signature"] = "sig-from-auth-flow-1"
        request.url = request.url.copy_add_param("sig", "sig-from-auth-flow-2")
        yield request


def test_what_a_custom_auth_of_ones_own_client_adds_is_redacted():
    """Only an ``httpx.BasicAuth`` of a ``client=`` was redacted: a custom ``httpx.Auth`` whose
    flow adds a header sent it unknown to the redaction, and an echo showed it. Now the values
    redacted are those the request carried as it went out (auth flows and the client's own
    headers included), but for what the arguments put there: an argument is no credential."""
    doc = {**DOC, "paths": {"/said": {"get": {"operationId": "said", "responses": ANY, "parameters": [
        {"name": "note", "in": "query", "schema": {"type": "string"}},
        {"name": "X-Note", "in": "header", "schema": {"type": "string"}},
    ]}}}}  # fmt: skip
    with ServerThread(Starlette(routes=[Route("/said", said)])) as api:
        client = httpx.AsyncClient(auth=Signed(), headers={"X-Own": "own-client-header-1"})
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": KEY}, client=client)

        async def go() -> dict[str, Any]:
            async with client, Client(server) as c:
                return await c.call_tool("said", {"note": "an-argument-value", "X-Note": "a-header-argument"})

        echoed = asyncio.run(go())
    headers = echoed["structuredContent"]["headers"]
    assert (headers["x-signature"], headers["x-own"], headers["x-note"]) == (
        "[redacted]",
        "[redacted]",
        "a-header-argument",
    )
    assert echoed["structuredContent"]["url"].endswith("/said?note=an-argument-value&key=[redacted]&sig=[redacted]")
    assert "from-auth-flow" not in json.dumps(echoed) and "own-client" not in json.dumps(echoed), echoed
