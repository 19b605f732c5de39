"""Running ``harden_server.py`` (a real HTTP server process) and talking to it with httpx."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.support.http import free_port, wait_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ACCEPT_BOTH = "application/json, text/event-stream"


class Spawned:
    def __init__(self, url: str, proc: subprocess.Popen, stderr: Path) -> None:
        self.url = url
        self.proc = proc
        self.stderr_path = stderr

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@contextlib.contextmanager
def spawn(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Spawned]:
    port = free_port()
    err = tmp_path / f"server-{port}.stderr"
    with open(err, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "harden_server.py"), "--port", str(port), *args],
            stdout=subprocess.DEVNULL,
            stderr=out,
            stdin=subprocess.DEVNULL,
            cwd=str(ROOT),
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
    try:
        wait_port(port, proc=proc)
        yield Spawned(f"http://127.0.0.1:{port}/mcp", proc, err)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rpc(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(name: str, id: Any = 1, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return rpc(id, "tools/call", {"name": name, "arguments": arguments or {}, **params})


def headers(sid: str, version: str) -> dict[str, str]:
    return {"mcp-session-id": sid, "mcp-protocol-version": version, "accept": ACCEPT_BOTH}


def open_session(http: httpx.Client, url: str, version: str = "2025-11-25") -> str:
    r = http.post(
        url,
        json=rpc(
            0,
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        ),
        headers={"accept": ACCEPT_BOTH},
    )
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers(sid, version))
    assert r.status_code == 202
    return sid


def tool(
    http: httpx.Client, url: str, sid: str, name: str, version: str = "2025-11-25", id: Any = 1, **params: Any
) -> dict[str, Any]:
    r = http.post(url, json=call(name, id, **params), headers=headers(sid, version))
    assert r.status_code == 200, r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        import json

        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return json.loads(data[-1])
    return r.json()


MODERN = "2026-07-28"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def modern(
    http: httpx.Client,
    url: str,
    id: Any,
    method: str,
    params: dict[str, Any] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One 2026-07-28 request (headers mirrored from the body); returns the JSON-RPC answer."""
    p = dict(params or {})
    p["_meta"] = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities or {}}
    hdrs = {"mcp-method": method, "mcp-protocol-version": MODERN, "accept": ACCEPT_BOTH}
    name = p.get("name", p.get("taskId"))
    if name is not None:
        hdrs["mcp-name"] = name
    r = http.post(url, json=rpc(id, method, p), headers=hdrs)
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r.json()
