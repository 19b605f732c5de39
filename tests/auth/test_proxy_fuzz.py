"""Fuzzing the OAuth proxy's endpoints (in-process ASGI, tests/support/asgi.py checks the
framing): random methods, query strings, forms, JSON and bytes on /authorize, /callback,
/consent, /token, /register and the metadata. Every answer is a status a client can act on
(never a 5xx), and none carries the upstream client secret."""

from __future__ import annotations

import asyncio
import json
import os
from urllib.parse import urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpio import Server
from mcpio.auth import OAuthProxy
from tests.support.asgi import call, scope_of

N = int(os.environ.get("MCPIO_AUTH_FUZZ_EXAMPLES", "150"))
SECRET = "upstream-secret-0123456789"
OK = {200, 201, 302, 400, 401, 403, 404, 405, 406, 413, 415}
PATHS = [
    "/authorize",
    "/callback",
    "/consent",
    "/token",
    "/register",
    "/jwks",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource/mcp",
    "/mcp",
]
KEYS = [
    "client_id",
    "redirect_uri",
    "response_type",
    "code_challenge",
    "code_challenge_method",
    "state",
    "scope",
    "resource",
    "code",
    "code_verifier",
    "grant_type",
    "refresh_token",
    "client_secret",
    "consent",
    "csrf",
    "decision",
    "iss",
    "error",
]
VALUES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "code",
            "S256",
            "plain",
            "authorization_code",
            "refresh_token",
            "allow",
            "http://127.0.0.1:1/cb",
            "https://evil.example/cb",
            "http://127.0.0.1:9/mcp",
            "a" * 43,
            "mcp",
            "x.y",
            "",
            "\x00",
            "%zz",
            "javascript:x",
        ]
    ),
)
FORMS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8)
BODIES = st.one_of(
    FORMS.map(lambda f: urlencode(f).encode()),
    st.binary(max_size=300),
    st.dictionaries(
        st.sampled_from(
            ["redirect_uris", "grant_types", "client_name", "scope", "token_endpoint_auth_method", "response_types"]
        ),
        st.one_of(VALUES, st.lists(VALUES, max_size=4), st.integers(), st.none()),
        max_size=6,
    ).map(lambda d: json.dumps(d).encode()),
)
HEADERS = st.lists(
    st.sampled_from(
        [
            (b"authorization", b"Basic !!!"),
            (b"authorization", b"Basic eDp5"),
            (b"cookie", b"mcpio_oauth_abc=def"),
            (b"content-type", b"application/json"),
            (b"authorization", b"Bearer x.y.z"),
        ]
    ),
    max_size=3,
)


def test_fuzzed_requests_to_the_proxy():
    proxy = OAuthProxy(
        issuer="http://127.0.0.1:9",
        upstream_authorize_url="http://127.0.0.1:1/authorize",
        upstream_token_url="http://127.0.0.1:1/token",
        client_id="up",
        client_secret=SECRET,
        max_logins_per_address=10**6,  # every fuzzed request comes from one address
        max_registrations_per_address=10**6,
    )
    app = Server("fuzz").http_app(auth=proxy)
    seen: dict[int | None, int] = {}

    with asyncio.Runner() as runner:
        doc = {"redirect_uris": ["http://127.0.0.1:1/cb"], "token_endpoint_auth_method": "none"}
        post = scope_of("POST", "/register", [(b"host", b"127.0.0.1:9"), (b"content-type", b"application/json")])
        registered = json.loads(runner.run(call(app, post, [json.dumps(doc).encode()])).body)

        @settings(max_examples=N, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(
            method=st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
            path=st.sampled_from(PATHS),
            query=FORMS,
            body=BODIES,
            headers=HEADERS,
            known=st.booleans(),
        )
        def run(method, path, query, body, headers, known):
            if known:
                query = {**query, "client_id": registered["client_id"]}
            scope = scope_of(method, path, [(b"host", b"127.0.0.1:9"), *headers], query=urlencode(query).encode())
            reply = runner.run(call(app, scope, [body]))
            seen[reply.status] = seen.get(reply.status, 0) + 1
            assert reply.status in OK, (reply.status, path, reply.body[:300])
            assert SECRET.encode() not in reply.body and not any(SECRET.encode() in v for _, v in reply.headers)

        run()
    assert len(seen) > 3, seen  # the fuzzing reached several answers, not one refusal
