"""Fuzzing a protected app: the HTTP fuzz corpus (tests/fuzz/http_cases.py), each request with
an Authorization header drawn from bad credentials (``BAD_AUTHORIZATION``), tokens that are
wrong in one claim, or the valid token. Every answer is a status the client can act on (never a
5xx but the session cap's 503), refusals carry a Bearer challenge, and no answer repeats a token."""

from __future__ import annotations

import asyncio
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpio.auth import ResourceServer
from tests.fuzz.http_cases import BAD_AUTHORIZATION, MAX_BODY, MAX_SESSIONS, Case, cases, fuzz_server
from tests.support.asgi import call, scope_of
from tests.support.issuer import Issuer

N = int(os.environ.get("MCPIO_AUTH_FUZZ_EXAMPLES", "150"))
RESOURCE = "https://mcp.fuzz/mcp"
OK = {200, 202, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415}


def test_fuzzed_requests_with_bad_credentials():
    with Issuer() as iss, asyncio.Runner() as runner:
        good = iss.mint(aud=RESOURCE, scope="mcp")
        tokens = [
            b"Bearer " + good.encode(),
            b"Bearer " + iss.mint(aud="https://other.fuzz/mcp", scope="mcp").encode(),
            b"Bearer " + iss.mint(aud=RESOURCE, scope="mcp", lifetime=-600).encode(),
            b"Bearer " + iss.mint(aud=RESOURCE, scope="other").encode(),
            b"Bearer " + iss.mint(aud=RESOURCE, scope="mcp", iss="https://evil.fuzz").encode(),
        ]
        secrets = [t.split(b" ", 1)[1] for t in tokens] + [
            v.split(b" ", 1)[1] for v in BAD_AUTHORIZATION if v.startswith(b"Bearer ") and len(v) > 12
        ]
        app = fuzz_server().http_app(
            max_body_size=MAX_BODY,
            max_sessions=MAX_SESSIONS,
            sse_after=0.02,
            keepalive=0.05,
            retry_ms=10,
            auth=ResourceServer(resource=RESOURCE, issuer=iss.url, required_scopes=["mcp"]),
        )
        statuses: dict[int | None, int] = {}

        @settings(max_examples=N, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=cases(), auth=st.sampled_from(tokens * 3 + BAD_AUTHORIZATION + [None]))
        def one(case: Case, auth: bytes | None) -> None:
            headers = [(k, v) for k, v in case.with_sessions(b"nope", b"gone") if k.lower() != b"authorization"]
            if auth is not None:
                headers.append((b"authorization", auth))
            scope = scope_of(case.method, case.path, headers, query=case.query, root_path=case.root_path)
            r = runner.run(
                call(
                    app,
                    scope,
                    case.chunks(),
                    disconnect_after=case.disconnect_after,
                    max_writes=case.max_writes,
                    patience=case.patience,
                )
            )
            statuses[r.status] = statuses.get(r.status, 0) + 1
            if r.status is None:
                assert r.client_left
                return
            assert r.status in OK or (r.status == 503 and r.header(b"retry-after")), (r.status, r.body[:300])
            if r.status in (401, 403) and r.header(b"www-authenticate"):
                assert r.header(b"www-authenticate").startswith(b"Bearer ")
            if auth != tokens[0] and not case.path.startswith("/.well-known"):
                assert r.status != 200 or r.body.startswith(b'{"resource"'), (r.status, auth, r.body[:200])
            seen = r.body + b"".join(v for _, v in r.headers)
            assert not any(s in seen for s in secrets), r.body[:300]

        one()
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{'
            b'"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
        )
        r = runner.run(
            call(
                app,
                scope_of(
                    "POST",
                    "/mcp",
                    [
                        (b"host", b"127.0.0.1"),
                        (b"content-type", b"application/json"),
                        (b"authorization", tokens[0]),
                        (b"accept", b"application/json, text/event-stream"),
                        (b"mcp-protocol-version", b"2026-07-28"),
                        (b"mcp-method", b"server/discover"),
                    ],
                ),
                [body],
            )
        )
        assert r.status == 200, r.body  # still healthy for a good token
        runner.run(app.aclose())
    assert statuses.get(401) and statuses.get(400), statuses
