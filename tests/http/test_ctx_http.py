"""ctx.http in one legacy HTTP session: each request sees the POST that carried it (its own
headers), never the POST that opened the session, whether it was served on the POST's own task
or queued for the session (a 2025-03-26 batch), and through the `mcpio.deps.http_request`
provider and middleware alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.http.conftest import ACCEPT_BOTH, rpc, session_headers
from tests.server.test_dependencies import _load
from tests.support.http import ServerThread

SERVER = Path(__file__).resolve().parents[1] / "servers" / "deps_server.py"


def _open(http: httpx.Client, url: str, version: str) -> str:
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    r = http.post(url, json=rpc(0, "initialize", init), headers={"accept": ACCEPT_BOTH, "x-tenant": "opener"})
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session_headers(sid, version)
    )
    assert r.status_code == 202
    return sid


def _results(r: httpx.Response) -> list[dict[str, Any]]:
    if r.headers["content-type"].startswith("application/json"):
        body = r.json()
        return body if isinstance(body, list) else [body]
    return [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]


def test_each_request_of_a_legacy_session_sees_its_own_post() -> None:
    with ServerThread(_load(SERVER).http_app()) as srv, httpx.Client(timeout=10) as http:
        sid = _open(http, srv.url, "2025-11-25")
        for i, tenant in enumerate(("a", "b")):
            r = http.post(
                srv.url + "?n=" + str(i),
                json=rpc(i + 1, "tools/call", {"name": "http_info", "arguments": {}}),
                headers=session_headers(sid, "2025-11-25", **{"x-tenant": tenant}),
            )
            (answer,) = _results(r)
            data = answer["result"]["structuredContent"]
            assert data["tenant"] == tenant and data["middleware"] == tenant and data["query"] == {"n": str(i)}

        sid = _open(http, srv.url, "2025-03-26")  # batches: queued for the session's reader
        batch = [rpc(k, "tools/call", {"name": "http_info", "arguments": {}}) for k in (10, 11)]
        r = http.post(srv.url, json=batch, headers=session_headers(sid, "2025-03-26", **{"x-tenant": "batch"}))
        answers = _results(r)
        assert sorted(a["id"] for a in answers) == [10, 11]
        for a in answers:
            # 2025-03-26 has no structuredContent: the JSON text
            data = json.loads(a["result"]["content"][0]["text"])
            assert data["tenant"] == "batch" and data["authorization"] is None
