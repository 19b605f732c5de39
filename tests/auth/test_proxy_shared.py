"""The OAuth proxy's state on Redis (issue 32, item 10): real ``mcpio run`` processes sharing one
real redis-server. A sign-in started on one process finishes on another, codes and refresh
tokens are redeemed once across processes, a revocation on one is seen by the other, a restart
signs nobody out, and ``--workers 2`` completes every authorization."""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from mcpio import Client
from tests.support import redis as _redis
from tests.support.http import free_port, mcpio_http
from tests.support.oauth_proxy import login, pkce

HERE = Path(__file__).parent
redis_server, redis_url = _redis.redis_server, _redis.redis_url  # the real redis-server fixtures
REDIRECT = "http://127.0.0.1:45679/cb"
KEYS = secrets.token_urlsafe(32)  # $MCPIO_AUTH_PROXY_SECRET, the same for every process


@pytest.fixture
def upstream(idp):
    """The proxy's registration at oidc-provider, for an issuer on ``port``."""

    def register(port: int) -> dict:
        r = httpx.post(
            idp.metadata()["registration_endpoint"],
            timeout=10,
            json={
                "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_post",
            },
        )
        assert r.status_code == 201, r.text
        return r.json()

    return register


@contextlib.contextmanager
def proxy_process(idp, up: dict, port: int, issuer: str, redis: str, log: Path, *extra: str):
    with mcpio_http(
        str(HERE / "protected_server.py"),
        *("--auth-proxy-upstream", idp.issuer, f"--auth-proxy-client-id={up['client_id']}"),
        *("--auth-proxy-issuer", issuer, "--auth-proxy-scopes", "mcp,notes:write", "--redis", redis, *extra),
        env={
            "PYTHONUNBUFFERED": "1",
            "MCPIO_AUTH_PROXY_CLIENT_SECRET": up["client_secret"],
            "MCPIO_AUTH_PROXY_SECRET": KEYS,
        },
        log=log,
        port=port,
    ) as (_url, proc):
        yield proc


def refused(base: str, access: str) -> bool:
    """Whether the MCP endpoint refuses the token (401) before looking at the request."""
    return (
        httpx.post(
            base + "/mcp",
            headers={
                "authorization": f"Bearer {access}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            timeout=20,
        ).status_code
        == 401
    )


def call_whoami(base: str, access: str) -> dict:
    async def main():
        async with Client(base + "/mcp", headers={"Authorization": f"Bearer {access}"}, timeout=20) as c:
            return await c.call_tool("whoami", {})

    return asyncio.run(main())["structuredContent"]


def authorize_url(base: str, client_id: str, challenge: str, issuer: str) -> str:
    q = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "mcp notes:write",
        "resource": issuer + "/mcp",
    }
    return str(httpx.URL(base + "/authorize", params=q))


def token(base: str, **form: str) -> httpx.Response:
    return httpx.post(base + "/token", data=form, timeout=20)


