"""The OAuth proxy's upstream token endpoint, configured with credentials in its URL, is used as
given and named without them (``mcpio._shown.shown``) in what the proxy logs when the identity
provider's answer holds no access token. A real proxy and a real (scripted) IdP on 127.0.0.1."""

from __future__ import annotations

import logging
import secrets
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpio import Server
from mcpio.auth import OAuthProxy
from tests.support.http import ServerThread
from tests.support.oauth_proxy import Stack, pkce

SECRET = "pass-word-1234"


def test_a_token_answer_without_an_access_token_logs_the_endpoint_without_its_credentials(caplog):
    exchanged: list[str] = []

    async def token(request: Request) -> JSONResponse:
        exchanged.append((await request.form()).get("code", ""))
        return JSONResponse({"error": "invalid_grant"})  # 200, and no access_token

    holder: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await holder["app"](scope, receive, send)

    idp = ServerThread(Starlette(routes=[Route("/token", token, methods=["POST"])]))
    srv = ServerThread(app)  # both addresses known before they serve: the proxy is made first
    proxy = OAuthProxy(
        issuer=srv.base,
        upstream_authorize_url=f"{idp.base}/authorize",
        upstream_token_url=f"http://proxy:{SECRET}@127.0.0.1:{idp.port}/token?api_key={SECRET}",
        client_id="mcpio-proxy",
        client_secret="upstream-client-secret-0123456789",
        scopes=["mcp"],
    )
    holder["app"] = Server("s").http_app(auth=proxy)
    stack = Stack(proxy, srv.base, srv.url, "upstream-client-secret-0123456789")
    redirect = "http://127.0.0.1:49152/cb"
    with idp, srv, stack.http() as browser, caplog.at_level(logging.INFO):
        client = stack.register(redirect)
        _, challenge = pkce()
        state = secrets.token_urlsafe(8)
        sent = browser.get(stack.authorize_url(client["client_id"], redirect, challenge, state, scope="mcp"))
        assert sent.status_code in (302, 303), sent.text
        upstream = httpx.URL(sent.headers["location"])
        assert str(upstream).startswith(f"{idp.base}/authorize?"), upstream
        back = browser.get(proxy.callback_url, params={"code": "code-1", "state": upstream.params["state"]})
    assert exchanged == ["code-1"]  # the proxy did exchange the code at the endpoint
    assert back.status_code in (302, 303) and "error=server_error" in back.headers["location"], back
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("mcpio")]
    assert (
        f"upstream sign-in failed: the upstream token endpoint http://127.0.0.1:{idp.port}/token?api_key=[redacted] "
        "answered without an access_token (error 'invalid_grant')"
    ) in logged, logged
    everything = [r.getMessage() for r in caplog.records]  # httpx's request lines too
    assert any("/token?api_key=[redacted]" in line for line in everything if "HTTP Request" in line), everything
    assert not [line for line in everything if SECRET in line], everything


def test_an_oauth_proxys_repr_names_its_endpoints_without_their_credentials():
    """``repr(OAuthProxy(…))`` (a debugger, a traceback's locals, a log of the configuration)
    shows the upstream endpoints as mcpio shows any URL; the client secret not at all."""
    from mcpio.auth import OAuthProxy

    proxy = OAuthProxy(
        issuer="https://mcp.example.com",
        upstream_authorize_url=f"https://idp.example.com/authorize?api_key={SECRET}",
        upstream_token_url=f"https://ada:{SECRET}@idp.example.com/token",
        upstream_userinfo_url=f"https://idp.example.com/userinfo?access_token={SECRET}",
        client_id="mcp-proxy",
        client_secret=SECRET,
    )
    for shown_as in (repr(proxy), repr(proxy.upstream)):
        assert SECRET not in shown_as, shown_as
        assert "https://idp.example.com/token" in shown_as and "api_key=[redacted]" in shown_as, shown_as
    assert repr(proxy).startswith("OAuthProxy(issuer='https://mcp.example.com', ")
