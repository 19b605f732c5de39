"""The resource server on the wire: a real uvicorn server on 127.0.0.1 protected by
``http_app(auth=ResourceServer(...))``, a real issuer (tests/support/issuer.py), both eras."""

from __future__ import annotations

import re

import httpx
import pytest

from mcpio import Context, Server
from mcpio.auth import ResourceServer
from tests.support.http import ServerThread
from tests.support.issuer import Issuer

RESOURCE = "https://mcp.test/mcp"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def make_server() -> Server:
    server = Server("protected", "1.0.0")

    @server.tool
    def whoami(ctx: Context) -> dict:
        """Who the token says is calling."""
        a = ctx.auth
        return {"subject": a.subject, "client": a.client_id, "scopes": sorted(a.scopes)}

    @server.tool(scopes=["notes:write"])
    def write_note(text: str) -> str:
        """Needs notes:write."""
        return "saved " + text

    @server.tool(scopes=["notes:write", "notes:admin"])
    def purge() -> str:
        return "purged"

    @server.resource("notes://{id}", scopes=["notes:read"])
    def note(id: str) -> str:
        return "note " + id

    @server.prompt(scopes=["notes:read"])
    def summarize() -> str:
        return "summarize"

    @server.middleware
    async def seen(request, call_next):
        result = await call_next(request)
        if request.method == "tools/call" and request.context.auth is not None:
            result.setdefault("_meta", {})["who"] = request.context.auth.subject
        return result

    return server


@pytest.fixture(scope="module")
def srv(issuer):
    server = make_server()
    app = server.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
    with ServerThread(app) as s:
        yield s


@pytest.fixture
def http():
    with httpx.Client(timeout=10) as c:
        yield c


def token(issuer, scope="mcp", **kw) -> str:
    return issuer.mint(aud=RESOURCE, scope=scope, **kw)


def modern(http, srv, method, params=None, tok=None, name=None):
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    if tok:
        headers["authorization"] = "Bearer " + tok
    return http.post(srv.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers)


def challenge(response) -> dict[str, str]:
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def test_protected_resource_metadata_at_both_well_known_uris(http, srv, issuer):
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        r = http.get(srv.base + path)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        doc = r.json()
        assert doc["resource"] == RESOURCE
        assert doc["authorization_servers"] == [issuer.url]
        assert doc["scopes_supported"] == ["mcp"]


def test_no_token_is_401_with_the_metadata_and_scope(http, srv):
    r = modern(http, srv, "tools/list")
    assert r.status_code == 401
    c = challenge(r)
    assert c["resource_metadata"] == "https://mcp.test/.well-known/oauth-protected-resource/mcp"
    assert c["scope"] == "mcp" and "error" not in c


@pytest.mark.parametrize("bad", ["forged", "expired", "wrong-aud", "wrong-iss", "none", "garbage"])
def test_invalid_tokens_are_401_invalid_token(http, srv, issuer, bad):
    from cryptography.hazmat.primitives.asymmetric import rsa

    tok = {
        "forged": lambda: issuer.mint(
            aud=RESOURCE, scope="mcp", key=rsa.generate_private_key(public_exponent=65537, key_size=2048)
        ),
        "expired": lambda: token(issuer, lifetime=-600),
        "wrong-aud": lambda: issuer.mint(aud="https://other.test/mcp", scope="mcp"),
        "wrong-iss": lambda: token(issuer, iss="https://evil.test"),
        "none": lambda: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
        "garbage": lambda: "abc.def",
    }[bad]()
    r = modern(http, srv, "tools/list", tok=tok)
    assert r.status_code == 401
    c = challenge(r)
    assert c["error"] == "invalid_token" and c["resource_metadata"].endswith("/oauth-protected-resource/mcp")
    assert tok not in r.text and tok not in r.headers["www-authenticate"]