def test_two_processes_on_one_redis_share_sign_ins_and_revocations(idp, upstream, redis_url, tmp_path):
    pa, pb = free_port(), free_port()
    a, b = f"http://127.0.0.1:{pa}", f"http://127.0.0.1:{pb}"
    issuer = a  # both processes are the same authorization server (behind a load balancer)
    up = upstream(pa)
    log = tmp_path / "stderr.log"
    with (
        proxy_process(idp, up, pa, issuer, redis_url, log) as proc_a,
        proxy_process(idp, up, pb, issuer, redis_url, log),
    ):
        client = httpx.post(
            a + "/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}, timeout=10
        ).json()
        verifier, challenge = pkce()
        with httpx.Client(timeout=20) as ua:
            started = ua.get(authorize_url(b, client["client_id"], challenge, issuer))  # sign-in starts on B
            assert started.status_code == 302, started.text
            callback = login(ua, started.headers["location"], a + "/callback", user="kim")
            page = ua.get(callback)  # the IdP sends the browser back to A
            assert page.status_code == 200 and 'name="consent"' in page.text, page.text[:300]
            form = {k: html.unescape(v) for k, v in re.findall(r'name="(consent|csrf)" value="([^"]+)"', page.text)}
            done = ua.post(b + "/consent", data={**form, "decision": "allow"})  # approved on B
        assert done.status_code == 302 and done.headers["location"].startswith(REDIRECT), done.text
        code = httpx.URL(done.headers["location"]).params["code"]
        redeem = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": client["client_id"],
        }
        first = token(a, **redeem)  # redeemed on A
        assert first.status_code == 200, first.text
        tokens = first.json()
        assert call_whoami(b, tokens["access_token"])["subject"] == "kim"  # accepted on B
        replay = token(b, **redeem)  # the code again, on the other process
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        assert refused(a, tokens["access_token"])  # the replay revoked the grant everywhere
        assert refused(b, tokens["access_token"])

        # a second sign-in; refresh on B, then the old refresh token reused on A revokes it on B
        verifier, challenge = pkce()
        with httpx.Client(timeout=20) as ua:
            back = login(ua, authorize_url(a, client["client_id"], challenge, issuer), REDIRECT, user="kim")
        second = token(b, **{**redeem, "code": httpx.URL(back).params["code"], "code_verifier": verifier}).json()
        rotated = token(
            b, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client["client_id"]
        )
        assert rotated.status_code == 200, rotated.text
        fresh = rotated.json()
        assert call_whoami(a, fresh["access_token"])["subject"] == "kim"
        reuse = token(
            a, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client["client_id"]
        )
        assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
        assert refused(b, fresh["access_token"])
        again = token(
            b, grant_type="refresh_token", refresh_token=fresh["refresh_token"], client_id=client["client_id"]
        )
        assert again.status_code == 400

        # one refresh token presented to both processes at once: one rotation wins, the other
        # is a reuse, and the grant is revoked (never two live token chains)
        verifier, challenge = pkce()
        with httpx.Client(timeout=20) as ua:
            back = login(ua, authorize_url(b, client["client_id"], challenge, issuer), REDIRECT, user="kim")
        race = token(a, **{**redeem, "code": httpx.URL(back).params["code"], "code_verifier": verifier}).json()
        barrier = threading.Barrier(4)

        def rotate(base: str) -> httpx.Response:
            barrier.wait()
            return token(
                base, grant_type="refresh_token", refresh_token=race["refresh_token"], client_id=client["client_id"]
            )

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(rotate, [a, b, a, b]))
        assert sorted(r.status_code for r in answers) == [200, 400, 400, 400], [r.text for r in answers]
        winner = next(r.json() for r in answers if r.status_code == 200)
        assert refused(a, winner["access_token"]) and refused(b, race["access_token"])

        # a third grant survives a restart of the process that issued it
        verifier, challenge = pkce()
        with httpx.Client(timeout=20) as ua:
            back = login(ua, authorize_url(a, client["client_id"], challenge, issuer), REDIRECT, user="kim")
        third = token(a, **{**redeem, "code": httpx.URL(back).params["code"], "code_verifier": verifier}).json()
        proc_a.terminate()
        proc_a.wait(15)
        with proxy_process(idp, up, pa, issuer, redis_url, log):
            assert call_whoami(a, third["access_token"])["subject"] == "kim"
            r = token(
                a, grant_type="refresh_token", refresh_token=third["refresh_token"], client_id=client["client_id"]
            )
            assert r.status_code == 200, r.text
    text = log.read_text()
    assert "Traceback" not in text and up["client_secret"] not in text and KEYS not in text


def test_every_authorization_succeeds_with_two_workers(idp, upstream, redis_url, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    up = upstream(port)
    with proxy_process(idp, up, port, base, redis_url, tmp_path / "stderr.log", "--workers", "2"):
        client = httpx.post(
            base + "/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}, timeout=10
        ).json()
        outcomes = []
        for _ in range(8):
            verifier, challenge = pkce()
            # no keep-alive: each request is a new connection, which the kernel gives to either worker
            with httpx.Client(timeout=20, limits=httpx.Limits(max_keepalive_connections=0)) as ua:
                try:
                    back = login(ua, authorize_url(base, client["client_id"], challenge, base), REDIRECT, user="lee")
                except AssertionError:
                    outcomes.append("sign-in failed")
                    continue
            r = token(
                base,
                grant_type="authorization_code",
                code=httpx.URL(back).params["code"],
                redirect_uri=REDIRECT,
                code_verifier=verifier,
                client_id=client["client_id"],
            )
            if r.status_code != 200:
                outcomes.append(f"token {r.status_code}")
                continue
            outcomes.append("ok" if call_whoami(base, r.json()["access_token"])["subject"] == "lee" else "refused")
        assert outcomes == ["ok"] * 8, outcomes
