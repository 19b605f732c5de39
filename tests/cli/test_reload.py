"""``mcpio run FILE --reload``: the host keeps one stdio connection while the server restarts on
every change to a .py file; the legacy session goes on (initialize replayed), list_changed tells
the host, a broken save is reported per request until the next one fixes it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.stdio_peer import StdioPeer

V1 = """from mcpio import Server
server = Server("reloading")

@server.tool
def first() -> str:
    return "one"
"""
V2 = (
    V1
    + """
@server.tool
def second() -> str:
    return "two"
"""
)
SLOW = (
    V1
    + """
import asyncio

@server.tool
async def slow() -> str:
    await asyncio.sleep(60)
    return "late"
"""
)


def save(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a visible change even on coarse clocks


def names(p: StdioPeer) -> list[str]:
    return [t["name"] for t in p.call("tools/list")["tools"]]


def changed(p: StdioPeer) -> dict:
    return p.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed", timeout=30)


@pytest.fixture
def app(tmp_path):
    path = tmp_path / "app.py"
    save(path, V1)
    with StdioPeer.spawn([sys.executable, "-m", "mcpio", "run", str(path), "--reload"]) as p:
        p.initialize("2025-11-25")
        yield p, path
        assert p.close() == 0


def test_a_save_restarts_the_server_behind_the_same_connection(app):
    p, path = app
    assert names(p) == ["first"]
    save(path, V2)
    changed(p)
    assert names(p) == ["first", "second"]  # no new initialize from the host: it was replayed
    assert p.call("tools/call", {"name": "second", "arguments": {}})["content"][0]["text"] == "two"
    assert "restarted (app.py changed)" in p.stderr()


def test_a_broken_save_is_reported_until_the_next_one(app):
    p, path = app
    save(path, V1 + "\ndef broken(:\n")
    log = p.wait_for(lambda m: m.get("method") == "notifications/message", timeout=30)
    assert log["params"]["level"] == "error" and "SyntaxError" in log["params"]["data"]
    reply = p.request("tools/list")
    assert reply["error"]["code"] == -32603 and "SyntaxError" in reply["error"]["message"]
    save(path, V2)
    changed(p)
    assert names(p) == ["first", "second"]


def test_a_request_in_flight_during_a_restart_gets_an_error(app):
    p, path = app
    save(path, SLOW)
    changed(p)
    msg = p.request_msg("tools/call", {"name": "slow", "arguments": {}})
    p.send(msg)
    p.ping()  # the call has reached the server
    save(path, V2)
    reply = p.response(msg["id"], timeout=30)
    assert reply["error"]["code"] == -32603 and "send it again" in reply["error"]["message"]
    changed(p)
    assert names(p) == ["first", "second"]


def test_a_pyw_server_restarts_when_it_is_saved(tmp_path):
    """A ``.pyw`` file is a Python source ``mcpio run`` serves (``_pyfile.SOURCE_SUFFIXES``): its
    saves restart it too."""
    path = tmp_path / "app.pyw"
    save(path, V1)
    with StdioPeer.spawn([sys.executable, "-m", "mcpio", "run", str(path), "--reload"]) as p:
        p.initialize("2025-11-25")
        assert names(p) == ["first"]
        save(path, V2)
        changed(p)
        assert names(p) == ["first", "second"]
        assert "restarted (app.pyw changed)" in p.stderr()
        assert p.close() == 0
