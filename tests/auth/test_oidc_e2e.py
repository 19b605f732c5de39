"""End to end with a real authorization server: oidc-provider (scripts/setup-oidc) issues
RFC 8707 audience-bound JWT access tokens; ``mcpio run -t http … --auth-issuer`` (a real
subprocess) verifies them against the provider's JWKS (discovered from its metadata)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mcpio import Client


def test_metadata_names_the_real_issuer(idp, mcp_url):
    base = mcp_url.rsplit("/mcp", 1)[0]
    doc = httpx.get(base + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
    assert doc == {
        "resource": mcp_url,
        "authorization_servers": [idp.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp"],
    }
    r = httpx.post(mcp_url, json={}, timeout=10)
    assert r.status_code == 401 and 'resource_metadata="' + base in r.headers["www-authenticate"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_list_and_call_with_a_real_token(idp, mcp_url, era):
    token = idp.client_credentials(mcp_url, "mcp notes:write")

    async def main():
        async with Client(mcp_url, era=era, headers={"Authorization": f"Bearer {token}"}, timeout=20) as c:
            tools = {t["name"] for t in await c.list_tools()}
            who = await c.call_tool("whoami", {})
            added = await c.call_tool("add_note", {"text": "hello"})
            return tools, who, added

    tools, who, added = asyncio.run(main())
    assert tools == {"whoami", "add_note"}
    assert who["structuredContent"] == {"subject": "svc", "client": "svc", "scopes": ["mcp", "notes:write"]}
    assert added["content"][0]["text"].endswith("notes")


def post_call(url, token, name, args):
    return httpx.post(
        url,
        timeout=10,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": name,
                "arguments": args,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        headers={
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": name,
        },
    )


def test_a_token_for_another_resource_is_refused(idp, mcp_url):
    token = idp.client_credentials("http://127.0.0.1:1/other", "mcp notes:write")
    r = post_call(mcp_url, token, "whoami", {})
    assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
    assert "another audience" in r.json()["error_description"]


def test_step_up_for_a_scoped_tool(idp, mcp_url):
    narrow = idp.client_credentials(mcp_url, "mcp")
    assert post_call(mcp_url, narrow, "whoami", {}).status_code == 200
    r = post_call(mcp_url, narrow, "add_note", {"text": "x"})
    assert r.status_code == 403
    assert 'error="insufficient_scope"' in r.headers["www-authenticate"]
    assert 'scope="mcp notes:write"' in r.headers["www-authenticate"]
    wider = idp.client_credentials(mcp_url, "mcp notes:write")  # the client's step-up
    r = post_call(mcp_url, wider, "add_note", {"text": "x"})
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"].endswith("notes")


def test_server_wide_scope_is_required(idp, mcp_url):
    r = post_call(mcp_url, idp.client_credentials(mcp_url, "notes:read"), "whoami", {})
    assert r.status_code == 403 and 'scope="mcp"' in r.headers["www-authenticate"]


def test_the_cli_client_with_a_token_keeps_it_out_of_its_trace_and_output(idp, mcp_url, tmp_path):
    import subprocess
    import sys

    token = idp.client_credentials(mcp_url, "mcp")
    trace = tmp_path / "client.trace"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpio",
            "call",
            mcp_url,
            "whoami",
            "--header",
            f"Authorization: Bearer {token}",
            "--trace",
            str(trace),
            "-v",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert '"svc"' in r.stdout
    text = trace.read_text()
    assert "whoami" in text
    for where in (text, r.stdout, r.stderr):
        assert token not in where and token.split(".")[2] not in where
    bad = subprocess.run(
        [sys.executable, "-m", "mcpio", "call", mcp_url, "whoami", "--header", "Authorization: Bearer not.a.token"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "not.a.token" not in bad.stderr + bad.stdout


def test_a_user_token_from_the_authorization_code_flow_and_its_refresh(idp, mcp_url):
    """A user logs in (authorization code + PKCE S256 + resource); their legacy session keeps
    working with the refreshed token, and stays theirs: another user's token cannot use it."""
    tokens = idp.authorization_code(mcp_url, "openid offline_access mcp notes:write", user="ada")
    accept = {"accept": "application/json, text/event-stream"}

    def post(body, token, sid=None):
        headers = {**accept, "authorization": f"Bearer {token}"}
        if sid:
            headers.update({"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
        return httpx.post(mcp_url, json=body, headers=headers, timeout=10)

    r = post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"},
            },
        },
        tokens["access_token"],
    )
    sid = r.headers["mcp-session-id"]
    assert (
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, tokens["access_token"], sid).status_code == 202
    )
    whoami = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    r = post(whoami, tokens["access_token"], sid)
    assert r.json()["result"]["structuredContent"] == {
        "subject": "ada",
        "client": "app",
        "scopes": ["mcp", "notes:write"],
    }
    fresh = idp.refresh(tokens["refresh_token"], mcp_url)["access_token"]
    assert fresh != tokens["access_token"]
    assert post({**whoami, "id": 2}, fresh, sid).json()["result"]["structuredContent"]["subject"] == "ada"
    other = idp.authorization_code(mcp_url, "openid mcp notes:write", user="mallory")["access_token"]
    r = post({**whoami, "id": 3}, other, sid)
    assert r.status_code == 404  # another principal's session: as if unknown