@pytest.mark.parametrize("header", ["Bearer a b", "Bearer \u00e9t\u00e9"])
def test_malformed_authorization_is_400(http, srv, header):
    r = http.post(
        srv.url, content=b"{}", headers={"authorization": header.encode("utf-8"), "content-type": "application/json"}
    )
    assert r.status_code == 400 and challenge(r)["error"] == "invalid_request"


def test_other_schemes_get_the_bearer_challenge(http, srv):
    r = http.post(srv.url, content=b"{}", headers={"authorization": "Basic dTpw"})
    assert r.status_code == 401 and "resource_metadata" in challenge(r)


@pytest.mark.parametrize("header", ["Bearer", "bearer"])
def test_an_empty_bearer_token_is_401_invalid_token(http, srv, header):
    """Issue 32: an empty token is an invalid token (401 + the challenge), not a bad request."""
    r = http.post(srv.url, content=b"{}", headers={"authorization": header, "content-type": "application/json"})
    assert r.status_code == 401
    c = challenge(r)
    assert c["error"] == "invalid_token" and c["resource_metadata"].endswith("/oauth-protected-resource/mcp")


def test_a_token_sent_without_the_bearer_prefix_is_not_echoed(http, srv, issuer):
    tok = token(issuer)
    r = http.post(srv.url, content=b"{}", headers={"authorization": tok, "content-type": "application/json"})
    assert r.status_code == 401 and tok[:20] not in r.text and tok[:20] not in r.headers["www-authenticate"]
    assert "'Bearer <token>'" in r.json()["error_description"]


def test_server_wide_scope_missing_is_403_insufficient_scope(http, srv, issuer):
    r = modern(http, srv, "tools/list", tok=token(issuer, scope="other"))
    assert r.status_code == 403
    assert challenge(r)["error"] == "insufficient_scope" and challenge(r)["scope"] == "mcp"


def test_modern_era_calls_and_step_up(http, srv, issuer):
    r = modern(http, srv, "tools/call", {"name": "whoami", "arguments": {}}, token(issuer), "whoami")
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert result["structuredContent"] == {"subject": "alice", "client": "app-1", "scopes": ["mcp"]}
    assert result["_meta"]["who"] == "alice"  # middleware sees ctx.auth too
    r = modern(http, srv, "tools/call", {"name": "purge", "arguments": {}}, token(issuer, "mcp notes:write"), "purge")
    assert r.status_code == 403
    c = challenge(r)
    assert c["error"] == "insufficient_scope" and c["scope"] == "mcp notes:admin notes:write"  # all, at once
    r = modern(
        http,
        srv,
        "tools/call",
        {"name": "purge", "arguments": {}},
        token(issuer, "mcp notes:write notes:admin"),
        "purge",
    )
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "purged"


def test_resources_and_prompts_scopes(http, srv, issuer):
    r = modern(http, srv, "resources/read", {"uri": "notes://7"}, token(issuer), "notes://7")
    assert r.status_code == 403 and challenge(r)["scope"] == "mcp notes:read"
    r = modern(http, srv, "resources/read", {"uri": "notes://7"}, token(issuer, "mcp notes:read"), "notes://7")
    assert r.status_code == 200 and r.json()["result"]["contents"][0]["text"] == "note 7"
    r = modern(http, srv, "prompts/get", {"name": "summarize"}, token(issuer), "summarize")
    assert r.status_code == 403


