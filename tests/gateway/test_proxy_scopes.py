"""OAuth scopes of the custom requests a proxy forwards (``Server.proxy(method_scopes=...)``): a
proxy of the real ``extended_upstream.py`` (a subprocess) served over HTTP on 127.0.0.1 with a
real issuer, both eras: a caller lacking them gets the 403 a tool call lacking its scopes gets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from mcpio import Server
from mcpio.auth import ResourceServer
from tests.auth.test_mount_scopes import answer, legacy_session
from tests.auth.test_resource_http import RESOURCE, challenge, modern
from tests.support.http import ServerThread

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def srv(issuer):
    proxy = Server.proxy(
        [sys.executable, str(HERE / "extended_upstream.py")], method_scopes={"acme/echo": ["echo"], "*": ["custom"]}
    )
    proxy.disable("acme/wait")
    app = proxy.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
    with ServerThread(app) as s:
        yield s


def test_a_forwarded_custom_request_lacking_its_scopes_gets_403_in_the_modern_era(srv, issuer):
    """``acme/echo`` needs ``echo``, ``acme/stamped`` (named nowhere) those of ``"*"``: a token
    lacking them is refused as a tool call lacking its scopes is (403, ``insufficient_scope``
    naming the required scopes and the method's), one holding them gets the upstream's answer;
    MCP's own methods and a disabled custom method (-32601) need none."""
    weak = issuer.mint(aud=RESOURCE, scope="mcp")
    strong = issuer.mint(aud=RESOURCE, scope="mcp echo custom")
    with httpx.Client(timeout=30) as http:
        r = modern(http, srv, "acme/echo", {"text": "hi"}, tok=weak)
        assert r.status_code == 403, r.text
        said = challenge(r)
        assert said["error"] == "insufficient_scope" and said["scope"] == "echo mcp"
        assert r.json()["error"] == "insufficient_scope"
        r = modern(http, srv, "acme/stamped", tok=issuer.mint(aud=RESOURCE, scope="mcp echo"))
        assert r.status_code == 403 and challenge(r)["scope"] == "custom mcp", r.text
        assert modern(http, srv, "acme/echo", {"text": "hi"}, tok=strong).json()["result"]["echo"] == "hi"
        assert modern(http, srv, "acme/stamped", tok=strong).json()["result"]["ok"] is True
        assert "tools" in modern(http, srv, "tools/list", tok=weak).json()["result"]
        r = modern(http, srv, "acme/wait", tok=weak)
        assert r.status_code != 403 and r.json()["error"]["code"] == -32601, r.text


def test_a_forwarded_custom_request_lacking_its_scopes_gets_403_in_a_legacy_session(srv, issuer):
    with httpx.Client(timeout=30) as http:
        headers = legacy_session(http, srv.url, issuer.mint(aud=RESOURCE, scope="mcp custom"))
        echo = {"jsonrpc": "2.0", "id": 1, "method": "acme/echo", "params": {"text": "hi"}}
        r = http.post(srv.url, json=echo, headers=headers)
        assert r.status_code == 403 and challenge(r)["scope"] == "echo mcp", r.text
        stamped = {"jsonrpc": "2.0", "id": 2, "method": "acme/stamped", "params": {}}
        assert answer(http.post(srv.url, json=stamped, headers=headers))["result"]["ok"] is True


def test_method_scopes_name_custom_methods_only():
    with pytest.raises(ValueError, match="tools/call"):
        Server.proxy([sys.executable, str(HERE / "extended_upstream.py")], method_scopes={"tools/call": ["x"]})


def test_a_gateway_guards_the_custom_requests_it_forwards_as_a_proxy_does(issuer, tmp_path):
    """``Server.from_config(path, method_scopes=...)``: the custom requests the gateway forwards
    to its one upstream declaring extensions (``_extensions.routes``) need those scopes."""
    config = tmp_path / "mcp.json"
    extended = {"command": sys.executable, "args": [str(HERE / "extended_upstream.py")]}
    plain = {"command": sys.executable, "args": [str(HERE / "upstream.py")]}
    config.write_text(json.dumps({"mcpServers": {"ext": extended, "plain": plain}}))
    gateway = Server.from_config(str(config), method_scopes={"*": ["custom"]}, era="modern")  # (declaring extensions)
    app = gateway.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
    with ServerThread(app) as s, httpx.Client(timeout=30) as http:
        r = modern(http, s, "acme/echo", {"text": "hi"}, tok=issuer.mint(aud=RESOURCE, scope="mcp"))
        assert r.status_code == 403 and challenge(r)["scope"] == "custom mcp", r.text
        r = modern(http, s, "acme/echo", {"text": "hi"}, tok=issuer.mint(aud=RESOURCE, scope="mcp custom"))
        assert r.json().get("result", {}).get("echo") == "hi", r.text
