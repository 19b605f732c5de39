"""The OAuth proxy end to end: an mcpio server protected by :class:`mcpio.auth.OAuthProxy`, whose
upstream IdP is the real oidc-provider (tests/support/oidc.py), and a scripted user agent.

``with proxy_stack(idp) as stack:`` registers the proxy at oidc-provider by Dynamic Client
Registration (a confidential client, ``client_secret_post``, redirect URI = the proxy's
``/callback``), then serves ``tests/auth/protected_server.py``'s server with
``http_app(auth=proxy)`` on 127.0.0.1. :func:`login` drives a browser's part: the proxy's
authorize → oidc-provider's login and consent forms → the proxy's callback → the proxy's
consent screen → the client's redirect URI (returned, not fetched unless asked).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.http import ServerThread


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Stack:
    proxy: Any
    base: str
    mcp_url: str
    upstream_secret: str
    seen: list[str] = field(default_factory=list)  # every response body and header set the tests' clients saw

    def http(self, **kw: Any) -> httpx.Client:
        """A client that records what it receives (to prove no upstream secret reaches it)."""

        def record(response: httpx.Response) -> None:
            response.read()
            self.seen.append(str(response.headers) + response.text)

        return httpx.Client(timeout=20, follow_redirects=False, event_hooks={"response": [record]}, **kw)

    def register(self, redirect_uri: str, **extra: Any) -> dict[str, Any]:
        with self.http() as c:
            r = c.post(
                self.proxy.url("register"),
                json={
                    "redirect_uris": [redirect_uri],
                    "client_name": "Test Client",
                    "token_endpoint_auth_method": "none",
                    **extra,
                },
            )
        assert r.status_code == 201, r.text
        return r.json()

    def authorize_url(self, client_id: str, redirect_uri: str, challenge: str, state: str, **params: str) -> str:
        q = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "mcp notes:write",
            "resource": self.mcp_url,
            **params,
        }
        return str(httpx.URL(self.proxy.url("authorize"), params=q))

    def token(self, **form: str) -> httpx.Response:
        with self.http() as c:
            return c.post(self.proxy.url("token"), data=form)

    def code_flow(
        self, user: str = "alice", registration: dict[str, Any] | None = None, **params: str
    ) -> tuple[dict[str, Any], dict[str, Any], str, str]:
        """Register, log in, return (client, redirect query, code verifier, redirect URI)."""
        redirect = "http://127.0.0.1:49152/cb"
        client = self.register(redirect, **(registration or {}))
        verifier, challenge = pkce()
        state = secrets.token_urlsafe(12)
        with self.http() as ua:
            back = login(
                ua, self.authorize_url(client["client_id"], redirect, challenge, state, **params), redirect, user=user
            )
        query = dict(httpx.URL(back).params)
        assert query.get("state") == state, query
        return client, query, verifier, redirect


def login(ua: httpx.Client, url: str, stop: str, *, user: str = "alice", decision: str = "allow") -> str:
    """Follow a browser through the flow until a redirect to ``stop``; its URL."""
    r = ua.get(url)
    for _ in range(25):
        if r.status_code in (302, 303):
            location = str(r.url.join(r.headers["location"]))
            if location.startswith(stop):
                return location
            r = ua.get(location)
            continue
        assert r.status_code == 200, (r.status_code, r.text[:400])
        page = r.text
        action = re.search(r'action="([^"]+)"', page)
        target = r.url.join(html.unescape(action.group(1))) if action else r.url
        if 'name="consent"' in page:  # the proxy's consent screen
            form = {k: html.unescape(v) for k, v in re.findall(r'name="(consent|csrf)" value="([^"]+)"', page)}
            r = ua.post(target, data={**form, "decision": decision})
        elif 'name="login"' in page:  # oidc-provider's dev login form
            r = ua.post(target, data={"prompt": "login", "login": user, "password": "any"})
        else:  # oidc-provider's dev consent form
            r = ua.post(target, data={"prompt": "consent"})
    raise AssertionError("the flow did not come back to " + stop)


@contextlib.contextmanager
def proxy_stack(idp: Any, redis: str | None = None, **options: Any) -> Iterator[Stack]:
    """``redis``: serve with ``state=RedisState(redis)`` (the proxy's store on Redis)."""
    from mcpio.auth import OAuthProxy
    from tests.auth.protected_server import server

    holder: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await holder["app"](scope, receive, send)

    srv = ServerThread(app)
    meta = idp.metadata()
    callback = srv.base + "/callback"
    r = httpx.post(
        meta["registration_endpoint"],
        timeout=10,
        json={
            "redirect_uris": [callback],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_post",
            "client_name": "mcpio proxy",
        },
    )
    assert r.status_code == 201, r.text
    upstream = r.json()
    proxy = OAuthProxy(
        issuer=srv.base,
        upstream_authorize_url=meta["authorization_endpoint"],
        upstream_token_url=meta["token_endpoint"],
        client_id=upstream["client_id"],
        client_secret=upstream["client_secret"],
        scopes=["mcp", "notes:read", "notes:write"],
        upstream_scopes=["openid"],
        upstream_issuer=idp.issuer,
        # every test request comes from 127.0.0.1: the per-address limits get their own tests
        **{"max_registrations_per_address": 10_000, "max_logins_per_address": 10_000, **options},
    )
    assert proxy.callback_url == callback
    if redis is not None:
        from mcpio._state import RedisState

        holder["app"] = server.http_app(auth=proxy, state=RedisState(redis))
    else:
        holder["app"] = server.http_app(auth=proxy)
    with srv:
        yield Stack(proxy, srv.base, srv.url, upstream["client_secret"])
