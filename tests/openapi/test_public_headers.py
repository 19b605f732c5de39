"""``public_headers=``: configured headers whose values are no credential (an ``X-Env:
production``) are not blanked out of the API's answers; every other configured value still is.
Through :class:`mcpio.Client` against an API on 127.0.0.1 that echoes its request."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpio import Client, Server
from mcpio._openapi import OpenAPIError
from tests.openapi.test_requests import ANY, param
from tests.support.http import ServerThread

DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Echo", "version": "1"},
    "paths": {
        "/echo": {
            "get": {"operationId": "echo", "parameters": [param("q", "query", {"type": "string"})], "responses": ANY}
        }
    },
}


async def echo(request: Request) -> JSONResponse:
    seen = {k: v for k, v in request.headers.items() if k.startswith("x-") or k == "authorization"}
    return JSONResponse({"q": request.query_params["q"], "headers": seen})


def _echoed(**options: Any) -> dict[str, Any]:
    with ServerThread(Starlette(routes=[Route("/echo", echo)])) as api:
        server = Server.from_openapi(DOC, base_url=api.base, **options)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                result: dict[str, Any] = await c.call_tool("echo", {"q": "is production down in eu-central-1?"})
                return result["structuredContent"]

        return asyncio.run(go())


def test_headers_named_public_are_not_redacted_and_every_other_configured_value_is():
    """A configured ``X-Env: production`` made the word "production" ``[redacted]`` in every
    answer (the model's own question included), as any configured value was taken for a
    credential: ``public_headers=`` names those that are none, in ``headers=``, a
    ``credentials=`` hook's headers and a ``client=``'s own; the default redacts them all."""

    def hook(ctx: Any) -> dict[str, str]:
        return {"X-Region": "eu-central-1", "Authorization": "Bearer hook-token-1"}

    def options() -> dict[str, Any]:  # a client= of the user's: its X-Team rides on every request
        return {
            "headers": {"X-Env": "production", "X-Api-Key": "key-secret-1"},
            "credentials": hook,
            "client": httpx.AsyncClient(headers={"X-Team": "platform-ops"}),
        }

    default = _echoed(**options())
    assert default == {
        "q": "is [redacted] down in [redacted]?",
        "headers": dict.fromkeys(("x-env", "x-api-key", "x-region", "authorization", "x-team"), "[redacted]"),
    }
    public = _echoed(**options(), public_headers=["x-env", "X-Region", "X-TEAM"])
    assert public == {
        "q": "is production down in eu-central-1?",
        "headers": {
            "x-env": "production",
            "x-api-key": "[redacted]",
            "x-region": "eu-central-1",
            "authorization": "[redacted]",
            "x-team": "platform-ops",
        },
    }


def test_a_credentials_header_cannot_be_named_public():
    for name in ("Authorization", "proxy-authorization", "Cookie"):
        with pytest.raises(OpenAPIError, match=f"public_headers= names {name.lower()}: a credential's header"):
            Server.from_openapi(DOC, base_url="http://127.0.0.1:9", public_headers=[name])
