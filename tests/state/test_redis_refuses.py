"""Redis that answers but refuses (issue 32, item 8): full (``maxmemory`` with ``noeviction``),
read-only (a replica, as after a failover), or gone mid-stream. A real ``redis-server`` of its
own and a real server process (``shared_server.py``) on 127.0.0.1: ``initialize`` gets the
documented 503 with ``Retry-After`` at once (never a hang, never a 500), a call whose SSE
stream is open when Redis starts refusing still gets its answer on that stream, and service
resumes by itself when Redis does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.support.http import free_port, wait_port
from tests.support.redis import RedisServer

SERVER = [sys.executable, "tests/state/shared_server.py"]
VERSION = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream"}
INIT = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


@pytest.fixture
def served() -> Iterator[tuple[str, RedisServer, redis.Redis]]:
    """(the MCP endpoint, its own Redis, a plain client of that Redis)."""
    own = RedisServer()
    own.start()
    port = free_port()
    proc = subprocess.Popen([*SERVER, str(port), own.url], stdin=subprocess.DEVNULL)
    db = redis.Redis.from_url(own.url)
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp", own, db
    finally:
        proc.terminate()
        proc.wait(30)
        db.close()
        own.close()


def initialize(c: httpx.Client, url: str) -> httpx.Response:
    return c.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}, headers=ACCEPT)


def open_session(c: httpx.Client, url: str) -> dict[str, str]:
    r = initialize(c, url)
    assert r.status_code == 200, r.text
    headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
    assert (
        c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers).status_code == 202
    )
    return headers


def sse_messages(r: httpx.Response) -> Iterator[dict]:
    data = ""
    for line in r.iter_lines():
        if line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield json.loads(data)
            data = ""


def full(db: redis.Redis) -> None:
    db.config_set("maxmemory-policy", "noeviction")
    db.config_set("maxmemory", 1)  # every write: OOM command not allowed when used memory > 'maxmemory'


def not_full(db: redis.Redis) -> None:
    db.config_set("maxmemory", 0)


def read_only(db: redis.Redis) -> None:
    db.replicaof("127.0.0.1", free_port())  # a replica of a primary that is not there: READONLY


def primary(db: redis.Redis) -> None:
    db.replicaof("NO", "ONE")


FAULTS = {
    "oom": (full, not_full, "Redis is out of memory"),
    "readonly": (read_only, primary, "Redis is a read-only replica"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_refusing_redis_gets_503_answers_the_open_stream_and_recovers(served, tmp_path: Path, fault: str) -> None:
    url, _own, db = served
    fail, heal, says = FAULTS[fault]
    gate = tmp_path / "gate"
    with httpx.Client(timeout=20) as c:
        session = open_session(c, url)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "staged", "arguments": {"gate": str(gate)}, "_meta": {"progressToken": "p"}},
        }
        with c.stream("POST", url, json=call, headers=session) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            messages = sse_messages(r)
            for step in (1, 2):  # the first stage's progress: stored, with event ids
                assert next(messages)["params"]["progress"] == step
            fail(db)
            try:
                # A new session needs its record written: refused at once, the documented way.
                started = time.monotonic()
                refused = initialize(c, url)
                assert refused.status_code == 503, refused.text
                assert refused.headers["retry-after"] == "2"
                error = refused.json()["error"]
                assert says in error["message"] and "the request itself is fine" in error["message"]
                assert time.monotonic() - started < 10
                # The open stream goes on (its events can no longer be stored) up to its answer.
                (tmp_path / "gate.1").touch()
                (tmp_path / "gate.2").touch()
                rest = list(messages)
            finally:
                heal(db)
        assert [m["params"]["progress"] for m in rest[:-1]] == [3, 4, 5, 6]
        assert rest[-1]["id"] == 7 and rest[-1]["result"]["content"][0]["text"] == "staged"

        # Redis serves again: so does the server, by itself.
        deadline = time.monotonic() + 10
        while (r := initialize(c, url)).status_code != 200:
            assert r.status_code == 503 and time.monotonic() < deadline, r.text
            time.sleep(0.1)
        again = open_session(c, url)
        answer = c.post(
            url, json={"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "where"}}, headers=again
        )
        assert answer.status_code == 200 and "result" in answer.text


def test_redis_killed_mid_stream_the_open_call_is_answered_and_the_server_recovers(served, tmp_path: Path) -> None:
    url, own, _db = served
    gate = tmp_path / "gate"
    with httpx.Client(timeout=20) as c:
        session = open_session(c, url)
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "staged", "arguments": {"gate": str(gate)}, "_meta": {"progressToken": "p"}},
        }
        with c.stream("POST", url, json=call, headers=session) as r:
            messages = sse_messages(r)
            assert [next(messages)["params"]["progress"] for _ in range(2)] == [1, 2]
            own.stop()  # Redis dies with the stream open
            refused = initialize(c, url)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "2", refused.text
            assert "Redis is unreachable" in refused.json()["error"]["message"]
            (tmp_path / "gate.1").touch()
            (tmp_path / "gate.2").touch()
            rest = list(messages)
        assert rest[-1]["id"] == 3 and rest[-1]["result"]["content"][0]["text"] == "staged"
        own.start()  # same port, empty
        deadline = time.monotonic() + 15
        while (r := initialize(c, url)).status_code != 200:
            assert r.status_code == 503 and time.monotonic() < deadline, r.text
            time.sleep(0.1)
