"""A URL given to ``Client`` is used as given (its ``user:password`` is the Basic credential the
server gets) and shown without its credentials: no error text or log line of the client holds
the password or a credential-looking query parameter's value (``mcpio._shown.shown``)."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpio import Client, Server
from tests.support.http import ServerThread, free_port

SECRET = "pass-word-1234"


def _refusal(url: str, **options: object) -> str:
    async def go() -> None:
        async with Client(url, **options) as c:  # type: ignore[arg-type]
            await c.ping()

    with pytest.raises(Exception) as raised:
        asyncio.run(go())
    return str(raised.value)


def test_an_unreachable_server_is_named_without_the_urls_credentials():
    port = free_port()  # closed again: nothing listens there
    message = _refusal(f"http://ada:{SECRET}@127.0.0.1:{port}/mcp?tenant=7&access_token={SECRET}")
    assert message.startswith(
        f"cannot reach the MCP server at http://127.0.0.1:{port}/mcp?tenant=7&access_token=[redacted]: "
    ), message
    assert SECRET not in message


def test_an_untrusted_certificate_is_named_without_the_urls_credentials(tmp_path):
    trustme = pytest.importorskip("trustme")
    cert = trustme.CA().issue_cert("127.0.0.1")
    chain, key = tmp_path / "chain.pem", tmp_path / "key.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(key))
    with ServerThread(Starlette(), ssl_certfile=str(chain), ssl_keyfile=str(key)) as srv:
        message = _refusal(f"https://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?api_key={SECRET}")
    assert message.startswith(
        f"cannot reach the MCP server at https://127.0.0.1:{srv.port}/mcp?api_key=[redacted]: "
        "its TLS certificate is not trusted"
    ), message


def test_without_httpx_the_refusal_names_the_url_without_its_credentials():
    """A real interpreter in which ``import httpx`` fails (the ``http`` extra not installed)."""
    code = (
        "import sys, asyncio; sys.modules['httpx'] = None\n"
        "import mcpio\n"
        "async def go():\n"
        "    async with mcpio.Client(sys.argv[1]) as c: pass\n"
        "try: asyncio.run(go())\n"
        "except Exception as e: print(e)\n"
    )
    url = f"https://ada:{SECRET}@127.0.0.1:9/mcp?key={SECRET}"
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, timeout=60).stdout
    assert out.startswith("cannot connect to https://127.0.0.1:9/mcp?key=[redacted]: Streamable HTTP needs httpx"), out


def test_an_http_sse_endpoint_off_origin_is_logged_without_the_urls_credentials(caplog):
    """A deprecated HTTP+SSE server (POSTs refused, a GET stream) whose ``endpoint`` event names
    another origin: the client refuses it and says so in a warning, naming both URLs shown."""

    async def sse(request: Request) -> Response:
        if request.method == "POST":
            return Response(status_code=405)
        body = b"event: endpoint\ndata: http://127.0.0.2:1/messages?session_id=1\n\n"
        return Response(body, media_type="text/event-stream")

    with ServerThread(Starlette(routes=[Route("/sse", sse, methods=["GET", "POST"])])) as srv:
        with caplog.at_level(logging.INFO, logger="mcpio"):
            message = _refusal(f"http://ada:{SECRET}@127.0.0.1:{srv.port}/sse?token={SECRET}")
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("mcpio")]
    assert SECRET not in message, message
    assert (
        f"http://127.0.0.1:{srv.port}/sse?token=[redacted]: the endpoint 'http://127.0.0.2:1/messages?session_id=[redacted]' "
        f"is not on the server's origin http://127.0.0.1:{srv.port}"
    ) in logged, logged
    assert not [line for line in logged if SECRET in line], logged


def test_the_oauth_client_names_the_server_without_the_urls_credentials():
    """An OAuth-protected server (401) publishing no metadata: the client falls back to the
    2025-03-26 default endpoints of the server's origin, and its refusal names them; the server's
    identity for OAuth (spec: Canonical Server URI) holds no userinfo, so none does."""
    from mcpio.auth import OAuth

    async def mcp(request: Request) -> Response:
        return Response(status_code=401, headers={"www-authenticate": "Bearer"})

    app = Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST"])])
    with ServerThread(app) as srv:
        message = _refusal(f"http://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?token={SECRET}", auth=OAuth(store=None))
    assert f"dynamic client registration at http://127.0.0.1:{srv.port}/register: HTTP 404" in message, message
    assert SECRET not in message, message


def test_httpx_logs_an_https_servers_url_without_its_credentials(tmp_path, caplog):
    """Over https the client sends through httpx, which logs each request's URL at INFO: the
    line shows it without its credentials (and the server gets the URL's Basic credentials)."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    chain, key, ca_file = tmp_path / "chain.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(ca_file))
    upstream = Server("up")

    @upstream.tool()
    def add(a: int, b: int) -> int:
        return a + b

    async def go(url: str) -> dict[str, object]:
        async with Client(url, verify=str(ca_file)) as c:
            return await c.call_tool("add", {"a": 2, "b": 3})

    with ServerThread(upstream.http_app(), ssl_certfile=str(chain), ssl_keyfile=str(key)) as srv:
        with caplog.at_level(logging.INFO, logger="httpx"):
            added = asyncio.run(go(f"https://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?api_key={SECRET}"))
    assert added["structuredContent"] == {"result": 5}
    logged = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert logged and all(
        line.startswith(f"HTTP Request: POST https://127.0.0.1:{srv.port}/mcp?api_key=[redacted] ") for line in logged
    ), logged
