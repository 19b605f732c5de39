"""Per-item scopes survive ``Server.mount``, and ``Server(hide_unauthorized=True)`` lists only
what the caller's token may use: a real uvicorn server on 127.0.0.1, a real issuer, both eras."""

from __future__ import annotations

import httpx
import pytest

from mcpio import Server
from mcpio.auth import ResourceServer
from tests.auth.test_resource_http import LEGACY, RESOURCE, modern
from tests.support.http import ServerThread

ACCEPT = "application/json, text/event-stream"


def make_server() -> Server:
    child = Server("notes")

    @child.tool(scopes=["notes:write"])
    def write(text: str) -> str:
        return "saved " + text

    @child.tool
    def count() -> int:
        return 3

    @child.resource("notes://{id}", scopes=["notes:read"])
    def note(id: str) -> str:
        return "note " + id

    parent = Server("main", hide_unauthorized=True)
    parent.mount(child, namespace="notes")
    return parent


@pytest.fixture(scope="module")
def srv(issuer):
    app = make_server().http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
    with ServerThread(app) as s:
        yield s


def legacy_session(http: httpx.Client, url: str, tok: str) -> dict[str, str]:
    headers = {"accept": ACCEPT, "authorization": "Bearer " + tok}
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    r = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=headers)
    assert r.status_code == 200, r.text
    headers = {**headers, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def answer(r: httpx.Response) -> dict:
    if r.headers["content-type"].startswith("text/event-stream"):
        import json

        data = [line[5:] for line in r.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return r.json()


def test_mounted_scopes_are_enforced_and_hidden_in_the_modern_era(srv, issuer):
    with httpx.Client(timeout=10) as http:
        weak = issuer.mint(aud=RESOURCE, scope="mcp")
        strong = issuer.mint(aud=RESOURCE, scope="mcp notes:write notes:read")
        listed = modern(http, srv, "tools/list", tok=weak).json()["result"]
        assert [t["name"] for t in listed["tools"]] == ["notes__count"]
        assert listed["cacheScope"] == "private"
        listed = modern(http, srv, "tools/list", tok=strong).json()["result"]
        assert sorted(t["name"] for t in listed["tools"]) == ["notes__count", "notes__write"]
        r = modern(
            http, srv, "tools/call", {"name": "notes__write", "arguments": {"text": "x"}}, tok=weak, name="notes__write"
        )
        assert r.status_code == 403 and "notes:write" in r.headers["www-authenticate"]
        r = modern(
            http,
            srv,
            "tools/call",
            {"name": "notes__write", "arguments": {"text": "x"}},
            tok=strong,
            name="notes__write",
        )
        assert r.json()["result"]["content"][0]["text"] == "saved x"
        templates = modern(http, srv, "resources/templates/list", tok=weak).json()["result"]["resourceTemplates"]
        assert templates == []
        r = modern(http, srv, "resources/read", {"uri": "notes://notes/1"}, tok=weak, name="notes://notes/1")
        assert r.status_code == 403


def test_mounted_scopes_in_a_legacy_session(srv, issuer):
    with httpx.Client(timeout=10) as http:
        headers = legacy_session(http, srv.url, issuer.mint(aud=RESOURCE, scope="mcp notes:read"))
        r = http.post(srv.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert [t["name"] for t in answer(r)["result"]["tools"]] == ["notes__count"]
        r = http.post(
            srv.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "notes://notes/7"}},
            headers=headers,
        )
        assert answer(r)["result"]["contents"][0]["text"] == "note 7"
        r = http.post(
            srv.url,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "notes__write", "arguments": {"text": "x"}},
            },
            headers=headers,
        )
        assert r.status_code == 403


def test_a_disabled_tool_is_unknown_whatever_its_scopes(issuer):
    """A tool ``disable``d (here a mounted one with ``scopes=``) is refused as unknown (-32602), not
    with a 403 naming the scope it would need: a caller learns nothing of what is not served."""
    server = make_server()
    server.disable(names=["notes__write"])
    app = server.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
    with ServerThread(app) as s, httpx.Client(timeout=10) as http:
        headers = legacy_session(http, s.url, issuer.mint(aud=RESOURCE, scope="mcp"))
        call = {"name": "notes__write", "arguments": {"text": "x"}}
        r = http.post(s.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers=headers)
        assert r.status_code == 200, (r.status_code, r.headers.get("www-authenticate"))
        assert answer(r)["error"]["code"] == -32602
        r = modern(http, s, "tools/call", call, tok=issuer.mint(aud=RESOURCE, scope="mcp"), name="notes__write")
        assert r.status_code != 403 and r.json()["error"]["code"] == -32602, (r.status_code, r.text)