def legacy_init(http, srv, tok):
    r = http.post(
        srv.url,
        headers={"accept": ACCEPT, "authorization": "Bearer " + tok},
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        },
    )
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    headers = {"accept": ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": LEGACY}
    http.post(
        srv.url,
        headers={**headers, "authorization": "Bearer " + tok},
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    return headers


def call(http, srv, headers, tok, name, rid=1):
    return http.post(
        srv.url,
        headers={**headers, "authorization": "Bearer " + tok},
        json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": {}}},
    )


def test_legacy_session_step_up_and_latest_token(http, srv, issuer):
    first = token(issuer)
    headers = legacy_init(http, srv, first)
    r = call(http, srv, headers, first, "purge")
    assert r.status_code == 403 and challenge(r)["scope"] == "mcp notes:admin notes:write"
    wider = token(issuer, "mcp notes:write notes:admin")
    r = call(http, srv, headers, wider, "purge", 2)
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "purged"
    r = call(http, srv, headers, wider, "whoami", 3)  # the session's handlers see the latest token
    assert r.json()["result"]["structuredContent"]["scopes"] == ["mcp", "notes:admin", "notes:write"]


def test_legacy_session_belongs_to_its_principal(http, srv, issuer):
    headers = legacy_init(http, srv, token(issuer))
    r = call(http, srv, headers, token(issuer, sub="mallory"), "whoami")
    assert r.status_code == 404  # as for an unknown session: nothing says whose it is
    r = call(http, srv, headers, token(issuer, jti="again"), "whoami", 2)
    assert r.status_code == 200


def test_issuer_unreachable_is_503_not_500(http, issuer):
    server = make_server()
    with Issuer() as other:
        other.mode = "down"
        app = server.http_app(auth=ResourceServer(resource=RESOURCE, issuer=other.url))
        with ServerThread(app) as s:
            r = modern(http, s, "tools/list", tok=other.mint(aud=RESOURCE))
            assert r.status_code == 503 and r.headers["retry-after"]
            assert "HTTP 503" in r.json()["error_description"]


def test_the_token_never_reaches_the_trace(http, issuer, tmp_path, monkeypatch):
    trace = tmp_path / "trace.log"
    monkeypatch.setenv("MCPIO_TRACE", str(trace))
    server = make_server()
    app = server.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url))
    tok = token(issuer, "mcp notes:write")
    with ServerThread(app) as s:
        r = modern(http, s, "tools/call", {"name": "write_note", "arguments": {"text": "hi"}}, tok, "write_note")
        assert r.status_code == 200
        headers = legacy_init(http, s, tok)
        assert call(http, s, headers, tok, "whoami").status_code == 200
    text = trace.read_text()
    assert "saved hi" in text and tok not in text and tok.split(".")[2] not in text


def test_scope_hierarchies(http, issuer):
    server = make_server()
    app = server.http_app(
        auth=ResourceServer(
            resource=RESOURCE,
            issuer=issuer.url,
            required_scopes=["mcp"],
            implied_scopes={"notes:admin": ["notes:write"], "root": ["mcp", "notes:admin"]},
        )
    )
    with ServerThread(app) as s:
        r = modern(http, s, "tools/call", {"name": "purge", "arguments": {}}, token(issuer, "mcp notes:admin"), "purge")
        assert r.status_code == 200, r.text  # notes:admin implies notes:write
        r = modern(http, s, "tools/call", {"name": "purge", "arguments": {}}, token(issuer, "root"), "purge")
        assert r.status_code == 200, r.text  # transitively
        r = modern(http, s, "tools/call", {"name": "purge", "arguments": {}}, token(issuer, "mcp notes:write"), "purge")
        assert r.status_code == 403


def test_the_scope_check_reads_the_body_not_the_headers(http, srv, issuer):
    # Mcp-Name says a harmless tool, the body calls a scoped one: the body decides (403)
    r = modern(http, srv, "tools/call", {"name": "purge", "arguments": {}}, token(issuer), "whoami")
    assert r.status_code == 403 and challenge(r)["error"] == "insufficient_scope"


def test_a_legacy_batch_with_a_scoped_call_is_refused_whole(http, srv, issuer):
    tok = token(issuer)
    r = http.post(
        srv.url,
        headers={"accept": ACCEPT, "authorization": "Bearer " + tok},
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    headers = {
        "accept": ACCEPT,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-03-26",
        "authorization": "Bearer " + tok,
    }
    http.post(srv.url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "write_note", "arguments": {"text": "x"}},
        },
    ]
    r = http.post(srv.url, headers=headers, json=batch)
    assert r.status_code == 403 and challenge(r)["scope"] == "mcp notes:write"
