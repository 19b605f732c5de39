"""Bad input to the OAuth proxy: each refusal is the OAuth answer RFC 6749 / 7591 / 7636 give,
with a message saying what to fix, and nothing is redirected to an unverified URI."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.support.oauth_proxy import login, pkce, proxy_stack


@pytest.fixture(scope="module")
def stack(idp):
    with proxy_stack(idp) as s:
        yield s


REDIRECT = "http://127.0.0.1:40000/cb"


def authorize(stack, **params):
    client = params.pop("client", None) or stack.register(REDIRECT)
    _, challenge = pkce()
    url = stack.authorize_url(client["client_id"], params.pop("redirect_uri", REDIRECT), challenge, "st", **params)
    with stack.http() as ua:
        return ua.get(url)


def redirect_error(r):
    assert r.status_code == 302, r.text
    q = dict(httpx.URL(r.headers["location"]).params)
    assert r.headers["location"].startswith(REDIRECT) and q["state"] == "st" and q["iss"]
    return q


def test_unknown_client_gets_a_page_not_a_redirect(stack):
    r = authorize(stack, client={"client_id": "nobody"})
    assert r.status_code == 400 and "location" not in r.headers and "unknown client_id" in r.text
    assert r.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:40000/other",
        "https://evil.example/cb",
        "http://127.0.0.1.evil.example:40000/cb",
        "http://127.0.0.1:40000/cb#x",
    ],
)
def test_redirect_mismatch_is_never_followed(stack, uri):
    r = authorize(stack, redirect_uri=uri)
    assert r.status_code == 400 and "location" not in r.headers and "redirect_uri" in r.text


def test_loopback_redirects_match_any_port_only_on_loopback(stack):
    client = stack.register("http://127.0.0.1/cb")
    r = authorize(stack, client=client, redirect_uri=REDIRECT)  # :40000, registered without a port
    assert r.status_code == 302 and r.headers["location"].startswith(stack.proxy.upstream.authorize_url)
    https = stack.register("https://app.example/cb")
    assert authorize(stack, client=https, redirect_uri="https://app.example:8443/cb").status_code == 400


@pytest.fixture(scope="module")
def confirmed(stack):
    """A client a user has approved once (its redirect URI is trusted with errors since)."""
    client = stack.register(REDIRECT)
    with stack.http() as ua:
        login(ua, stack.authorize_url(client["client_id"], REDIRECT, pkce()[1], "st"), REDIRECT)
    return client


BAD_REQUESTS = [
    ({"code_challenge": ""}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": "short"}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"scope": "mcp admin:everything"}, "invalid_scope"),
    ({"resource": "https://other.example/mcp"}, "invalid_target"),
]


@pytest.mark.parametrize("params, error", BAD_REQUESTS)
def test_bad_authorization_requests_go_back_with_an_error(stack, confirmed, params, error):
    q = redirect_error(authorize(stack, client=confirmed, **params))
    assert q["error"] == error and q["error_description"] and "code" not in q


@pytest.mark.parametrize("params, error", BAD_REQUESTS)
def test_no_error_goes_to_an_unapproved_clients_redirect_uri(stack, params, error):
    """RFC 9700 §4.11.2: anyone can register a client with their own redirect URI; before a user
    approved it here, the proxy shows an error page and never redirects (no open redirector)."""
    r = authorize(stack, **params)
    assert r.status_code == 400 and "location" not in r.headers, r.headers
    assert error in r.text and r.headers["x-frame-options"] == "DENY"


def test_pkce_verifier_missing_or_wrong(stack):
    client, query, verifier, redirect = stack.code_flow()
    base = {
        "grant_type": "authorization_code",
        "code": query["code"],
        "redirect_uri": redirect,
        "client_id": client["client_id"],
    }
    for bad in ({}, {"code_verifier": pkce()[0]}, {"code_verifier": "x" * 20}):
        r = stack.token(**base, **bad)
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant", r.text
        assert "code_verifier" in r.json()["error_description"]
    r = stack.token(**{**base, "redirect_uri": "http://127.0.0.1:40001/cb"}, code_verifier=verifier)
    assert r.status_code == 400 and "redirect_uri" in r.json()["error_description"]
    other = stack.register(REDIRECT)
    r = stack.token(**{**base, "client_id": other["client_id"]}, code_verifier=verifier)
    assert r.status_code == 400 and "another client" in r.json()["error_description"]
    assert stack.token(**base, code_verifier=verifier).status_code == 200


def test_token_endpoint_client_authentication(stack):
    client, query, verifier, redirect = stack.code_flow(
        registration={"token_endpoint_auth_method": "client_secret_basic"}
    )
    assert client["client_secret"]
    form = {
        "grant_type": "authorization_code",
        "code": query["code"],
        "redirect_uri": redirect,
        "code_verifier": verifier,
    }
    with stack.http() as c:
        r = c.post(stack.proxy.url("token"), data=form, auth=(client["client_id"], "wrong"))
        assert r.status_code == 401 and r.json()["error"] == "invalid_client"
        r = c.post(stack.proxy.url("token"), data={**form, "client_id": client["client_id"]})  # no secret
        assert r.status_code == 401 and r.json()["error"] == "invalid_client"
        r = c.post(stack.proxy.url("token"), data=form, auth=("unknown", "x"))
        assert r.status_code == 401
        r = c.post(stack.proxy.url("token"), data=form, auth=(client["client_id"], client["client_secret"]))
        assert r.status_code == 200, r.text
        assert c.post(stack.proxy.url("token"), data={"grant_type": "password", "client_id": "x"}).status_code == 401
    r = stack.token(grant_type="client_credentials", client_id=stack.register(REDIRECT)["client_id"])
    assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type"
    assert stack.token(grant_type="authorization_code", code="forged", client_id=client["client_id"]).status_code == 401


@pytest.mark.parametrize(
    "doc, error",
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": [f"https://app.example/{i}" for i in range(11)]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://app.example/cb"], "grant_types": ["client_credentials"]},
            "invalid_client_metadata",
        ),
        ({"redirect_uris": ["https://app.example/cb"], "response_types": ["token"]}, "invalid_client_metadata"),
        (
            {"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "private_key_jwt"},
            "invalid_client_metadata",
        ),
        ({"redirect_uris": ["https://app.example/cb"], "client_name": "n" * 201}, "invalid_client_metadata"),
        ({"redirect_uris": ["https://app.example/cb"], "scope": "root"}, "invalid_client_metadata"),
        ([1, 2], "invalid_client_metadata"),
    ],
)
def test_bad_registrations(stack, doc, error):
    r = httpx.post(stack.proxy.url("register"), json=doc, timeout=10)
    assert r.status_code == 400 and r.json()["error"] == error, r.text


def test_huge_and_garbage_registrations(stack):
    huge = {"redirect_uris": ["https://app.example/cb"], "client_name": "x", "pad": "y" * 100_000}
    r = httpx.post(stack.proxy.url("register"), json=huge, timeout=10)
    assert r.status_code == 413 and r.json()["error"] == "invalid_client_metadata"
    r = httpx.post(stack.proxy.url("register"), content=b"\xff{not json", timeout=10)
    assert r.status_code == 400 and r.json()["error"] == "invalid_client_metadata"
    assert httpx.get(stack.proxy.url("register"), timeout=10).status_code == 405
    r = httpx.post(stack.proxy.url("token"), content=b"a=" + b"b" * 100_000, timeout=10)
    assert r.status_code == 413


def test_state_is_bound_to_the_browser_and_single_use(stack):
    r = authorize(stack)
    upstream = httpx.URL(r.headers["location"])
    state = upstream.params["state"]
    with stack.http() as other_browser:  # no binding cookie: a login CSRF attempt
        page = other_browser.get(stack.proxy.callback_url, params={"state": state, "code": "x"})
        assert page.status_code == 400 and "another browser" in page.text
        page = other_browser.get(stack.proxy.callback_url, params={"state": state, "code": "x"})
        assert page.status_code == 400 and "unknown or expired" in page.text  # the state was used up
        page = other_browser.get(stack.proxy.callback_url, params={"code": "x"})
        assert page.status_code == 400


def test_consent_needs_the_page_token(stack):
    with stack.http() as c:
        r = c.post(stack.proxy.url("consent"), data={"consent": "forged", "csrf": "x", "decision": "allow"})
        assert r.status_code == 400 and "location" not in r.headers
        assert c.get(stack.proxy.url("consent")).status_code == 405


def test_no_secret_or_token_in_the_logs(stack, caplog):
    caplog.set_level(logging.DEBUG)
    client, query, verifier, redirect = stack.code_flow()
    tokens = stack.token(
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=redirect,
        code_verifier=verifier,
        client_id=client["client_id"],
    ).json()
    stack.token(
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=redirect,
        code_verifier=verifier,
        client_id=client["client_id"],
    )  # a replay: logged as a warning
    # the server side's records (the test's own httpx client logs the URLs it fetches)
    server_log = "\n".join(r.getMessage() for r in caplog.records if r.name.split(".")[0] in ("mcpio", "uvicorn"))
    assert "revoked" in server_log
    for secret in (
        stack.upstream_secret,
        query["code"],
        tokens["access_token"],
        tokens["refresh_token"],
        tokens["refresh_token"].split(".")[1],
    ):
        assert secret not in server_log
    assert "client_secret=" not in repr(stack.proxy) and stack.upstream_secret not in repr(stack.proxy)


def test_an_upstream_answer_from_another_issuer_is_refused(stack):
    """RFC 9207 mix-up defense: the IdP's redirect names its issuer; another one is refused."""
    with stack.http() as ua:
        r = ua.get(stack.authorize_url(stack.register(REDIRECT)["client_id"], REDIRECT, pkce()[1], "st"))
        state = httpx.URL(r.headers["location"]).params["state"]
        r = ua.get(stack.proxy.callback_url, params={"state": state, "code": "x", "iss": "http://127.0.0.1:1"})
    q = redirect_error(r)
    assert q["error"] == "access_denied" and "another issuer" in q["error_description"]


def test_the_token_request_repeats_the_redirect_uri(stack):
    client, query, verifier, _ = stack.code_flow()
    r = stack.token(
        grant_type="authorization_code", code=query["code"], code_verifier=verifier, client_id=client["client_id"]
    )
    assert r.status_code == 400 and "redirect_uri is required" in r.json()["error_description"]
