"""The OAuth proxy end to end: an MCP client registers with the proxy (DCR), the user logs in at
the real oidc-provider through the proxy, approves the client, the client redeems the code with
PKCE and calls a protected mcpio server's tools with the proxy's audience-bound JWT."""

from __future__ import annotations

import asyncio
import time

import httpx
import jwt
import pytest

from mcpio import Client
from mcpio.auth import OAuthProxy
from tests.support.oauth_proxy import proxy_stack


@pytest.fixture(scope="module")
def stack(idp):
    with proxy_stack(idp) as s:
        yield s


def redeem(stack, client, query, verifier, redirect):
    return stack.token(
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=redirect,
        code_verifier=verifier,
        client_id=client["client_id"],
        resource=stack.mcp_url,
    )


def call(url, token, era="modern"):
    async def main():
        async with Client(url, era=era, headers={"Authorization": f"Bearer {token}"}, timeout=20) as c:
            return await c.call_tool("whoami", {}), await c.call_tool("add_note", {"text": "via proxy"})

    return asyncio.run(main())


def test_metadata(stack):
    doc = httpx.get(stack.base + "/.well-known/oauth-authorization-server", timeout=10).json()
    assert doc["issuer"] == stack.base and doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["registration_endpoint"] == stack.base + "/register"
    assert doc["authorization_response_iss_parameter_supported"] is True
    prm = httpx.get(stack.base + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
    assert prm["resource"] == stack.mcp_url and prm["authorization_servers"] == [stack.base]
    r = httpx.post(stack.mcp_url, json={}, timeout=10)
    assert r.status_code == 401 and "resource_metadata=" in r.headers["www-authenticate"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_login_through_the_proxy_and_call_tools(stack, era):
    client, query, verifier, redirect = stack.code_flow(user="ada")
    assert query["iss"] == stack.base  # RFC 9207
    r = redeem(stack, client, query, verifier, redirect)
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store" and r.headers["content-type"] == "application/json"
    tokens = r.json()
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == stack.mcp_url and claims["iss"] == stack.base and claims["sub"] == "ada"
    who, added = call(stack.mcp_url, tokens["access_token"], era)
    assert who["structuredContent"] == {
        "subject": "ada",
        "client": client["client_id"],
        "scopes": ["mcp", "notes:write"],
    }
    assert not added.get("isError") and added["content"][0]["text"].endswith("notes")
    # the upstream (oidc-provider) secret and tokens never reached the MCP client or the browser
    assert stack.seen and not any(stack.upstream_secret in text for text in stack.seen)
    sealed = {grant: record["v"] for grant, (_, record) in stack.proxy.store._kinds["grant"].items()}
    upstream = [stack.proxy.sealer.open(box, "grant:" + grant) for grant, box in sealed.items()]
    assert upstream and not any(g["access_token"] in text for g in upstream for text in stack.seen)
    # kept encrypted (AES-GCM under a key derived from the proxy's secret), never in the clear
    assert not any(g["access_token"] in box for g in upstream for box in sealed.values())


def test_a_replayed_code_is_refused_and_revokes_what_it_gave(stack):
    client, query, verifier, redirect = stack.code_flow()
    first = redeem(stack, client, query, verifier, redirect)
    assert first.status_code == 200
    access = first.json()["access_token"]
    call(stack.mcp_url, access)  # works
    again = redeem(stack, client, query, verifier, redirect)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    r = httpx.post(stack.mcp_url, json={}, headers={"authorization": f"Bearer {access}"}, timeout=10)
    assert r.status_code == 401 and "revoked" in r.json()["error_description"]
    refresh = stack.token(
        grant_type="refresh_token", refresh_token=first.json()["refresh_token"], client_id=client["client_id"]
    )
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(stack):
    client, query, verifier, redirect = stack.code_flow()
    first = redeem(stack, client, query, verifier, redirect).json()
    r = stack.token(
        grant_type="refresh_token",
        refresh_token=first["refresh_token"],
        client_id=client["client_id"],
        resource=stack.mcp_url,
    )
    assert r.status_code == 200, r.text
    second = r.json()
    assert second["refresh_token"] != first["refresh_token"] and second["access_token"] != first["access_token"]
    call(stack.mcp_url, second["access_token"])
    reuse = stack.token(grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client["client_id"])
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    r = httpx.post(stack.mcp_url, json={}, headers={"authorization": f"Bearer {second['access_token']}"}, timeout=10)
    assert r.status_code == 401
    dead = stack.token(grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client["client_id"])
    assert dead.status_code == 400


def test_a_token_for_another_audience_is_refused(stack, idp):
    key = stack.proxy._key
    from cryptography.hazmat.primitives import serialization

    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    twin = OAuthProxy(
        issuer=stack.base,
        resource="http://127.0.0.1:1/other",
        upstream_authorize_url="http://127.0.0.1:1/a",
        upstream_token_url="http://127.0.0.1:1/t",
        client_id="x",
        client_secret="y",
        signing_key=pem,
    )
    now = int(time.time())
    other = twin.sign(
        {"iss": stack.base, "aud": "http://127.0.0.1:1/other", "sub": "ada", "iat": now, "exp": now + 60, "sid": "f"}
    )
    r = httpx.post(stack.mcp_url, json={}, headers={"authorization": f"Bearer {other}"}, timeout=10)
    assert r.status_code == 401 and "another audience" in r.json()["error_description"]
    # a real IdP token for this very resource is not the proxy's: refused too (another issuer)
    foreign = idp.client_credentials(stack.mcp_url, "mcp")
    r = httpx.post(stack.mcp_url, json={}, headers={"authorization": f"Bearer {foreign}"}, timeout=10)
    assert r.status_code == 401
    # and the proxy refuses to issue for another resource (RFC 8707 invalid_target)
    client, query, verifier, redirect = stack.code_flow()
    r = stack.token(
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=redirect,
        code_verifier=verifier,
        client_id=client["client_id"],
        resource="http://127.0.0.1:1/other",
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_target"


def test_denied_consent_goes_back_with_access_denied(stack):
    redirect = "http://127.0.0.1:49153/cb"
    client = stack.register(redirect)
    from tests.support.oauth_proxy import login, pkce

    _, challenge = pkce()
    with stack.http() as ua:
        back = login(ua, stack.authorize_url(client["client_id"], redirect, challenge, "s1"), redirect, decision="deny")
    q = dict(httpx.URL(back).params)
    assert q["error"] == "access_denied" and q["state"] == "s1" and q["iss"] == stack.base and "code" not in q
