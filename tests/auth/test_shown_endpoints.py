"""An authorization endpoint the operator configures with credentials in its URL (an
introspection endpoint as ``https://rs:secret@idp/introspect``) is used as given and named
without them (``mcpio._shown.shown``): in the 503 any caller with any bearer token gets when it
cannot be reached, in the log line, and in the refusal of a URL the rule forbids."""

from __future__ import annotations

import base64
import logging

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpio import Server
from mcpio.auth import IntrospectionVerifier, ResourceServer
from tests.support.http import ServerThread, free_port

SECRET = "pass-word-1234"
RESOURCE = "https://mcp.test/mcp"


def test_an_unreachable_introspection_endpoint_is_named_without_its_credentials(caplog):
    port = free_port()  # closed again: nothing listens there
    verifier = IntrospectionVerifier(f"http://rs:{SECRET}@127.0.0.1:{port}/introspect?api_key={SECRET}", timeout=5)
    auth = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=["https://idp.test"])
    app = Server("s").http_app(auth=auth)
    with ServerThread(app) as srv, caplog.at_level(logging.WARNING, logger="mcpio"):
        answer = httpx.post(
            srv.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"authorization": "Bearer anything", "accept": "application/json, text/event-stream"},
        )
    assert answer.status_code == 503, answer.text
    assert answer.json()["error_description"] == (
        f"the token cannot be verified now: the introspection endpoint "
        f"http://127.0.0.1:{port}/introspect?api_key=[redacted] is unreachable (ConnectError); retry later"
    )
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("mcpio")]
    assert logged and not [line for line in logged if SECRET in line], logged


def test_a_refused_endpoint_url_is_named_without_its_credentials():
    with pytest.raises(ValueError) as refused:
        IntrospectionVerifier(f"http://rs:{SECRET}@10.0.0.5/introspect")
    assert str(refused.value).startswith("the introspection endpoint 'http://10.0.0.5/introspect' uses http://")
    assert SECRET not in str(refused.value)


def test_httpx_logs_the_introspection_endpoint_without_its_credentials(caplog):
    """The verifier's request to a real introspection endpoint given with user:password (which
    it gets, as Basic credentials): the line httpx logs for it at INFO shows the URL shown."""
    seen: list[str] = []

    async def introspect(request: Request) -> JSONResponse:
        seen.append(request.headers.get("authorization", ""))
        return JSONResponse({"active": True, "sub": "ada", "aud": RESOURCE, "scope": "mcp"})

    with ServerThread(Starlette(routes=[Route("/introspect", introspect, methods=["POST"])])) as idp:
        verifier = IntrospectionVerifier(f"http://rs:{SECRET}@127.0.0.1:{idp.port}/introspect", audience=RESOURCE)
        auth = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=["https://idp.test"])
        with ServerThread(Server("s").http_app(auth=auth)) as srv, caplog.at_level(logging.INFO, logger="httpx"):
            answer = httpx.post(
                srv.url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"authorization": "Bearer anything", "accept": "application/json, text/event-stream"},
            )
    assert answer.status_code != 401 and seen == ["Basic " + base64.b64encode(f"rs:{SECRET}".encode()).decode()]
    logged = [r.getMessage() for r in caplog.records if r.name == "httpx" and "/introspect" in r.getMessage()]
    assert logged == [f'HTTP Request: POST http://127.0.0.1:{idp.port}/introspect "HTTP/1.1 200 OK"'], logged
