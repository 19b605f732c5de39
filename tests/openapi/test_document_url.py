"""A document URL's credentials (``user:password@``, a credential-looking query parameter) are
used, never shown: messages name the URL as :func:`mcpio._shown.shown` does, while a relative
``servers`` URL still resolves against the URL as given."""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpio import Client, Server
from tests.openapi.test_requests import ANY
from tests.support.http import ServerThread, free_port

SECRET = "pass-word-1234"


def _raised(url: str) -> str:
    with pytest.raises(ValueError) as raised:
        Server.from_openapi(url, timeout=2)
    return f"{type(raised.value).__name__} {raised.value}"


def test_an_unreachable_document_url_is_named_without_its_credentials():
    port = free_port()  # closed again: nothing listens there
    message = _raised(
        f"http://ada:{SECRET}@127.0.0.1:{port}/openapi.json?v=2&api_key={SECRET}&sig={SECRET}&key={SECRET}"
    )
    assert message.startswith(
        f"OpenAPIError http://127.0.0.1:{port}/openapi.json?v=2&api_key=[redacted]&sig=[redacted]&key=[redacted]: "
        "cannot download the OpenAPI document (ConnectError: "
    ), message
    assert SECRET not in message and "ada" not in message


def test_document_errors_show_the_url_without_credentials_and_servers_resolve_against_it():
    """A 404, a Swagger 2.0 document and a relative servers URL the API answers at: the first two
    name the shown URL; the API gets the document URL's user:password (the resolved base URL)."""
    seen: list[str] = []

    async def doc(request: Request) -> Response:
        if request.path_params["name"] == "swagger.json":
            return JSONResponse({"swagger": "2.0"})
        if request.path_params["name"] == "openapi.json":
            return JSONResponse(
                {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "/v1"}],
                 "paths": {"/who": {"get": {"operationId": "who", "responses": ANY}}}}
            )  # fmt: skip
        return Response(status_code=404)

    async def who(request: Request) -> Response:
        seen.append(request.headers.get("authorization", ""))
        return JSONResponse({"ok": True})

    app = Starlette(routes=[Route("/docs/{name}", doc), Route("/v1/who", who)])
    with ServerThread(app) as srv:
        at = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/docs"
        plain = f"http://127.0.0.1:{srv.port}/docs"
        missing = _raised(f"{at}/gone.json?token={SECRET}")
        swagger = _raised(f"{at}/swagger.json")
        server = Server.from_openapi(f"{at}/openapi.json", timeout=5)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("who", {})

        result = asyncio.run(go())
    assert missing == (
        f"OpenAPIError {plain}/gone.json?token=[redacted]: the server answered 404 instead of the OpenAPI document"
    )
    assert swagger.startswith(f"OpenAPIError {plain}/swagger.json is a Swagger 2.0 document;"), swagger
    assert result["structuredContent"] == {"ok": True}, result
    assert seen == ["Basic " + base64.b64encode(f"ada:{SECRET}".encode()).decode()]


def test_httpx_logs_the_document_url_without_its_credentials(caplog):
    """httpx logs each request's URL at INFO: the document's download is logged with it shown."""

    async def doc(request: Request) -> Response:
        return JSONResponse({"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {}})

    with ServerThread(Starlette(routes=[Route("/openapi.json", doc)])) as srv:
        with caplog.at_level(logging.INFO, logger="httpx"):
            Server.from_openapi(
                f"http://ada:{SECRET}@127.0.0.1:{srv.port}/openapi.json?key={SECRET}", base_url="http://x"
            )
    logged = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert logged == [f'HTTP Request: GET http://127.0.0.1:{srv.port}/openapi.json?key=[redacted] "HTTP/1.1 200 OK"'], (
        logged
    )


def test_httpx_logs_the_apis_requests_without_the_base_urls_short_password(caplog):
    """A password shorter than the values redaction takes (``MIN_SECRET``) is still no part of
    the request lines httpx logs: the URL is shown without its userinfo."""

    async def who(request: Request) -> Response:
        return JSONResponse({"ok": True})

    doc = {
        "openapi": "3.1.0", "info": {"title": "T", "version": "1"},
        "paths": {"/who": {"get": {"operationId": "who", "responses": ANY}}},
    }  # fmt: skip
    with ServerThread(Starlette(routes=[Route("/who", who)])) as srv:
        server = Server.from_openapi(doc, base_url=f"http://al:pw42@127.0.0.1:{srv.port}")

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("who", {})

        with caplog.at_level(logging.INFO, logger="httpx"):
            result = asyncio.run(go())
    assert result["structuredContent"] == {"ok": True}, result
    logged = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert logged == [f'HTTP Request: GET http://127.0.0.1:{srv.port}/who "HTTP/1.1 200 OK"'], logged
