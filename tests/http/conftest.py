"""Fixtures for the Streamable HTTP tests: a real uvicorn server on an ephemeral loopback port
(``tests.support.http.ServerThread``) serving ``tests/http/app.py``, and small httpx helpers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mcpio._protocol._http import SSEEvent, SSEParser
from tests.http.app import make_server
from tests.support.http import ServerThread

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT_BOTH = "application/json, text/event-stream"


@pytest.fixture
def serve() -> Iterator[Callable[..., ServerThread]]:
    """``serve(**http_app_options)`` starts a fresh server and returns its ServerThread."""
    started: list[ServerThread] = []

    def start(path: str = "/mcp", **options: Any) -> ServerThread:
        server = make_server()
        app = server.http_app(path, **options)
        srv = ServerThread(app, path).__enter__()
        srv.mcp_server = server  # type: ignore[attr-defined]
        srv.mcp_app = app  # type: ignore[attr-defined]
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.__exit__(None, None, None)


@pytest.fixture
def srv(serve: Callable[..., ServerThread]) -> ServerThread:
    return serve()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def rpc(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def initialize(http: httpx.Client, url: str, version: str = LEGACY, capabilities: dict | None = None) -> str:
    """Open a legacy session; returns its id (after notifications/initialized)."""
    r = http.post(
        url,
        json=rpc(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ),
        headers={"accept": ACCEPT_BOTH},
    )
    assert r.status_code == 200, r.text
    assert r.json()["result"]["protocolVersion"] == version
    sid = r.headers["mcp-session-id"]
    r = http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session_headers(sid, version)
    )
    assert r.status_code == 202
    return sid


def session_headers(sid: str, version: str = LEGACY, **extra: str) -> dict[str, str]:
    return {"mcp-session-id": sid, "mcp-protocol-version": version, "accept": ACCEPT_BOTH, **extra}


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    out = {"mcp-method": method, "mcp-protocol-version": MODERN, "accept": ACCEPT_BOTH}
    if name is not None:
        out["mcp-name"] = name
    out.update(extra)
    return out


def modern(id: Any, method: str, params: dict[str, Any] | None = None, meta: dict | None = None) -> dict[str, Any]:
    p = dict(params or {})
    p["_meta"] = {**META, **(meta or {})}
    return rpc(id, method, p)


def read_events(response: httpx.Response, until: Callable[[list[SSEEvent]], bool] | None = None) -> list[SSEEvent]:
    """SSE events of a streamed response, until the stream ends or ``until(events)`` holds."""
    parser = SSEParser()
    events: list[SSEEvent] = []
    if response.is_stream_consumed:  # a non-streamed response: its body is already here
        return parser.feed(response.content)
    for chunk in response.iter_raw():
        events += parser.feed(chunk)
        if until is not None and until(events):
            break
    return events


def messages(events: list[SSEEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if e.data]
