"""The OAuth proxy's bounded stores refuse when full and never evict someone's live entry
(issue 32, item 4): a flood of anonymous ``/authorize`` calls cancels no sign-in in progress, a
flood of registrations unregisters no client in use; per source address and per client limits;
and the app's shutdown closes what the proxy opened (item 16)."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from tests.support import redis as _redis
from tests.support.oauth_proxy import login, pkce, proxy_stack

redis_server, redis_url = _redis.redis_server, _redis.redis_url  # the real redis-server fixtures


@pytest.fixture(params=["memory", "redis"])
def where(request):
    """Where the proxy keeps its state: this process, or a real redis-server."""
    return None if request.param == "memory" else request.getfixturevalue("redis_url")


REDIRECT = "http://127.0.0.1:40000/cb"


def test_a_flood_of_authorize_calls_cancels_no_sign_in(idp, where):
    with proxy_stack(idp, where, max_logins=20) as stack:
        victim = stack.register(REDIRECT)
        verifier, challenge = pkce()
        with stack.http() as ua:
            started = ua.get(stack.authorize_url(victim["client_id"], REDIRECT, challenge, "victim"))
            assert started.status_code == 302  # the victim is at the IdP's login page now
            flooder = stack.register(REDIRECT)
            answers = []
            with stack.http() as attacker:
                for i in range(40):
                    r = attacker.get(stack.authorize_url(flooder["client_id"], REDIRECT, pkce()[1], f"f{i}"))
                    answers.append(r.status_code)
                    if r.status_code == 503:
                        assert "location" not in r.headers and int(r.headers["retry-after"]) > 0
            assert answers.count(302) < 20 and answers[-1] == 503, answers
            back = login(ua, str(started.url.join(started.headers["location"])), REDIRECT)
        code = httpx.URL(back).params["code"]
        r = stack.token(
            grant_type="authorization_code",
            code=code,
            redirect_uri=REDIRECT,
            code_verifier=verifier,
            client_id=victim["client_id"],
        )
        assert r.status_code == 200, r.text


def test_a_flood_of_registrations_unregisters_no_client_in_use(idp, where):
    with proxy_stack(idp, where, max_clients=10) as stack:
        client, query, verifier, redirect = stack.code_flow()
        tokens = stack.token(
            grant_type="authorization_code",
            code=query["code"],
            redirect_uri=redirect,
            code_verifier=verifier,
            client_id=client["client_id"],
        ).json()
        refused = None
        for _ in range(30):
            r = httpx.post(stack.proxy.url("register"), json={"redirect_uris": [REDIRECT]}, timeout=10)
            if r.status_code != 201:
                refused = r
                break
        assert refused is not None and refused.status_code == 503, "the cap never refused"
        assert refused.json()["error"] == "temporarily_unavailable" and int(refused.headers["retry-after"]) > 0
        r = stack.token(
            grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client["client_id"]
        )
        assert r.status_code == 200, r.text  # the client in use is still registered
        with stack.http() as ua:
            again = ua.get(stack.authorize_url(client["client_id"], redirect, pkce()[1], "s"))
        assert again.status_code == 302 and again.headers["location"].startswith(stack.proxy.upstream.authorize_url)


def test_unused_registrations_expire_and_make_room(idp):
    with proxy_stack(idp, max_clients=3, unused_client_ttl=3.0) as stack:
        for _ in range(3):
            stack.register(REDIRECT)
        r = httpx.post(stack.proxy.url("register"), json={"redirect_uris": [REDIRECT]}, timeout=10)
        assert r.status_code == 503
        time.sleep(3.1)  # the unused registrations' lifetime passes
        stack.register(REDIRECT)


def test_limits_per_source_address_and_per_client(idp, where):
    limits = {"max_registrations_per_address": 3, "max_logins_per_address": 4, "max_logins_per_client": 2}
    with proxy_stack(idp, where, **limits) as s:
        clients = [s.register(REDIRECT) for _ in range(3)]
        r = httpx.post(s.proxy.url("register"), json={"redirect_uris": [REDIRECT]}, timeout=10)
        assert r.status_code == 429 and "your address" in r.json()["error_description"]
        with s.http() as ua:

            def start(client):
                return ua.get(s.authorize_url(client["client_id"], REDIRECT, pkce()[1], "s"))

            assert [start(clients[0]).status_code for _ in range(3)] == [302, 302, 429]  # per client
            assert start(clients[1]).status_code == 302
            assert start(clients[2]).status_code == 302  # 4 from this address
            r = start(clients[2])
            assert r.status_code == 429 and "your address" in r.text and "location" not in r.headers


def test_the_app_shuts_down_cleanly(idp, caplog):
    """The app's lifespan closes the proxy (its HTTP clients to the IdP and for CIMD)."""
    caplog.set_level(logging.INFO)
    with proxy_stack(idp) as stack:
        stack.code_flow()  # the proxy's HTTP client to the IdP is open
    failures = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not failures, failures
