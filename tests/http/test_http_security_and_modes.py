"""Security defaults (Host/Origin, loopback binding), the deprecated 2024-11-05 HTTP+SSE mode,
and mounting the app in Starlette."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from mcpio._protocol._http import SSEParser
from tests.http.app import make_server
from tests.http.conftest import LEGACY, initialize, modern, modern_headers, rpc, session_headers
from tests.support.http import ServerThread


def test_dns_rebinding_host_and_origin_are_403_naming_what_is_allowed(srv, http):
    init = rpc(
        0, "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )
    r = http.post(srv.url, json=init, headers={"host": "evil.example.com", "origin": "http://evil.example.com"})
    assert r.status_code == 403
    assert "localhost" in r.json()["error"]["message"] and "[::1]" in r.json()["error"]["message"]
    r = http.post(srv.url, json=init, headers={"origin": "http://evil.example.com"})
    assert r.status_code == 403 and "Origin" in r.json()["error"]["message"]
    for host in ("localhost", f"localhost:{srv.port}", "127.0.0.1:1", "[::1]:9"):
        r = http.post(srv.url, json=init, headers={"host": host, "origin": f"http://{host}"})
        assert r.status_code == 200, host
    r = http.post(
        srv.url,
        json=modern(1, "server/discover"),
        headers={**modern_headers("server/discover"), "host": "evil.example.com"},
    )
    assert r.status_code == 403  # both eras


def test_allow_lists_are_configurable(serve, http):
    srv = serve(allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"])
    init = rpc(
        0, "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )
    assert http.post(srv.url, json=init).status_code == 403  # 127.0.0.1 is no longer listed
    r = http.post(srv.url, json=init, headers={"host": "mcp.example.com", "origin": "https://app.example.com"})
    assert r.status_code == 200


def test_binding_beyond_loopback_needs_allow_remote():
    server = make_server()
    with pytest.raises(ValueError, match="allow_remote"):
        asyncio.run(server.serve_http("0.0.0.0", 0))


def test_legacy_http_sse_transport_of_2024_11_05(serve, http):
    srv = serve(legacy_sse=True)
    seen: list[tuple[str, str]] = []
    endpoint = threading.Event()
    done = threading.Event()

    def listen() -> None:
        with httpx.Client(timeout=10) as c, c.stream("GET", srv.base + "/sse") as r:
            assert r.headers["content-type"] == "text/event-stream"
            p = SSEParser()
            for chunk in r.iter_raw():
                for e in p.feed(chunk):
                    seen.append((e.event, e.data))
                    if e.event == "endpoint":
                        endpoint.set()
                    elif '"id":2' in e.data:
                        done.set()
                        return

    t = threading.Thread(target=listen)
    t.start()
    assert endpoint.wait(5)
    post_to = srv.base + seen[0][1]
    assert seen[0][1].startswith("/messages?session_id=")
    init = rpc(
        1,
        "initialize",
        {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    assert http.post(post_to, json=init).status_code == 202
    assert http.post(post_to, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    assert (
        http.post(post_to, json=rpc(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})).status_code == 202
    )
    assert done.wait(5)
    t.join(5)
    answers = [json.loads(d) for ev, d in seen if ev == "message"]
    assert answers[0]["result"]["protocolVersion"] == "2024-11-05"
    assert answers[-1]["result"]["content"] == [{"type": "text", "text": "4"}]
    assert http.post(srv.base + "/messages?session_id=nope", json=rpc(3, "ping")).status_code == 404
    # the Streamable HTTP endpoint still works beside it
    initialize(http, srv.url)


def test_mounted_in_starlette_with_its_lifespan(http):
    from starlette.applications import Starlette
    from starlette.routing import Mount

    server = make_server()
    mcp_app = server.http_app("/mcp")
    app = Starlette(routes=[Mount("/api", app=mcp_app)], lifespan=mcp_app.lifespan)
    with ServerThread(app, "/api/mcp") as srv:
        sid = initialize(http, srv.url)
        r = http.post(
            srv.url,
            json=rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}),
            headers=session_headers(sid),
        )
        assert r.json()["result"]["structuredContent"] == {"result": 2}
        r = http.post(srv.url, json=modern(2, "tools/list"), headers=modern_headers("tools/list"))
        assert r.status_code == 200
